/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tcp: a TCP-like congestion window (NewReno) on the RC transport's ACKs, NAKs and
 * timeouts: the baseline the sources compare against (IA-TCP: "TCP SACK" and "1-win
 * TCP"; FFDTCP: "TCP"; both in NS-2).
 *
 * Sources: RFC 5681 (slow start, congestion avoidance, the loss window), RFC 6582
 * (NewReno's recovery: one halving per window of losses), RFC 3465 (byte counting),
 * RFC 6298 (the retransmission timer and its backoff). The window core is win_core.c:
 *
 *   start     cwnd = iw MSS (MSS = the path MTU), ssthresh = ssthresh (0 = none)
 *   ACK       cwnd < ssthresh:  cwnd += bytes acknowledged              (slow start)
 *             otherwise:        cwnd += MSS * bytes acknowledged / cwnd  (+1 MSS per RTT)
 *   NAK       ssthresh = max(cwnd / 2, 2 MSS), cwnd = ssthresh, once per window of losses
 *   timeout   ssthresh = max(cwnd / 2, 2 MSS) (the first of a row), cwnd = 1 MSS
 *   out       bytes in flight <= cwnd (cc->cap_bytes); no pacing (the line rate)
 *
 * The retransmission timer and its backoff are the transport's: the RC's local ACK
 * timeout (4.096 us << timeout, doubled after each expiry up to 8x; the bench's 67 ms
 * against NS-2's RTO_min of 200 ms), which resends from the oldest unacknowledged PSN.
 * The window reacts to each expiry.
 *
 * Go-back-N, and what SACK would change. An RC receiver drops every packet after a gap
 * and NAKs the gap once; the sender resends everything from the lost PSN. So a loss in a
 * window of W packets costs up to W - 1 retransmissions of packets that had arrived, and
 * the halved window restarts behind them. With SACK (the sources' "TCP SACK") the receiver
 * keeps the packets after the gap and the sender resends only the holes, keeping the pipe
 * at the halved window (RFC 6675): a loss costs one packet's worth and a round trip, and
 * several losses in one window are repaired in one recovery. Under an incast overflow,
 * where a window loses many packets, go-back-N also resends the survivors into the same
 * full buffer; timeouts come when a NAK or the resent tail is itself lost.
 *
 * Deviations, and why:
 *  - Byte counting without RFC 3465's per-ACK limit (L = 2 MSS): the RC acknowledges up to
 *    16 packets with one ACK (and a message's last), so a limit per ACK would grow the
 *    window by far less than the doubling per RTT slow start is.
 *  - No growth while less than half the window is in flight (RFC 7661's idea): the RC's
 *    own window (rxe: 128 packets) or the application may limit instead, and a window
 *    that is never used would grow without bound.
 *  - The initial window defaults to 2 packets, NS-2's windowInit_ (the sources' simulator);
 *    RFC 3390 gives 3-4 and RFC 6928 10 (iw=).
 *
 * Parameters: iw (packets, 1..4096, 2), max_cwnd (packets, 0 = none; iw=1,max_cwnd=1 is
 * the sources' 1-win TCP), ssthresh (bytes, 0 = none).
 */
#include <stddef.h>

#include "cc_algs.h"
#include "win_core.h"

struct tcp_params {
	struct win_params win;
};

static const struct cc_param tcp_params_table[] = {
	WIN_PARAM_ENTRIES(offsetof(struct tcp_params, win), 2),
	{ .name = NULL },
};

struct tcp_state {
	struct cc cc;
	struct win w;
};

static struct tcp_state *to_tcp(struct cc *cc)
{
	return (struct tcp_state *)cc;
}

static int tcp_check(const void *params, const struct cc_path *path, char *err, size_t errlen)
{
	(void)path;
	return win_check("tcp", &((const struct tcp_params *)params)->win, err, errlen);
}

static void tcp_init(struct cc *cc, const void *params, qp_time_ns now)
{
	struct tcp_state *s = to_tcp(cc);

	(void)now;
	win_init(&s->w, &((const struct tcp_params *)params)->win, &cc->path);
	win_publish(&s->w, cc);
}

static unsigned tcp_on_ack(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct tcp_state *s = to_tcp(cc);

	win_on_ack(&s->w, &ev->u.ack, false, now);
	return win_publish(&s->w, cc);
}

static unsigned tcp_on_nak(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct tcp_state *s = to_tcp(cc);

	win_on_nak(&s->w, &ev->u.loss, now);
	return win_publish(&s->w, cc);
}

static unsigned tcp_on_timeout(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	struct tcp_state *s = to_tcp(cc);

	win_on_timeout(&s->w, &ev->u.loss, now);
	return win_publish(&s->w, cc);
}

#define TCP_C(f, doc) { #f, offsetof(struct tcp_state, w.stats.f), doc }
static const struct cc_counter tcp_counters[] = {
	TCP_C(halvings, "NAKs that halved the window (one per window of losses)"),
	TCP_C(naks_held, "NAKs inside a recovery: no further cut"),
	TCP_C(timeouts, "retransmission timeouts: the window to one packet"),
	TCP_C(ss_exits, "slow starts ended by a loss"),
	{ .name = NULL },
};

const struct cc_ops cc_tcp_ops = {
	.name = "tcp",
	.summary = "TCP-like window (NewReno): slow start, +1 MSS per RTT, halving on a NAK, "
		   "one packet after a timeout",
	.params = tcp_params_table,
	.params_size = sizeof(struct tcp_params),
	.state_size = sizeof(struct tcp_state),
	.check = tcp_check,
	.init = tcp_init,
	.on = {
		[CC_EV_ACKED] = tcp_on_ack,
		[CC_EV_NAK] = tcp_on_nak,
		[CC_EV_TIMEOUT] = tcp_on_timeout,
	},
	.counters = tcp_counters,
};
