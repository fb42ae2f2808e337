/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The incast in virtual time (--clock virtual): the same hosts, switch, flows and
 * measurements as the real-time runner (incast.c), driven by the discrete-event engine
 * (qpace/sim.h) instead of an event loop on the machine's clock.
 *
 *   switch   qpace-switch's own parser builds the star from the same words the real-time
 *            runner starts its switch process with (swproc_star_args); its ports are the
 *            engine's, a host behind each, NIC at the link rate, the link's delay each way
 *   probe    the base RTT: a one-packet WRITE per sender, one at a time, INCAST_RTT_PROBES
 *            each (the first resolves ARP), median, at least the modelled RTT
 *   rounds   at a round's start every flow registers and posts; on each wake-up of a
 *            sender its completions are polled and its next WRs posted (incast_flows.c);
 *            the round ends when the last flow completes, or at --timeout (simulated: the
 *            flows that could not finish are named); INCAST_GAP_NS later the next starts
 *   samples  every 1 ms of simulated time: the agents' rates (rates.csv), every port's
 *            queue (queue.csv, the mean of the receiver's port), the switch's CSV row
 * Figures are the engine's: the receiver's port p0 for drops, ECN marks and the peak. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/sim.h"
#include "qpace/soft.h"
#include "qpace/units.h"
#include "incast_priv.h"
#include "swproc.h"

enum vt_phase { VT_PROBE = 0, VT_ROUND, VT_GAP, VT_DONE };

struct vt {
	struct incast x;
	struct sim *sim;
	struct incast_run *run;
	qp_time_ns *round_ns;
	enum vt_phase phase;
	/* the RTT probe */
	uint64_t probe_sender;
	int probe_k;
	bool probe_posted;
	qp_time_ns probe_t0;
	uint64_t probe_id;
	qp_time_ns rtt[BENCH_MAX_SENDERS_VT * INCAST_RTT_PROBES];
	uint64_t nrtt;
	/* rounds */
	uint32_t round, rounds_done;
	qp_time_ns round_start, t0, t1;
	/* queue samples of the receiver's port, from t0 */
	double q_sum;
	uint64_t q_n;
	FILE *queue_csv, *switch_csv;
	int rc;
	char err[400];
};

static volatile sig_atomic_t vt_interrupted;

static void vt_on_sigint(int sig)
{
	(void)sig;
	vt_interrupted = 1;
}

static void vt_fail(struct vt *v, int rc, const char *msg)
{
	if (!v->rc) {
		v->rc = rc;
		snprintf(v->err, sizeof(v->err), "%s", msg);
	}
	sim_stop(v->sim);
}

static void vt_wake_all(struct vt *v, qp_time_ns now)
{
	for (uint64_t i = 0; i <= v->x.senders; i++)
		sim_wake(v->sim, i, now);
}

/* ---- the RTT probe ---- */

static void round_start(void *arg, qp_time_ns now);

static void probe_limit(void *arg, qp_time_ns now);

static void probe_next(struct vt *v, qp_time_ns now)
{
	v->probe_posted = false;
	v->probe_id++;
	if (++v->probe_k == INCAST_RTT_PROBES) {
		v->probe_k = 0;
		v->probe_sender++;
	}
	if (v->probe_sender > v->x.senders) {
		/* as the real-time runner: registration, then the rounds */
		v->x.base_rtt_ns = incast_rtt_median(&v->x, v->rtt, v->nrtt);
		v->run->res.base_rtt_ns = v->x.base_rtt_ns;
		if (sim_at(v->sim, now, round_start, v))
			vt_fail(v, -ENOMEM, "out of memory for events");
		return;
	}
	sim_wake(v->sim, flow_host(&v->x, v->probe_sender), now);
}

static void probe_limit(void *arg, qp_time_ns now)
{
	struct vt *v = arg;

	(void)now;
	if (v->phase == VT_PROBE && v->probe_posted && v->probe_t0 + INCAST_RTT_LIMIT_NS <= now)
		probe_next(v, now);
}

/* Host @host's app in the probe: the probed flow's posting host (incast_priv.h). */
static void probe_step(struct vt *v, uint64_t host, qp_time_ns now)
{
	uint64_t i = v->probe_sender;
	struct qp *qp = flow_qp(&v->x, &v->x.fl[i]);
	struct qp_wc wc;

	if (host != flow_host(&v->x, i))
		return;
	if (!v->probe_posted) {
		struct qp_wr w;

		incast_probe_wr(&v->x, i, &w);
		if (qp_post_send(qp, &w) < 0) {      /* as the real-time probe: next sender */
			v->probe_k = INCAST_RTT_PROBES - 1;
			probe_next(v, now);
			return;
		}
		v->probe_posted = true;
		v->probe_t0 = now;
		if (sim_at(v->sim, now + INCAST_RTT_LIMIT_NS, probe_limit, v))
			vt_fail(v, -ENOMEM, "out of memory for events");
		return;
	}
	if (qp_poll(qp, &wc, 1) != 1)
		return;
	if (wc.status == QP_WC_SUCCESS && v->probe_k > 0)
		v->rtt[v->nrtt++] = now - v->probe_t0;
	probe_next(v, now);
}

/* ---- rounds ---- */

static void vt_finish(void *arg, qp_time_ns now)
{
	struct vt *v = arg;

	v->t1 = now;
	v->phase = VT_DONE;
	sim_stop(v->sim);
}

static void round_end(struct vt *v, qp_time_ns now)
{
	struct incast *x = &v->x;
	uint32_t r = v->round;

	v->round_ns[r] = incast_round_end(x, r, v->round_start, now, &v->run->flows[r * x->senders]);
	v->rounds_done = r + 1;
	v->phase = VT_GAP;
	v->round++;
	vt_wake_all(v, now);    /* the agents lost their QPs: their deadlines moved */
	if (sim_at(v->sim, now + INCAST_GAP_NS,
		   v->round < x->c->rounds && !vt_interrupted ? round_start : vt_finish, v))
		vt_fail(v, -ENOMEM, "out of memory for events");
}

static void round_timeout(void *arg, qp_time_ns now)
{
	struct vt *v = arg;
	char t[32];
	unsigned left = 0;

	if (v->phase != VT_ROUND || now < v->round_start + v->x.c->round_timeout_ns)
		return;    /* that round ended in time */
	for (uint64_t i = 1; i <= v->x.senders; i++)
		left += v->x.fl[i].active;
	fprintf(stderr, "qpace-bench: round %u stopped at --timeout %s of simulated time: %u "
		"flow%s could not finish\n", v->round, qp_fmt_time(v->x.c->round_timeout_ns, t,
								    sizeof(t)),
		left, left == 1 ? "" : "s");
	round_end(v, now);
}

static void round_start(void *arg, qp_time_ns now)
{
	struct vt *v = arg;
	char e[400];
	int rc = incast_register(&v->x, now, e, sizeof(e));

	if (rc) {
		vt_fail(v, rc, e);
		return;
	}
	if (!v->x.registered) {
		v->x.registered = true;
		v->t0 = now;
	}
	v->round_start = now;
	v->phase = VT_ROUND;
	incast_round_begin(&v->x, now);
	vt_wake_all(v, now);
	if (sim_at(v->sim, now + v->x.c->round_timeout_ns, round_timeout, v))
		vt_fail(v, -ENOMEM, "out of memory for events");
}

/* Flow @i's app: its completions and posts; when it may post next. */
static qp_time_ns vt_flow(struct vt *v, uint64_t i, qp_time_ns now)
{
	struct flow_state *f = &v->x.fl[i];
	struct qp *qp = flow_qp(&v->x, f);
	bool was_active = f->active;
	int rc;

	flow_poll(&v->x, f, i, now);
	rc = flow_post(&v->x, f, i);
	if (was_active && !f->active && !incast_reads(&v->x))
		sim_wake(v->sim, 0, now);   /* the receiver's agent lost a QP */
	/* A gate that refused a new WR says when it opens; pieces of an accepted one are the
	 * context's deadline; a full send queue waits for completions (frames arrive). */
	return rc == -EAGAIN && !qp->pend.active ? qp_send_deadline(qp, now) : QP_TIME_NEVER;
}

/* The application on host @host: the probe, or its flows' completions and posts (each
 * sender its own; with --op read host 0 every flow's). */
static qp_time_ns vt_app(void *arg, size_t host, qp_time_ns now)
{
	struct vt *v = arg;
	qp_time_ns next = QP_TIME_NEVER;
	bool rd = incast_reads(&v->x);

	if (v->phase == VT_PROBE) {
		probe_step(v, host, now);
		return QP_TIME_NEVER;
	}
	if (v->phase != VT_ROUND || (rd ? host != 0 : host == 0))
		return QP_TIME_NEVER;
	for (uint64_t i = rd ? 1 : host; i <= (rd ? v->x.senders : host); i++)
		next = qp_time_min(next, vt_flow(v, i, now));
	if (!incast_round_busy(&v->x)) {
		round_end(v, now);
		return QP_TIME_NEVER;
	}
	return next;
}

/* ---- samples ---- */

static void vt_sample(void *arg, qp_time_ns now)
{
	struct vt *v = arg;
	struct sim_port_info p;

	incast_sample(&v->x, now);
	if (v->x.registered && v->phase != VT_DONE) {
		for (size_t i = 0; i < sim_nports(v->sim); i++) {
			sim_port_info(v->sim, i, &p);
			if (i == 0) {
				v->q_sum += (double)p.queue_bytes;
				v->q_n++;
			}
			if (v->queue_csv)
				fprintf(v->queue_csv, "%.6f,%s,%" PRIu64 "\n",
					(double)(now - v->t0) / 1e9, p.name, p.queue_bytes);
		}
	}
	if (v->switch_csv)
		sim_switch_csv_row(v->sim, v->switch_csv, SIM_START_NS);
	if (vt_interrupted) {
		vt_fail(v, -EINTR, "interrupted");
		return;
	}
	if (v->phase != VT_DONE && sim_at(v->sim, now + incast_sample_ns(v->x.c), vt_sample, v))
		vt_fail(v, -ENOMEM, "out of memory for events");
}

/* -v: frames the hosts dropped, by reason, summed; the switch's drops per port. */
static void vt_host_drops(const struct vt *v)
{
	uint64_t sum[SOFT_DROP_COUNT] = { 0 };
	struct sim_port_info p;

	for (uint64_t i = 0; i <= v->x.senders; i++) {
		const struct soft_host_stats *st = soft_host_stats(qp_soft_host(v->x.h[i]->ctx));
		for (int d = 0; d < SOFT_DROP_COUNT; d++)
			sum[d] += st->drops[d];
	}
	fprintf(stderr, "qpace-bench: hosts dropped:");
	for (int d = 0; d < SOFT_DROP_COUNT; d++)
		if (sum[d])
			fprintf(stderr, " %s=%" PRIu64, soft_drop_str((enum soft_drop)d), sum[d]);
	fprintf(stderr, "\nqpace-bench: switch drops:");
	for (size_t i = 0; i < sim_nports(v->sim); i++) {
		sim_port_info(v->sim, i, &p);
		if (p.drops)
			fprintf(stderr, " %s=%" PRIu64, p.name, p.drops);
	}
	fputc('\n', stderr);
}

/* ---- building ---- */

static int vt_open(struct vt *v, bool credits, const char *out_dir, char *err, size_t errlen)
{
	const struct bench_conf *c = v->x.c;
	struct swproc_conf sc = { .ports = (unsigned)v->x.senders + 1, .base_port = 7000,
				  .rate_bps = c->link_bps, .buffer_bytes = c->buffer_bytes,
				  .delay_ns = c->delay_ns, .seed = c->seed,
				  .extra = v->x.fb.sw_args, .key_file = c->key_file,
				  .pfc = c->pfc, .impair = c->impair, .pcap = c->pcap };
	struct sim_host_conf *hc = calloc(v->x.senders + 1, sizeof(*hc));
	struct swproc_argv a;
	struct sw_conf *sw;
	int rc;

	if (!hc)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	swproc_star_args(&sc, &a);
	a.argv[a.argc++] = "--quiet";
	a.argv[a.argc] = NULL;
	sw = sim_sw_conf_args(a.argc, (char **)a.argv, err, errlen);
	if (!sw) {
		free(hc);
		return -EINVAL;
	}
	for (uint64_t i = 0; i <= v->x.senders; i++)
		hc[i] = (struct sim_host_conf){
			.ip = 0x0a000000u | (uint32_t)(i + 1), .sw = 0, .port = (int)i,
			.link_delay_ns = SIM_PORT_DELAY, .window_pkts = c->window_pkts,
			.mtu_bytes = c->mtu_bytes, .cc = v->x.cc, .credits = credits,
			.cnp_from_notice = v->x.fb.cnp_from_notice,
			.ecn_echo = v->x.fb.ecn_echo,
			.key = c->have_key ? c->key : NULL };
	struct sim_conf conf = { .sw = sw, .hosts = hc, .nhosts = v->x.senders + 1,
				 .seed = c->seed, .verbose = c->verbose, .progress = true };
	rc = sim_create(&conf, &v->sim, err, errlen);
	sim_sw_conf_free(sw);
	free(hc);
	if (rc)
		return rc;
	v->x.h = calloc(v->x.senders + 1, sizeof(*v->x.h));
	if (!v->x.h)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	for (uint64_t i = 0; i <= v->x.senders; i++)
		v->x.h[i] = sim_host(v->sim, i);   /* the engine's hosts */
	if (out_dir) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/queue.csv", out_dir);
		v->queue_csv = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/switch.csv", out_dir);
		v->switch_csv = fopen(path, "w");
		if (!v->queue_csv || !v->switch_csv)
			return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
		fputs("time_s,port,queue_bytes\n", v->queue_csv);
		sim_switch_csv_header(v->switch_csv);
	}
	return 0;
}

/* The switch's figures and its final JSON (as qpace-switch --stats-json). */
static void vt_switch_figures(struct vt *v, const char *out_dir)
{
	struct incast_result *r = &v->run->res;
	struct sim_port_info p0;

	sim_port_info(v->sim, 0, &p0);
	r->have_switch = v->q_n > 0;
	r->drops = p0.drops;
	r->ecn_marks = p0.ecn_marks;
	r->impair_lost = p0.impair_lost;
	r->max_queue_bytes = p0.max_queue_bytes;
	r->avg_queue_bytes = v->q_n ? v->q_sum / (double)v->q_n : 0;
	if (out_dir) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/switch.json", out_dir);
		FILE *f = fopen(path, "w");
		if (f) {
			sim_switch_json(v->sim, f);
			fclose(f);
		}
	}
}

int incast_run_vt(const struct bench_conf *c, const char *algo, uint64_t senders,
		  uint64_t bytes, const char *out_dir, struct incast_run *run, char *err,
		  size_t errlen)
{
	struct vt *v = calloc(1, sizeof(*v));
	char cc[INCAST_ALGO_MAX];
	bool credits;
	int rc;

	if (!v)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	v->x = (struct incast){ .c = c, .senders = senders, .bytes = bytes, .ep = -1,
				.virtual_time = true,
				.mon = { .lfd = -1, .cfd = { -1, -1, -1, -1 } } };
	v->run = run;
	v->probe_sender = 1;
	if ((rc = incast_setup(&v->x, run, algo, &credits, cc, sizeof(cc), err, errlen)))
		goto out;
	v->round_ns = calloc(c->rounds, sizeof(*v->round_ns));
	if (!v->round_ns) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	if ((rc = incast_alloc(&v->x, run, out_dir, err, errlen)) ||
	    (rc = vt_open(v, credits, out_dir, err, errlen)) ||
	    (rc = incast_connect(&v->x, err, errlen)))
		goto out;
	sim_set_app(v->sim, vt_app, v);
	if (sim_at(v->sim, SIM_START_NS, vt_sample, v)) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto out;
	}
	sim_wake(v->sim, flow_host(&v->x, 1), SIM_START_NS);
	/* ETA: the bytes at the payload rate, per round, plus the gaps */
	double payload = stats_payload_bps(c->link_bps, (uint32_t)c->mtu_bytes,
					   STATS_ROCE_PKT_OVERHEAD);
	qp_time_ns eta = SIM_START_NS + (qp_time_ns)((double)c->rounds *
		((double)(senders * bytes) * 8e9 / payload + (double)INCAST_GAP_NS));
	void (*old)(int) = signal(SIGINT, vt_on_sigint);
	void (*old_term)(int) = signal(SIGTERM, vt_on_sigint);
	enum sim_end end = sim_run(v->sim, QP_TIME_NEVER, eta);
	signal(SIGINT, old);
	signal(SIGTERM, old_term);
	if (v->rc && (v->rc != -EINTR || v->rounds_done == 0)) {
		rc = qp_errmsg(v->rc, err, errlen, "%s", v->err);
		goto out;
	}
	if (end != SIM_END_STOPPED) {
		rc = qp_errmsg(-EIO, err, errlen, "virtual time ended early: %s", sim_end_str(end));
		goto out;
	}
	if (!v->t1)
		v->t1 = sim_now(v->sim);
	if (c->verbose) {
		incast_agent_counters(&v->x);
		vt_host_drops(v);
	}
	struct incast_result *r = &run->res;
	struct sim_stats st;
	run->nflows = (size_t)(v->rounds_done * senders);
	r->rounds = v->rounds_done;
	incast_summarize(r, run->flows, run->nflows, v->round_ns, v->rounds_done, v->x.base_rtt_ns);
	vt_switch_figures(v, out_dir);
	sim_stats(v->sim, &st);
	r->events = st.events;
	r->packet_hops = st.packet_hops;
	r->sim_s = (double)st.sim_ns / 1e9;
	r->wall_s = st.wall_s;
	if (v->queue_csv) {
		fclose(v->queue_csv);
		v->queue_csv = NULL;
	}
	if (out_dir)
		incast_outputs(&v->x, run, out_dir, v->t0, r->have_switch);
	rc = 0;
out:
	if (v->queue_csv)
		fclose(v->queue_csv);
	if (v->switch_csv)
		fclose(v->switch_csv);
	incast_free(&v->x);
	sim_destroy(v->sim);
	free(v->round_ns);
	free(v);
	return rc;
}
