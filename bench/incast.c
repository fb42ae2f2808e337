/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The incast runner (soft backend): see incast.h.
 *
 * One loop over the N+1 emulated hosts, or (--rx-thread on) over the N senders, with the
 * receiving host 0 in a second thread (incast_rx.h). Each pass: read the clock once;
 * progress the contexts that have input (epoll) or a due deadline; poll the senders'
 * completions and post their next WRs (non-blocking QPs: the pacing gate says when); run
 * the agents; sample rates every millisecond. A host whose socket epoll found empty does
 * not receive in that pass (qp_soft_rx_idle). When nothing is due within a millisecond
 * the loop sleeps in epoll_wait; otherwise it spins (machine-facts: sleeping costs ~40-80
 * us of lateness, which would distort a 1 Gb/s pacer).
 *
 * Who owns what with the receiver thread: the main thread owns the senders (hosts 1..N,
 * their QPs, agents, flows, the rate samples) and everything of struct incast; the thread
 * owns host 0 (context, receiver QPs, agent, credits) while it holds x->rx->lock, which it
 * holds for each of its passes. The main thread touches host 0 only inside
 * incast_rx_enter/leave (its agent registrations each round, a flow's leaving, the
 * monitor's answers); never host 0's socket, which is in the thread's epoll set alone.
 * Before the thread starts (hosts opened, QPs connected) and after incast_rx_stop joins it
 * (counters, outputs, close) host 0 is the main thread's.
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
#include "qpace/shm_ring.h"
#include "qpace/soft.h"
#include "incast_priv.h"
#include "swproc.h"

static volatile sig_atomic_t incast_stop;

static void on_sigint(int sig)
{
	(void)sig;
	incast_stop = 1;
}

static int incast_hosts(struct incast *x, bool credits, bool cnp, bool rx_thread,
			const char *swhost, unsigned base, const char *shm, char *err,
			size_t errlen)
{
	qp_time_ns now = qp_now_ns();
	int rc;

	x->ep = epoll_create1(EPOLL_CLOEXEC);
	if (x->ep < 0)
		return qp_errmsg(-errno, err, errlen, "epoll: %s", strerror(errno));
	for (uint64_t i = 0; i <= x->senders; i++) {
		char opts[300], e[300], shm_opt[SHM_PATH_MAX + 16] = ",shm=off";   /* udp */
		if (shm)
			snprintf(shm_opt, sizeof(shm_opt), ",shm=%s.p%" PRIu64, shm, i);
		snprintf(opts, sizeof(opts), "attach=%s:%u,ip=10.0.0.%u,window=%" PRIu64
			 ",mtu=%" PRIu64 "%s%s", swhost, base + 2 * (unsigned)i, (unsigned)i + 1,
			 x->c->window_pkts, x->c->mtu_bytes, shm_opt,
			 x->fb.ecn_echo ? ",ecn_echo=on" : "");
		struct host_conf hc;
		incast_host_conf(x, &hc, opts, credits, cnp);
		if ((rc = host_open(&x->hosts[i], &hc, now, e, sizeof(e))))
			return qp_errmsg(rc, err, errlen, "host %" PRIu64 " (%s): %s", i, opts, e);
		int fd = qp_ctx_fd(x->hosts[i].ctx);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };
		if (i == 0 && rx_thread)
			continue;   /* in the receiver thread's epoll set */
		if (fd >= 0 && epoll_ctl(x->ep, EPOLL_CTL_ADD, fd, &ev))
			return qp_errmsg(-errno, err, errlen, "epoll_ctl: %s", strerror(errno));
	}
	return 0;
}

/* One pass of the loop; returns how long it may sleep. */
static void incast_pass(struct incast *x, bool round_on)
{
	struct epoll_event ev[64];
	qp_time_ns now = qp_now_ns(), next = now + INCAST_SAMPLE_NS;
	uint64_t nh = x->senders + 1, first = x->rx ? 1 : 0;   /* host 0: its own thread */

	for (uint64_t i = first; i < nh; i++)
		next = qp_time_min(next, host_deadline(&x->hosts[i]));
	int timeout_ms = next > now + INCAST_SPIN_NS ? (int)((next - now) / QP_NS_PER_MS) : 0;
	/* shm: arm every host's doorbell before sleeping; frames that came meanwhile keep
	 * the loop up (the ones after the arm ring the doorbell) */
	for (uint64_t i = first; timeout_ms > 0 && i < nh; i++)
		if (!qp_soft_wait_arm(x->hosts[i].ctx))
			timeout_ms = 0;
	int n = epoll_wait(x->ep, ev, 64, timeout_ms);
	now = qp_now_ns();
	if (round_on)
		incast_late_note(x->last_pass_ns, now, timeout_ms, &x->max_gap_ns, &x->late_total_ns);
	x->last_pass_ns = now;
	bool input[BENCH_MAX_SENDERS + 1] = { false };
	for (int k = 0; k < n; k++) {
		input[ev[k].data.u64] = true;
		qp_ctx_progress(x->hosts[ev[k].data.u64].ctx, now);
	}
	for (uint64_t i = first; i < nh; i++) {
		struct host *h = &x->hosts[i];
		/* epoll saw nothing for it: no receive this pass (it was an empty recvmmsg per
		 * idle host per pass, 95% of the loop's receive calls) */
		if (!input[i])
			qp_soft_rx_idle(h->ctx, now);
		if (qp_ctx_deadline(h->ctx) <= now)
			qp_ctx_progress(h->ctx, now);
		if (round_on && (incast_reads(x) ? i == 0 : i > 0)) {
			/* the flow's app: its sender's, or with --op read host 0's for each flow */
			for (uint64_t k = incast_reads(x) ? 1 : i; k <= (incast_reads(x) ? x->senders : i);
			     k++) {
				flow_poll(x, &x->fl[k], k, now);
				flow_post(x, &x->fl[k], k);
			}
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
	qp_time_ns rtt[BENCH_MAX_SENDERS];
	uint64_t n = 0;

	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		struct qp *qp = flow_qp(x, f);
		struct qp_wr w;

		incast_probe_wr(x, i, &w);
		for (int k = 0; k < INCAST_RTT_PROBES; k++) {   /* the first resolves ARP */
			qp_time_ns t0 = qp_now_ns(), limit = t0 + INCAST_RTT_LIMIT_NS;
			struct qp_wc wc;
			int got = 0;
			if (qp_post_send(qp, &w) < 0)
				break;
			while (!got && qp_now_ns() < limit) {
				incast_pass(x, false);
				got = qp_poll(qp, &wc, 1);
			}
			if (got == 1 && wc.status == QP_WC_SUCCESS && k > 0 && n < BENCH_MAX_SENDERS)
				rtt[n++] = qp_now_ns() - t0;
		}
	}
	return incast_rtt_median(x, rtt, n);
}

static int incast_round(struct incast *x, uint32_t r, struct incast_flow *out,
			qp_time_ns *round_ns, char *err, size_t errlen)
{
	int rc = incast_register(x, qp_now_ns(), err, errlen);

	if (rc)
		return rc;
	x->last_pass_ns = 0;   /* lateness is between passes of a round, not the setup before */
	qp_time_ns start = qp_now_ns(), limit = start + x->c->round_timeout_ns;

	incast_round_begin(x, start);
	incast_rx_round(x->rx, true);
	while (incast_round_busy(x) && !incast_stop && qp_now_ns() < limit)
		incast_pass(x, true);
	incast_rx_round(x->rx, false);
	*round_ns = incast_round_end(x, r, start, qp_now_ns(), out);
	for (qp_time_ns gap = qp_now_ns() + INCAST_GAP_NS; qp_now_ns() < gap && !incast_stop;)
		incast_pass(x, false);
	return 0;
}

static void incast_rt_free(struct incast *x)
{
	if (x->rx)
		incast_rx_stop(x->rx);   /* host 0 is this thread's again */
	if (x->hosts)
		for (uint64_t i = 0; i <= x->senders; i++)
			if (x->hosts[i].ctx)
				host_close(&x->hosts[i]);
	if (x->ep >= 0)
		close(x->ep);
	free(x->hosts);
	incast_free(x);
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

int incast_run(const struct bench_conf *c, const char *algo, uint64_t senders, uint64_t bytes,
	       const char *out_dir, struct incast_run *run, char *err, size_t errlen)
{
	struct incast x = { .c = c, .senders = senders, .bytes = bytes, .ep = -1,
			    .mon = { .lfd = -1, .cfd = { -1, -1, -1, -1 } } };
	struct incast_result *r = &run->res;
	struct swproc sw = { .pid = -1 };
	struct incast_rx rx = { .ep = -1, .wake = -1 };
	bool rx_thread = c->rx_thread == BENCH_RX_THREAD_ON;
	bool credits, own_switch = !c->switch_addr;
	char cc[INCAST_ALGO_MAX], swhost[QP_IPV4_STRLEN] = "127.0.0.1", e[400];
	char shm[SHM_PATH_MAX - 8] = "";
	unsigned base = (unsigned)c->base_port;
	int rc;

	if (c->clock == BENCH_CLOCK_VIRTUAL)
		return incast_run_vt(c, algo, senders, bytes, out_dir, run, err, errlen);
	if ((rc = incast_setup(&x, run, algo, &credits, cc, sizeof(cc), err, errlen)))
		return rc;
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
					  .extra = x.fb.sw_args, .key_file = c->key_file, .pfc = c->pfc,
					  .impair = c->impair, .pcap = c->pcap,
					  .dir = out_dir, .cpu = -1 };
		/* shm: the regions' links beside the switch's memory, named for this run */
		if (c->transport == BENCH_TRANSPORT_SHM) {
			snprintf(shm, sizeof(shm), "%s/qpace-bench-%d-%u",
				 access("/dev/shm", W_OK) ? (getenv("TMPDIR") ? getenv("TMPDIR")
									     : "/tmp")
							  : "/dev/shm", (int)getpid(), base);
			sc.shm_prefix = shm;
		}
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
	x.h = calloc(senders + 1, sizeof(*x.h));
	qp_time_ns *round_ns = calloc(c->rounds, sizeof(*round_ns));
	if (!x.hosts || !x.h || !round_ns) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i <= senders; i++)
		x.h[i] = &x.hosts[i];
	if ((rc = incast_alloc(&x, run, out_dir, err, errlen)))
		goto out;
	if ((rc = incast_hosts(&x, credits, x.fb.cnp_from_notice, rx_thread, swhost, base,
			       shm[0] ? shm : NULL, err, errlen)) ||
	    (rc = incast_connect(&x, err, errlen)))
		goto out;
	if (rx_thread) {
		x.rx = &rx;   /* from here host 0 is the thread's (above) */
		if ((rc = incast_rx_start(&rx, &x.hosts[0], c->spin_ns, err, errlen)))
			goto out;
	}
	x.base_rtt_ns = incast_measure_rtt(&x);
	if ((rc = incast_register(&x, qp_now_ns(), err, errlen)))
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
	if (x.rx) {   /* joined: its lateness and host 0 are this thread's again */
		incast_rx_stop(x.rx);
		x.max_gap_ns = x.max_gap_ns > rx.max_gap_ns ? x.max_gap_ns : rx.max_gap_ns;
		x.late_total_ns += rx.late_total_ns;
	}
	if (c->verbose)
		incast_agent_counters(&x);
	run->nflows = (size_t)(k * senders);
	r->loop_late_max_ns = x.max_gap_ns;
	r->loop_late_total_ns = x.late_total_ns;
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
			r->impair_lost = p0.impair_lost;
			r->max_queue_bytes = p0.max_queue_bytes;
			r->switch_late_max_ns = sw.late_max_ns;
			r->switch_late_total_ns = sw.late_total_ns;
		} else {
			fprintf(stderr, "qpace-bench: switch figures unavailable: %s\n", e);
		}
	}
	if (out_dir)
		incast_outputs(&x, run, out_dir, t0, r->have_switch);
	rc = k == 0 ? qp_errmsg(-EINTR, err, errlen, "interrupted before the first round") : 0;
out:
	free(round_ns);
	incast_rt_free(&x);
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
