/* The incast runner (soft backend): see incast.h.
 *
 * One thread, one loop over N+1 emulated hosts. Each pass: read the clock once; progress
 * the contexts that have input (epoll) or a due deadline; poll the senders' completions
 * and post their next WRs (non-blocking QPs: the pacing gate says when); run the agents;
 * sample rates every millisecond. When nothing is due within a millisecond the loop
 * sleeps in epoll_wait; otherwise it spins (machine-facts: sleeping costs ~40-80 us of
 * lateness, which would distort a 1 Gb/s pacer).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "qpace/host.h"
#include "incast.h"
#include "monitor.h"
#include "plot.h"
#include "series.h"
#include "swproc.h"

#define INCAST_WR_BYTES (64u * 1024)       /* per WRITE, as perftest's default size */
#define INCAST_SQ_DEPTH 64u
#define INCAST_QP_TIMEOUT 14               /* local ACK timeout 4.096 us << 14 = 67 ms:
					     * perftest's default, beyond a full 512 KiB queue */
#define INCAST_GAP_NS (2 * QP_NS_PER_MS)   /* between rounds: queues drain */
#define INCAST_SAMPLE_NS QP_NS_PER_MS
#define INCAST_SPIN_NS QP_NS_PER_MS
#define INCAST_SERIES_CAP 60000u           /* 1 ms samples: a minute of rounds */
#define INCAST_HPCC_ETA 0.95               /* HPCC's and ACC's eta, given to them and used
					     * for their W_AI (it is their default too) */

static volatile sig_atomic_t incast_stop;

static void on_sigint(int sig)
{
	(void)sig;
	incast_stop = 1;
}

struct flow_state {
	struct qp *qp;               /* sender's QP */
	struct qp *rqp;              /* the receiver's QP for it */
	uint64_t posted, acked;
	qp_time_ns done_ns;
	bool active, lost;
	bool registered;             /* both ends known to their agents (this round) */
	struct qp_stats base;        /* counters at the round's start */
};

struct incast {
	const struct bench_conf *c;
	uint64_t senders, bytes;
	struct host *hosts;    /* [0] receives */
	struct flow_state *fl;       /* [1..N] */
	uint8_t *rbuf, *sbuf;
	struct qp_mr *rmr;
	struct qp_mr **smr;
	int ep;
	qp_time_ns base_rtt_ns;
	const char *cc;              /* the senders' algorithm */
	struct incast_feedback fb;   /* what it asks of the switch and the senders */
	struct series rates;
	qp_rate_bps *row;
	qp_time_ns next_sample_ns;
	bool registered;             /* the agents know the QPs (after the RTT probe) */
	qp_time_ns last_pass_ns, max_gap_ns;   /* the loop's lateness (a busy machine) */
	struct monitor mon;          /* qpacectl's view of the hosts' agents */
	struct agent **agents;
};

/* HPCC (and ACC, which is HPCC underneath) with the settings of HPCC's own experiments,
 * max_stage 0 (run.py --mi 0) and W_AI from the paper's rule (below), and a rate floor at
 * which a flow still sends one packet, and so hears one INT report, every 10 base RTTs
 * (the reference's line/1000 is that at 100 Gb/s and ~8 us; at 250 Mb/s and ~0.5 ms a
 * flow at line/1000 hears from the network once per ~33 ms). */
static void incast_hpcc_params(const struct incast *x, qp_rate_bps line_bps, const char *extra,
			       char *buf, size_t len)
{
	qp_rate_bps floor_bps =
		(qp_rate_bps)((double)x->c->mtu_bytes * 8.0 * 1e9 / (10.0 * (double)x->base_rtt_ns));
	/* W_AI = W_init * (1 - eta) / N (HPCC paper, section 3.3) as a rate: N flows that
	 * each add it fill the eta headroom in one step. The default, line/2500, suits many
	 * more flows than this incast has; with it a flow cut to the floor took ~100 ms to
	 * come back (fairness rests on the additive step alone). */
	qp_rate_bps ai_bps =
		(qp_rate_bps)((1.0 - INCAST_HPCC_ETA) * (double)line_bps / (double)x->senders);

	if (floor_bps < x->c->link_bps / 1000)
		floor_bps = x->c->link_bps / 1000;
	if (floor_bps > x->c->link_bps / 4)
		floor_bps = x->c->link_bps / 4;
	snprintf(buf, len, "eta=%g,max_stage=0,min_rate=%llu,rate_ai=%llu%s%s", INCAST_HPCC_ETA,
		 (unsigned long long)floor_bps, (unsigned long long)(ai_bps ? ai_bps : 1),
		 *extra ? "," : "", extra);
}

/* Base RTT of the modelled network: data out over two links and the ACK back, one
 * MTU-sized frame serialized at each hop, plus what the loopback path really adds. */
static qp_time_ns incast_base_rtt(const struct bench_conf *c)
{
	return 4 * c->delay_ns + 2 * qp_tx_time_ns(c->mtu_bytes + STATS_ROCE_PKT_OVERHEAD,
						    c->link_bps) +
	       2 * qp_tx_time_ns(64, c->link_bps) + 30 * QP_NS_PER_US;
}

static int incast_hosts(struct incast *x, const char *cc, bool credits, bool cnp,
			const char *swhost, unsigned base, char *err, size_t errlen)
{
	qp_time_ns now = qp_now_ns();
	int rc;

	x->ep = epoll_create1(EPOLL_CLOEXEC);
	if (x->ep < 0)
		return qp_errmsg(-errno, err, errlen, "epoll: %s", strerror(errno));
	for (uint64_t i = 0; i <= x->senders; i++) {
		char opts[160], e[300];
		snprintf(opts, sizeof(opts), "attach=%s:%u,ip=10.0.0.%u,window=%" PRIu64
			 ",mtu=%" PRIu64, swhost, base + 2 * (unsigned)i, (unsigned)i + 1,
			 x->c->window_pkts, x->c->mtu_bytes);
		struct host_conf hc = { .options = opts, .cc = cc, .credits = credits,
					      .cnp_from_notice = cnp, .seed = x->c->seed,
					      .quiet = !x->c->verbose,
					      .key = x->c->have_key ? x->c->key : NULL,
					      .clock_offset_ns = qp_wall_offset_ns() };
		if ((rc = host_open(&x->hosts[i], &hc, now, e, sizeof(e))))
			return qp_errmsg(rc, err, errlen, "host %" PRIu64 " (%s): %s", i, opts, e);
		int fd = qp_ctx_fd(x->hosts[i].ctx);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };
		if (fd >= 0 && epoll_ctl(x->ep, EPOLL_CTL_ADD, fd, &ev))
			return qp_errmsg(-errno, err, errlen, "epoll_ctl: %s", strerror(errno));
	}
	return 0;
}

/* Create and connect each sender's QP with its receiver QP, in process (both ends are
 * ours, so the exchange is a copy), and register both with their agents. */
static int incast_connect(struct incast *x, char *err, size_t errlen)
{
	size_t wr = x->bytes < INCAST_WR_BYTES ? x->bytes : INCAST_WR_BYTES;
	struct qp_attr qa = { .sq_depth = INCAST_SQ_DEPTH, .rq_depth = 16,
			      .mtu_bytes = (uint32_t)x->c->mtu_bytes, .timeout = INCAST_QP_TIMEOUT,
			      .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL,
			      /* A NIC paces packets: one packet per piece, at most one more
			       * after idling. 4 KiB pieces put four back to back on a path
			       * whose BDP is ~15 packets, a queue HPCC reads as congestion. */
			      .gate = { .chunk_bytes = x->c->mtu_bytes,
					.burst_bytes = x->c->mtu_bytes } };
	struct host *rh = &x->hosts[0];
	char e[300] = "";
	int rc;

	x->rbuf = calloc(1, wr);
	x->sbuf = calloc(1, wr);
	x->smr = calloc(x->senders + 1, sizeof(*x->smr));
	if (!x->rbuf || !x->sbuf || !x->smr)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	memset(x->sbuf, 0x5a, wr);
	rc = qp_mr_reg(rh->ctx, x->rbuf, wr, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE,
		       &x->rmr);
	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "receiver: cannot register memory");
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct host *sh = &x->hosts[i];
		struct flow_state *f = &x->fl[i];
		struct qp_conn_info li, ri;
		if ((rc = qp_mr_reg(sh->ctx, x->sbuf, wr, QP_ACCESS_LOCAL_WRITE, &x->smr[i])) < 0 ||
		    (rc = qp_create(rh->ctx, &qa, &f->rqp, e, sizeof(e))) < 0 ||
		    (rc = qp_create(sh->ctx, &qa, &f->qp, e, sizeof(e))) < 0 ||
		    (rc = qp_local_info(f->rqp, x->rmr, &ri)) < 0 ||
		    (rc = qp_local_info(f->qp, NULL, &li)) < 0 ||
		    (rc = qp_connect(f->rqp, &li, e, sizeof(e))) < 0 ||
		    (rc = qp_connect(f->qp, &ri, e, sizeof(e))) < 0)
			return qp_errmsg(rc, err, errlen, "sender %" PRIu64 ": %s", i, e);
	}
	return 0;
}

/* Register both ends of every flow with their hosts' agents, at the start of each round:
 * each round's flows are new flows to the controllers (HPCC starts a flow at line rate)
 * and to the receiver's credit pacer (n = the flows still sending; a finished flow is
 * unregistered, so its share goes to the others and no credit piles up between rounds).
 * The line rate they get is
 * the link's payload rate: the pacing gate meters payload bytes, so a sender at the
 * link's bit rate would put 1 + 58/MTU of it on the wire (5.7% at MTU 1024), and a credit
 * pacer granting C * RTT of payload would overfill the port it paces. */
static int incast_register(struct incast *x, char *err, size_t errlen)
{
	qp_time_ns now = qp_now_ns();
	qp_rate_bps line = (qp_rate_bps)stats_payload_bps(x->c->link_bps, (uint32_t)x->c->mtu_bytes,
							  STATS_ROCE_PKT_OVERHEAD);
	char e[300], params[160];
	int rc;
	/* The algorithm's defaults (and the agent's default algorithm, which is it) unless
	 * it takes HPCC's settings or runs with parameters of its own. */
	bool own = x->fb.hpcc_settings || x->fb.params;

	if (x->fb.hpcc_settings)
		incast_hpcc_params(x, line, x->fb.params ? x->fb.params : "", params, sizeof(params));
	else if (x->fb.params)
		snprintf(params, sizeof(params), "%s", x->fb.params);
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		if (f->lost || f->registered)
			continue;
		f->registered = true;
		if ((rc = host_register(&x->hosts[i], f->qp, line, x->base_rtt_ns, false,
					      own ? x->cc : NULL, own ? params : NULL, now, e,
					      sizeof(e))) ||
		    (rc = host_register(&x->hosts[0], f->rqp, line, x->base_rtt_ns, true,
					      "none", NULL, now, e, sizeof(e))))
			return qp_errmsg(rc, err, errlen, "sender %" PRIu64 ": agent: %s", i, e);
	}
	return 0;
}

/* Post the flow's next WRs while the gate and the send queue allow. */
static void flow_post(struct incast *x, struct flow_state *f, uint64_t i)
{
	size_t wr = x->bytes < INCAST_WR_BYTES ? x->bytes : INCAST_WR_BYTES;

	while (f->active && f->posted < x->bytes) {
		uint32_t len = (uint32_t)(x->bytes - f->posted < wr ? x->bytes - f->posted : wr);
		struct qp_wr w = { .opcode = QP_OP_WRITE, .wr_id = len, .mr = x->smr[i],
				   .addr = x->sbuf, .length = len,
				   .remote_addr = f->qp->remote.addr, .rkey = f->qp->remote.rkey,
				   .flags = QP_WR_SIGNALED };
		int rc = qp_post_send(f->qp, &w);
		if (rc == -EAGAIN || rc == -ENOMEM || rc == -ENOSPC)
			return;   /* gate closed, or the queue full until completions are polled */
		if (rc < 0) {
			f->lost = true;
			f->active = false;
			return;
		}
		f->posted += len;
	}
}

/* The flow ended (done, lost or out of time): both ends leave their agents. */
static void flow_leave(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now)
{
	if (!f->registered)
		return;
	host_unregister(&x->hosts[i], f->qp->qpn, now);
	host_unregister(&x->hosts[0], f->rqp->qpn, now);
	f->registered = false;
}

static void flow_poll(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now)
{
	struct qp_wc wc[32];
	int n = qp_poll(f->qp, wc, 32);

	for (int k = 0; k < n; k++) {
		if (wc[k].status != QP_WC_SUCCESS) {
			if (!f->lost)
				fprintf(stderr, "qpace-bench: sender %" PRIu64 " (10.0.0.%u) lost: %s; "
					"the other flows go on\n", i, (unsigned)i + 1,
					qp_wc_status_str(wc[k].status));
			f->lost = true;
			f->active = false;
			flow_leave(x, f, i, now);
			return;
		}
		f->acked += wc[k].wr_id;
	}
	if (f->active && f->acked >= x->bytes) {
		f->active = false;
		f->done_ns = now;
		flow_leave(x, f, i, now);
	}
}

static void incast_sample(struct incast *x, qp_time_ns now)
{
	if (!x->registered || now < x->next_sample_ns)
		return;
	x->next_sample_ns = now + INCAST_SAMPLE_NS;
	monitor_serve(&x->mon);
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct qp_stats st;
		struct flow_state *f = &x->fl[i];
		x->row[i - 1] = f->registered ? host_rate(&x->hosts[i], f->qp->qpn) : 0;
		if (!f->registered)
			continue;
		qp_get_stats(f->qp, &st);
		agent_qp_stats(x->hosts[i].agent, f->qp->qpn, st.tx_bytes, st.retransmissions);
	}
	series_add(&x->rates, now, x->row);
}

/* One pass of the loop; returns how long it may sleep. */
static void incast_pass(struct incast *x, bool round_on)
{
	struct epoll_event ev[64];
	qp_time_ns now = qp_now_ns(), next = now + INCAST_SAMPLE_NS;
	uint64_t nh = x->senders + 1;

	for (uint64_t i = 0; i < nh; i++)
		next = qp_time_min(next, host_deadline(&x->hosts[i]));
	int timeout_ms = next > now + INCAST_SPIN_NS ? (int)((next - now) / QP_NS_PER_MS) : 0;
	int n = epoll_wait(x->ep, ev, 64, timeout_ms);
	now = qp_now_ns();
	/* Time beyond what it asked to sleep: the machine did not run this process. */
	qp_time_ns late = qp_time_since(now, x->last_pass_ns) - (qp_time_ns)timeout_ms * QP_NS_PER_MS;
	if (x->last_pass_ns && round_on && late > x->max_gap_ns && late < QP_TIME_NEVER / 2)
		x->max_gap_ns = late;
	x->last_pass_ns = now;
	for (int k = 0; k < n; k++)
		qp_ctx_progress(x->hosts[ev[k].data.u64].ctx, now);
	for (uint64_t i = 0; i < nh; i++) {
		struct host *h = &x->hosts[i];
		if (qp_ctx_deadline(h->ctx) <= now)
			qp_ctx_progress(h->ctx, now);
		if (i > 0 && round_on) {
			flow_poll(x, &x->fl[i], i, now);
			flow_post(x, &x->fl[i], i);
		}
		host_service(h, now);
	}
	incast_sample(x, now);
}

/* The unloaded round trip of this emulation, as HPCC's T must be: a one-packet WRITE per
 * sender, one at a time, from post to completion (includes what the userspace hosts and
 * switch add to the model's links). Median of the senders; at least the model's RTT. */
static qp_time_ns incast_measure_rtt(struct incast *x)
{
	qp_time_ns rtt[BENCH_MAX_SENDERS], model = x->base_rtt_ns;
	uint64_t n = 0;

	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		struct qp_wr w = { .opcode = QP_OP_WRITE, .wr_id = 0, .mr = x->smr[i],
				   .addr = x->sbuf, .length = 64, .remote_addr = f->qp->remote.addr,
				   .rkey = f->qp->remote.rkey, .flags = QP_WR_SIGNALED };
		for (int k = 0; k < 3; k++) {           /* the first resolves ARP */
			qp_time_ns t0 = qp_now_ns(), limit = t0 + 100 * QP_NS_PER_MS;
			struct qp_wc wc;
			int got = 0;
			if (qp_post_send(f->qp, &w) < 0)
				break;
			while (!got && qp_now_ns() < limit) {
				incast_pass(x, false);
				got = qp_poll(f->qp, &wc, 1);
			}
			if (got == 1 && wc.status == QP_WC_SUCCESS && k > 0 && n < BENCH_MAX_SENDERS)
				rtt[n++] = qp_now_ns() - t0;
		}
	}
	if (n == 0)
		return model;
	for (uint64_t a = 1; a < n; a++)                /* insertion sort: n <= 126 */
		for (uint64_t b = a; b > 0 && rtt[b - 1] > rtt[b]; b--) {
			qp_time_ns t = rtt[b]; rtt[b] = rtt[b - 1]; rtt[b - 1] = t;
		}
	return rtt[n / 2] > model ? rtt[n / 2] : model;
}

static bool round_busy(const struct incast *x)
{
	for (uint64_t i = 1; i <= x->senders; i++)
		if (x->fl[i].active)
			return true;
	return false;
}

static int incast_round(struct incast *x, uint32_t r, struct incast_flow *out,
			qp_time_ns *round_ns, char *err, size_t errlen)
{
	int rc = incast_register(x, err, errlen);

	if (rc)
		return rc;
	x->last_pass_ns = 0;   /* lateness is between passes of a round, not the setup before */
	qp_time_ns start = qp_now_ns(), limit = start + x->c->round_timeout_ns;

	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		f->posted = f->acked = 0;
		f->done_ns = 0;
		f->active = !f->lost;
		qp_get_stats(f->qp, &f->base);
	}
	while (round_busy(x) && !incast_stop && qp_now_ns() < limit)
		incast_pass(x, true);
	qp_time_ns end = start;
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		struct qp_stats st;
		qp_get_stats(f->qp, &st);
		struct incast_flow *o = &out[i - 1];
		*o = (struct incast_flow){ .round = r, .sender = (uint32_t)i, .bytes = x->bytes,
					   .done = f->done_ns != 0,
					   .retransmits = st.retransmissions - f->base.retransmissions,
					   .timeouts = st.timeouts - f->base.timeouts };
		if (o->done) {
			o->fct_ns = f->done_ns - start;
			end = end > f->done_ns ? end : f->done_ns;
		} else {
			f->active = false;
			end = qp_now_ns();
		}
		flow_leave(x, f, i, end);
	}
	*round_ns = end - start;
	for (qp_time_ns gap = qp_now_ns() + INCAST_GAP_NS; qp_now_ns() < gap && !incast_stop;)
		incast_pass(x, false);
	return 0;
}

/* -v: what the agents saw, summed over the hosts (nonzero counters only). */
static void incast_agent_counters(const struct incast *x)
{
	uint64_t sum[AGENT_C_COUNT] = { 0 }, cnps = 0, sent = 0, failed = 0;

	for (uint64_t i = 0; i <= x->senders; i++) {
		const uint64_t *c = agent_counters(x->hosts[i].agent);
		sent += x->hosts[i].tx_sent;
		failed += x->hosts[i].tx_failed;
		for (int k = 0; k < AGENT_C_COUNT; k++)
			sum[k] += c[k];
		cnps += x->hosts[i].cnps;
	}
	fprintf(stderr, "qpace-bench: agents:");
	for (int k = 0; k < AGENT_C_COUNT; k++)
		if (sum[k])
			fprintf(stderr, " %s=%" PRIu64, agent_counter_name(k), sum[k]);
	if (cnps)
		fprintf(stderr, " cnps_from_notices=%" PRIu64, cnps);
	fprintf(stderr, " datagrams_out=%" PRIu64 " datagrams_not_sent=%" PRIu64, sent, failed);
	fputc('\n', stderr);
}

static void incast_free(struct incast *x)
{
	if (x->hosts)
		for (uint64_t i = 0; i <= x->senders; i++)
			if (x->hosts[i].ctx)
				host_close(&x->hosts[i]);
	monitor_close(&x->mon);
	free(x->agents);
	if (x->ep >= 0)
		close(x->ep);
	free(x->hosts);
	free(x->fl);
	free(x->rbuf);
	free(x->sbuf);
	free(x->smr);
	free(x->row);
	series_free(&x->rates);
}

/* Is anything listening on the switch's first port? A zero-length datagram on a
 * connected socket draws ICMP port unreachable (ECONNREFUSED) when nothing is; the switch
 * counts it as one malformed frame. */
static int switch_probe(uint32_t ip, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sa = qp_sockaddr_in(ip, port);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;
	char b, at[QP_HOSTPORT_STRLEN];

	qp_hostport_fmt(ip, port, at, sizeof(at));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || send(fd, "", 0, 0) < 0) {
		rc = qp_errmsg(-errno, err, errlen, "--switch %s: %s", at, strerror(errno));
	} else {
		struct timeval tv = { 0, 200000 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(fd, &b, 1, 0) < 0 && errno == ECONNREFUSED)
			rc = qp_errmsg(-ECONNREFUSED, err, errlen, "--switch %s: nothing listens "
				       "there (start `qpace-switch --star N --base-port %u` first, "
				       "or leave --switch out)", at, port);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static void incast_outputs(const struct incast *x, struct incast_run *run, const char *dir,
			   qp_time_ns t0, bool have_sw)
{
	char path[4200], e[300];
	qp_time_ns sa = stats_standalone_fct_ns(x->bytes, (uint32_t)x->c->mtu_bytes,
						STATS_ROCE_PKT_OVERHEAD, x->c->link_bps, x->base_rtt_ns);

	snprintf(path, sizeof(path), "%s/flows.csv", dir);
	incast_write_flows_csv(path, run, sa);
	snprintf(path, sizeof(path), "%s/rates.csv", dir);
	series_write_csv(&x->rates, path, t0);
	if (x->c->no_plots)
		return;
	if (plot_rates(dir, run->res.algorithm, (unsigned)x->senders, e, sizeof(e)) == 0 && have_sw)
		plot_queue(dir, run->res.algorithm, (unsigned)x->senders + 1, e, sizeof(e));
}

int incast_run(const struct bench_conf *c, const char *algo, uint64_t senders, uint64_t bytes,
	       const char *out_dir, struct incast_run *run, char *err, size_t errlen)
{
	struct incast x = { .c = c, .senders = senders, .bytes = bytes, .ep = -1,
			    .mon = { .lfd = -1, .cfd = { -1, -1, -1, -1 } } };
	struct incast_result *r = &run->res;
	struct swproc sw = { .pid = -1 };
	bool credits, own_switch = !c->switch_addr;
	char cc[INCAST_ALGO_MAX], swhost[QP_IPV4_STRLEN] = "127.0.0.1", e[400];
	unsigned base = (unsigned)c->base_port;
	int rc;

	memset(run, 0, sizeof(*run));
	if ((rc = incast_algo_parse(algo, cc, sizeof(cc), &credits, err, errlen)))
		return rc;
	x.cc = cc;
	snprintf(r->algorithm, sizeof(r->algorithm), "%s", algo);
	snprintf(r->cc, sizeof(r->cc), "%s", cc);
	r->credits = credits;
	r->senders = (uint32_t)senders;
	r->bytes_per_sender = bytes;
	r->link_bps = c->link_bps;
	r->mtu_bytes = (uint32_t)c->mtu_bytes;
	r->buffer_bytes = c->buffer_bytes;
	r->rounds = (uint32_t)c->rounds;
	x.base_rtt_ns = incast_base_rtt(c);
	/* A notice threshold of one BDP means this network's: the link rate times the
	 * modelled base RTT (the switch alone knows only its own delays and would count half
	 * the path). */
	incast_feedback(cc_find(cc), qp_bytes_in(c->link_bps, x.base_rtt_ns), &x.fb);
	if (!own_switch) {
		uint32_t swip;
		uint16_t swport;

		if (qp_hostport_parse(c->switch_addr, 1, 65535 - 2 * 64, 0, &swip, &swport, NULL,
				      0))
			return qp_errmsg(-EINVAL, err, errlen,
					 "--switch '%s': not HOST:P with P in 1..%u",
					 c->switch_addr, 65535 - 2 * 64);
		if ((rc = switch_probe(swip, swport, err, errlen)))
			return rc;
		qp_ipv4_fmt(swip, swhost, sizeof(swhost));
		base = swport;
	} else {
		struct swproc_conf sc = { .bin = c->switch_bin, .argv0 = c->prog,
					  .ports = (unsigned)senders + 1, .base_port = (uint16_t)base,
					  .rate_bps = c->link_bps, .buffer_bytes = c->buffer_bytes,
					  .delay_ns = c->delay_ns, .seed = c->seed,
					  .extra = x.fb.sw_args, .key_file = c->key_file,
					  .dir = out_dir, .cpu = -1 };
		/* Two busy loops (the switch and these hosts) on a 2-core machine: one CPU each,
		 * so they never queue behind each other. */
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		if (ncpu >= 2) {
			sc.cpu = 0;
			swproc_pin((int)ncpu - 1);
		}
		if ((rc = swproc_start(&sw, &sc, err, errlen)))
			return rc;
	}
	x.hosts = calloc(senders + 1, sizeof(*x.hosts));
	x.fl = calloc(senders + 1, sizeof(*x.fl));
	x.row = calloc(senders, sizeof(*x.row));
	run->nflows = (size_t)(senders * c->rounds);
	run->flows = calloc(run->nflows, sizeof(*run->flows));
	qp_time_ns *round_ns = calloc(c->rounds, sizeof(*round_ns));
	if (!x.hosts || !x.fl || !x.row || !run->flows || !round_ns ||
	    series_create(&x.rates, (unsigned)senders, out_dir ? INCAST_SERIES_CAP : 1)) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	if ((rc = incast_hosts(&x, cc, credits, x.fb.cnp_from_notice, swhost, base, err,
			       errlen)) ||
	    (rc = incast_connect(&x, err, errlen)))
		goto out;
	x.base_rtt_ns = incast_measure_rtt(&x);
	if ((rc = incast_register(&x, err, errlen)))
		goto out;
	x.registered = true;
	if (c->cmd == CMD_INCAST || c->monitor) {
		x.agents = calloc(senders + 1, sizeof(*x.agents));
		for (uint64_t i = 0; x.agents && i <= senders; i++)
			x.agents[i] = x.hosts[i].agent;
		if (!x.agents || monitor_open(&x.mon, c->monitor, x.agents, (unsigned)senders + 1, e,
					      sizeof(e)))
			fprintf(stderr, "qpace-bench: no monitoring: %s\n", x.agents ? e : "no memory");
		else
			fprintf(stderr, "qpace-bench: QPs on QPACE_SOCKET=%s (qpacectl top)\n",
				x.mon.path);
	}
	r->base_rtt_ns = x.base_rtt_ns;
	x.last_pass_ns = 0;
	void (*old)(int) = signal(SIGINT, on_sigint);
	void (*old_term)(int) = signal(SIGTERM, on_sigint);
	qp_time_ns t0 = qp_now_ns();
	uint32_t k;
	for (k = 0; k < c->rounds && !incast_stop; k++)
		if (incast_round(&x, k, &run->flows[k * senders], &round_ns[k], err, errlen))
			break;
	qp_time_ns t1 = qp_now_ns();
	signal(SIGINT, old);
	signal(SIGTERM, old_term);
	if (c->verbose)
		incast_agent_counters(&x);
	run->nflows = (size_t)(k * senders);
	r->loop_late_max_ns = x.max_gap_ns;
	r->rounds = k;
	incast_summarize(r, run->flows, run->nflows, round_ns, k, x.base_rtt_ns);
	if (own_switch) {
		struct swproc_port p0;
		char qpath[4200];
		snprintf(qpath, sizeof(qpath), "%s/queue.csv", out_dir ? out_dir : sw.dir);
		if (swproc_stop(&sw, "p0", &p0, e, sizeof(e)) == 0 &&
		    swproc_queue_mean(&sw, "p0", t0, t1, &r->avg_queue_bytes,
				      out_dir ? qpath : NULL, e, sizeof(e)) == 0) {
			r->have_switch = true;
			r->drops = p0.drops;
			r->ecn_marks = p0.ecn_marks;
			r->max_queue_bytes = p0.max_queue_bytes;
		} else {
			fprintf(stderr, "qpace-bench: switch figures unavailable: %s\n", e);
		}
	}
	if (out_dir)
		incast_outputs(&x, run, out_dir, t0, r->have_switch);
	rc = k == 0 ? qp_errmsg(-EINTR, err, errlen, "interrupted before the first round") : 0;
out:
	free(round_ns);
	incast_free(&x);
	swproc_stop(&sw, NULL, NULL, NULL, 0);
	swproc_cleanup(&sw);
	return rc;
}

void incast_run_free(struct incast_run *run)
{
	free(run->flows);
	run->flows = NULL;
	run->nflows = 0;
}
