/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced --enforce observe|tc: the tc egress program on --dev (agent/bpf/tc_egress.h), the
 * QPs it finds on the wire, their rates into its map, its counters into the QP views.
 *
 *   report   a RoCEv2 flow the program has no rate for (ring buffer), IPv4 or IPv6
 *            (wire_addr.h): registered with the
 *            core like any QP (the configured algorithm, --wire-rtt/-mtu/-rate), under the
 *            owner QPACED_WIRE_OWNER and a QPN from QPACED_WIRE_QPN_BASE up (the wire
 *            shows only the peer's QPN), so feedback about the flow drives it
 *   sync     after every callback that touched the core: each such QP's published rate
 *            (with its window folded in and at least the floor, wire_rate.h) into the
 *            program's map when it changed; tc mode only (observe: rate 0, count only).
 *            Every flow qpaced tracks has a map entry, so the program reports it no more
 *   sample   every QPACED_WIRE_SAMPLE_NS: each flow's bytes and packets, and the rate
 *            since the last sample, into the view of the QP that sends it (discovered or
 *            registered by a program); a discovered QP quiet for QPACED_WIRE_IDLE_NS goes
 *
 *   beat     every QPACED_WIRE_BEAT_NS (at most a quarter of --wire-hold): the heartbeat
 *            in the program's qp_alive; if qpaced dies the filter stays and, after the
 *            hold, every paced flow goes at most at the safe rate (tc_abi.h)
 *
 * In tc mode fq is installed as the device's root qdisc (the departure times need it);
 * where the kernel has no sch_fq this is logged and the program still counts. The maps
 * are pinned in --bpf-pin/IFACE: a qpaced started after one that died takes them and the
 * filter over (its discovered flows become QPs again, at their last rates until their
 * algorithm moves). On close the filter, the clsact qdisc if it was ours, fq and the pins
 * go again; `--enforce off --dev IFACE` removes what a dead qpaced left.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <net/if.h>
#include <linux/pkt_sched.h>

#include "bpf/tc_egress.h"
#include "qdisc.h"
#include "daemon_priv.h"
#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "wire_addr.h"
#include "wire_credit.h"
#include "wire_rate.h"

#define QPACED_WIRE_OWNER 0xffffffffu
#define QPACED_WIRE_QPN_BASE 0xf00000u
#define QPACED_WIRE_SAMPLE_NS (250 * QP_NS_PER_MS)
#define QPACED_WIRE_IDLE_NS (10 * QP_NS_PER_S)
#define QPACED_WIRE_DEF_LINE (10 * QP_GBPS)   /* --enforce observe on a device with no speed */
#define QPACED_WIRE_START_DIV 4u   /* --wire-start 0: a quarter of the line */
#define QPACED_WIRE_BEAT_NS (250 * QP_NS_PER_MS)   /* at most; and at most hold / 4 */
#define QPACED_WIRE_FLOOR_LOG_NS (10 * QP_NS_PER_S)
#define QPACED_WIRE_FQ_DOWN_NS (2 * QP_NS_PER_S)   /* --wire-catchup: lowered at most this
						    * often (each change is a `tc` run, which
						    * costs a TCG guest ~0.1 s of CPU) */

extern char **environ;

struct wire_flow {
	bool used;
	bool ours;                   /* a QP this file registered */
	bool in_map;                 /* it has an entry in the program's rate map: a flow the
				      * program knows is counted, not reported (rate 0 = count
				      * only, as in observe mode or for a QP its gate paces) */
	struct qp_tc_key key;
	uint32_t qpn;
	qp_time_ns sample_ns, active_ns;
	uint64_t sample_bytes;
	qp_rate_bps held_bps;        /* taken over: the last rate, kept until the algorithm */
	qp_rate_bps held_target;     /* moves from this target (or a manual rate is set) */
	struct agent_qp_wire wire;   /* what the view shows */
	qp_time_ns floored_log_ns;   /* when its being floored was last logged */
	struct wire_credit credit;   /* IA credits granted to it, as written (wire_credit.h) */
};

struct qpaced_tc {
	struct qp_tc *prog;
	unsigned mode;
	char dev[16];
	qp_time_ns fq_down_ns;       /* when it may next be lowered */
	qp_rate_bps line_bps, floor_bps;
	qp_time_ns timeout_ns;       /* --wire-timeout as a time (0: none) */
	qp_rate_bps start_bps;       /* --wire-start, resolved: the program's conf.start_bps */
	struct qp_tc_conf conf;      /* as last written */
	struct qp_tc_alive alive;    /* the heartbeat record written each beat */
	uint32_t next_qpn;
	ev_io reports_io;
	ev_timer sample, beat;
	uint32_t cap;
	struct wire_flow *flows;
};

/* ---- the device ---- */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	if (fgets(buf, (int)len, f)) {
		buf[strcspn(buf, "\n")] = 0;
		rc = buf[0] ? 0 : -ENOENT;
	}
	fclose(f);
	return rc;
}

/* The netdev of the first RDMA device with a RoCE GID (what rxe is bound to). */
static int rdma_netdev(char *dev, size_t len)
{
	glob_t g;
	int rc = -ENOENT;

	if (glob("/sys/class/infiniband/*/ports/1/gid_attrs/ndevs/[01]", 0, NULL, &g))
		return -ENOENT;
	for (size_t i = 0; i < g.gl_pathc && rc; i++)
		rc = read_line(g.gl_pathv[i], dev, len);
	globfree(&g);
	return rc;
}

static qp_rate_bps dev_speed(const char *dev)
{
	char path[96], line[32];
	long mbps;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", dev);
	if (read_line(path, line, sizeof(line)))
		return 0;
	mbps = strtol(line, NULL, 10);
	return mbps > 0 ? (qp_rate_bps)mbps * QP_MBPS : 0;
}

/* fq (daemon_qdisc.c): a 2 s horizon that caps instead of dropping (a drop is a send_err
 * to rxe), flow limits above rxe's 64 skbs in flight per QP (a socket per QP), and with
 * --wire-fq-maxrate a per-flow maxrate. fq holds a frame to its departure time but sends
 * one that is overdue at once: after the host held the sender up (a stalled guest,
 * measured in docs/enforce.md), a QP's overdue frames left together at the NIC's speed;
 * fq's own per-flow pacing counts from the time it dequeues, so with maxrate they leave at
 * most at that rate. Not by default: counted from dequeue, maxrate also adds fq's dequeue
 * lateness to every frame of a flow paced near it (half of it at most, fq's drift
 * allowance): under QEMU's TCG a QP paced at a 10M line with maxrate 10M carried 5.4 Mb/s
 * of the 9.46 wanted (tests/vm/enforce-rxe.sh), where the departure times alone, which
 * do not accumulate lateness, gave 9.43. A maxrate caps every flow in our fq, TCP too. */

/* The most --wire-catchup lets fq's maxrate be: --wire-fq-maxrate, else the line. */
static qp_rate_bps fq_cap(const struct qpaced *d)
{
	return d->cfg.wire_fq_maxrate_bps ? d->cfg.wire_fq_maxrate_bps : d->tc->line_bps;
}

/* --wire-catchup PCT (wire_rate.h): fq's maxrate follows PCT% of the highest rate of the
 * flows qpaced tracks on the device (a program's QP: its gate's rate) and of the start
 * rate a new flow gets, so a flow whose frames fell overdue while the host held the
 * sender up catches up at most at that rate, not at the NIC's. Run at each sample, after
 * the rates were written: a rate grows at most --wire-used per sample. Raised
 * at once, lowered at most every QPACED_WIRE_FQ_DOWN_NS. */
static void fq_follow(struct qpaced *d, qp_time_ns now)
{
	struct qpaced_tc *t = d->tc;
	qp_rate_bps top = t->start_bps, want, cur = qpaced_qdisc_maxrate(d);
	char e[300];

	if (!qpaced_qdisc_installed(d) || !d->cfg.wire_catchup_pct)
		return;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct wire_flow *w = &t->flows[i];
		struct agent_qp_view v;
		qp_rate_bps r = 0;

		if (!w->used)
			continue;
		if (w->ours)
			r = w->wire.set_bps;
		else if (agent_qp_view(d->agent, w->qpn, &v) == 0)
			r = v.rate_bps;
		if (r > top)
			top = r;
	}
	want = wire_fq_maxrate(top, (unsigned)d->cfg.wire_catchup_pct, fq_cap(d));
	if (!wire_fq_maxrate_moved(cur, want) || (want < cur && now < t->fq_down_ns))
		return;
	if (qpaced_qdisc_set_maxrate(d, want, e, sizeof(e))) {
		qpaced_log(AGENT_LOG_WARN, "tc egress: fq maxrate on %s: %s: it stays %llu bit/s",
			   t->dev, e, (unsigned long long)cur);
		return;
	}
	qpaced_log(AGENT_LOG_INFO, "tc egress: fq maxrate %llu kb/s (%llu%% of the highest rate, "
		   "%llu kb/s)", (unsigned long long)(want / 1000),
		   (unsigned long long)d->cfg.wire_catchup_pct, (unsigned long long)(top / 1000));
	t->fq_down_ns = now + QPACED_WIRE_FQ_DOWN_NS;
}

/* ---- flows ---- */

static struct wire_flow *flow_find(struct qpaced_tc *t, const struct qp_tc_key *k)
{
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->flows[i].used && memcmp(&t->flows[i].key, k, sizeof(*k)) == 0)
			return &t->flows[i];
	return NULL;
}

/* @write: give it a (count-only) map entry; a flow taken over has one already. */
static struct wire_flow *flow_add(struct qpaced_tc *t, const struct qp_tc_key *k,
				  uint32_t qpn, bool ours, bool write, qp_time_ns now)
{
	for (uint32_t i = 0; i < t->cap; i++) {
		struct wire_flow *w = &t->flows[i];

		if (w->used)
			continue;
		struct qp_tc_rate none = { .flags = ours ? QP_TC_F_DISCOVERED : 0,
					   .qpn = ours ? qpn : 0 };

		*w = (struct wire_flow){ .used = true, .ours = ours, .key = *k, .qpn = qpn,
					 .active_ns = now };
		w->wire.discovered = ours;
		w->in_map = !write || qp_tc_set_rate(t->prog, k, &none) == 0;
		return w;
	}
	return NULL;
}

static void flow_drop(struct qpaced_tc *t, struct wire_flow *w)
{
	if (w->in_map)
		qp_tc_del_rate(t->prog, &w->key);
	w->used = false;
}

static int free_qpn(struct qpaced *d, uint32_t *qpn)
{
	struct qpaced_tc *t = d->tc;
	struct agent_qp_view v;

	for (uint32_t n = 0; n <= QP_RATE_QPN_MAX - QPACED_WIRE_QPN_BASE; n++) {
		uint32_t q = t->next_qpn;

		t->next_qpn = q >= QP_RATE_QPN_MAX - 1 ? QPACED_WIRE_QPN_BASE : q + 1;
		if (agent_qp_view(d->agent, q, &v) == -ENOENT) {
			*qpn = q;
			return 0;
		}
	}
	return -ENOSPC;
}

/* A QP's first rate on a line of @line: --wire-start, else a quarter of the line; within
 * floor..line. */
static qp_rate_bps start_of(const struct qpaced *d, qp_rate_bps line)
{
	qp_rate_bps s = d->cfg.wire_start_bps ? d->cfg.wire_start_bps
					      : line / QPACED_WIRE_START_DIV;

	if (s < d->tc->floor_bps)
		s = d->tc->floor_bps;
	return s > line ? line : s;
}

/* The line of a new QP to @peer_ip (IPv4; 0: IPv6): the device's, or lower where INT from
 * an earlier QP to that peer showed a slower hop: a flow's first rate does not bury a port
 * qpaced knows is slow. */
static qp_rate_bps line_of(const struct qpaced *d, uint32_t peer_ip)
{
	qp_rate_bps known = peer_ip ? agent_path_link_bps(d->agent, peer_ip) : 0;

	return known && known < d->tc->line_bps ? known : d->tc->line_bps;
}

/* The program's start for flows it has no entry for yet (the frames before qpaced's first
 * answer), lowered to the start on the slowest link INT has shown on any path. */
static void start_follow(struct qpaced *d)
{
	struct qpaced_tc *t = d->tc;
	qp_rate_bps slow = agent_path_link_bps(d->agent, 0), s;

	if (!slow || d->cfg.wire_start_bps || t->mode != QPACED_ENFORCE_TC)
		return;
	s = start_of(d, slow < t->line_bps ? slow : t->line_bps);
	if (s >= t->conf.start_bps)
		return;
	t->conf.start_bps = s;
	qp_tc_set_conf(t->prog, &t->conf);
	qpaced_log(AGENT_LOG_INFO, "tc egress: INT shows a %llu kb/s link: new flows start at "
		   "%llu kb/s", (unsigned long long)(slow / 1000), (unsigned long long)(s / 1000));
}

static void on_report(void *ctx, const struct qp_tc_report *r)
{
	struct qpaced *d = ctx;
	struct qpaced_tc *t = d->tc;
	struct agent_qp_reg reg = { .peer_qpn = r->key.dqpn, .sport = r->sport,
				    .mtu_bytes = (uint32_t)d->cfg.wire_mtu,
				    .link_bps = t->line_bps };
	qp_time_ns now = qp_now_ns();
	char err[CTL_TEXT_MAX], a[QP_IPV6_STRLEN], b[QP_IPV6_STRLEN];
	uint32_t qpn;

	if (!wire_flow_addrs(&reg, r->ipv6, r->saddr, r->key.daddr)) {
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc egress: a report of an IPv4 flow "
			   "(QPN 0x%06x) with addresses that are not IPv4-mapped", r->key.dqpn);
		return;
	}
	if (wire_flow_qp(d->agent, &reg, &qpn) == 0) {
		/* a program registered it: its gate paces it; a count-only entry now, so the
		 * program stops pacing it at the start rate */
		if (!flow_find(t, &r->key))
			flow_add(t, &r->key, qpn, false, true, now);
		return;
	}
	if (qp_tc_ack_only(r->opcode)) {
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc egress: flows whose frames are "
			   "ACKs or CNPs (opcode 0x%02x) are counted, not made QPs", r->opcode);
		return;
	}
	snprintf(reg.algo, sizeof(reg.algo), "%s", d->cfg.cc);
	reg.link_bps = line_of(d, r->ipv6 ? 0 : reg.peer_ip);
	reg.base_rtt_ns = qpaced_wire_rtt(d, reg.link_bps);
	if (wire_start_params(cc_find(d->cfg.cc), d->cfg.cc_params, start_of(d, reg.link_bps),
			      reg.params, sizeof(reg.params))) {
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc egress: --cc-params with init_rate "
			   "added are longer than %u characters", AGENT_PARAMS_MAX - 1);
		return;
	}
	if (free_qpn(d, &reg.qpn) || agent_register(d->agent, &reg, QPACED_WIRE_OWNER, 0, now,
						    err, sizeof(err))) {
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc egress: flow to %s QPN 0x%06x "
			   "not made a QP: %s", agent_qp_addr_fmt(&reg, true, a, sizeof(a)),
			   reg.peer_qpn, err[0] ? err : "no free QPN");
		return;
	}
	if (!flow_add(t, &r->key, reg.qpn, true, true, now)) {
		agent_unregister(d->agent, reg.qpn, now);
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc egress: more than %u flows", t->cap);
		return;
	}
	agent_count(d->agent, AGENT_C_WIRE_CREATED, 1);
	qpaced_log(AGENT_LOG_INFO, "tc egress: new QP 0x%06x from the wire: %s -> %s QPN "
		   "0x%06x (sport %u), cc %s", reg.qpn, agent_qp_addr_fmt(&reg, false, a, sizeof(a)),
		   agent_qp_addr_fmt(&reg, true, b, sizeof(b)), reg.peer_qpn, reg.sport, d->cfg.cc);
}

static void on_reports(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced *d = w->data;

	(void)loop;
	(void)revents;
	qp_tc_reports_take(d->tc->prog, on_report, d);
	qpaced_after(d);
}

/* A QP whose algorithm asks for less than the floor is paced at the floor: its fair share
 * at the bottleneck is below what rxe's ACK timer allows (wire_rate.h). Said once when it
 * begins (at most every QPACED_WIRE_FLOOR_LOG_NS per QP), counted, and shown per QP. */
static void floored(struct qpaced *d, struct wire_flow *w, bool now_floored)
{
	struct qpaced_tc *t = d->tc;
	qp_time_ns now;

	if (now_floored == w->wire.floored)
		return;
	w->wire.floored = now_floored;
	if (!now_floored)
		return;
	agent_count(d->agent, AGENT_C_WIRE_FLOORED, 1);
	now = qp_now_ns();
	if (w->floored_log_ns && now - w->floored_log_ns < QPACED_WIRE_FLOOR_LOG_NS)
		return;
	w->floored_log_ns = now;
	qpaced_log(AGENT_LOG_WARN, "tc egress: QP 0x%06x: its algorithm asks for less than "
		   "the floor, %llu kb/s (one frame per %u%% of ACK timeout %llu, "
		   "--wire-timeout): paced at the floor, so the queue where its path is shared "
		   "may grow (FLOOR in qpacectl list, qpace_qp_wire_floored)", w->qpn,
		   (unsigned long long)(t->floor_bps / 1000), WIRE_ACK_SHARE,
		   (unsigned long long)d->cfg.wire_timeout);
}

void qpaced_tc_sync(struct qpaced *d)
{
	struct qpaced_tc *t = d->tc;

	if (!t)
		return;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct wire_flow *w = &t->flows[i];
		struct agent_qp_view v;
		struct agent_qp_credit c;
		struct qp_tc_rate r;
		bool credit = false;
		qp_rate_bps want;
		int rc;

		if (!w->used || !w->ours)
			continue;
		if (agent_qp_view(d->agent, w->qpn, &v)) {
			flow_drop(t, w);
			continue;
		}
		want = t->mode == QPACED_ENFORCE_TC
			       ? wire_rate(v.rate_bps, v.cap_bytes, v.reg.base_rtt_ns, t->floor_bps,
					   v.reg.link_bps)
			       : 0;
		if (want)
			floored(d, w, wire_rate_fold(v.rate_bps, v.cap_bytes, v.reg.base_rtt_ns) <
					      t->floor_bps);
		/* at most --wire-used of what it sends, at least the start rate (wire_rate.h):
		 * with the default start, the line rate, this never binds */
		if (want && !v.override)
			want = wire_rate_used(want, w->wire.measured_bps,
					      (unsigned)d->cfg.wire_used_pct, t->start_bps);
		if (w->held_bps) {   /* taken over: its last rate until the algorithm moves */
			if (v.override || v.target_bps != w->held_target)
				w->held_bps = 0;
			else if (want > w->held_bps)
				want = w->held_bps;
		}
		r = (struct qp_tc_rate){ .rate_bps = want, .cap_bytes = v.cap_bytes,
					 .flags = (want ? QP_TC_F_PACE : 0) | QP_TC_F_DISCOVERED,
					 .qpn = w->qpn };
		/* IA credits granted to it (--credits ia on the receiver's agent) */
		if (t->mode == QPACED_ENFORCE_TC && agent_qp_credit(d->agent, w->qpn, &c) == 0)
			credit = wire_credit_fill(&w->credit, &c, v.reg.mtu_bytes, t->floor_bps,
						  &r);
		if (want == w->wire.set_bps && w->in_map && !credit)
			continue;
		if ((rc = qp_tc_set_rate(t->prog, &w->key, &r))) {
			qpaced_log(AGENT_LOG_WARN, "tc egress: rate of QP 0x%06x: %s", w->qpn,
				   strerror(-rc));
			w->credit.last.flags = ~0u;   /* written again next time */
			continue;
		}
		w->in_map = true;
		w->wire.set_bps = want;
		agent_qp_wire(d->agent, w->qpn, &w->wire);
	}
}

struct sample_ctx {
	struct qpaced *d;
	qp_time_ns now;
};

static void sample_one(void *ctx, const struct qp_tc_key *k, const struct qp_tc_state *s)
{
	struct sample_ctx *c = ctx;
	struct qpaced_tc *t = c->d->tc;
	struct wire_flow *w = flow_find(t, k);
	struct agent_qp_reg reg = { .peer_qpn = k->dqpn };
	uint32_t qpn;

	if (!w) {
		if (!wire_flow_addrs(&reg, s->ipv6, s->saddr, k->daddr) ||
		    wire_flow_qp(c->d->agent, &reg, &qpn))
			return;          /* no QP sends it (yet): the report makes one */
		w = flow_add(t, k, qpn, false, true, c->now);
		if (!w)
			return;
	}
	if (w->sample_ns && c->now > w->sample_ns && s->bytes >= w->sample_bytes)
		w->wire.measured_bps = (qp_rate_bps)((unsigned __int128)(s->bytes -
									 w->sample_bytes) *
						     8u * QP_NS_PER_S / (c->now - w->sample_ns));
	if (s->bytes != w->sample_bytes)
		w->active_ns = c->now;
	w->sample_ns = c->now;
	w->sample_bytes = s->bytes;
	w->wire.seen = true;
	w->wire.bytes = s->bytes;
	w->wire.pkts = s->pkts;
	w->wire.resent = s->rtx;
	w->wire.ackreqs = s->ackreq;
	if (agent_qp_wire(c->d->agent, w->qpn, &w->wire))
		flow_drop(t, w);         /* its QP went away */
}

static void on_sample(struct ev_loop *loop, ev_timer *tm, int revents)
{
	struct qpaced *d = tm->data;
	struct qpaced_tc *t = d->tc;
	struct sample_ctx c = { d, qp_now_ns() };

	(void)loop;
	(void)revents;
	qp_tc_flows(t->prog, sample_one, &c);
	for (uint32_t i = 0; i < t->cap; i++) {
		struct wire_flow *w = &t->flows[i];

		if (w->used && w->ours && c.now - w->active_ns > QPACED_WIRE_IDLE_NS) {
			agent_unregister(d->agent, w->qpn, c.now);
			agent_count(d->agent, AGENT_C_WIRE_IDLE, 1);
			flow_drop(t, w);
		}
	}
	qpaced_tc_sync(d);
	fq_follow(d, c.now);
	start_follow(d);
	qpaced_after(d);
}

void qpaced_tc_metrics(struct qpaced *d, struct qp_strbuf *b)
{
	uint64_t c[QP_TC_C_COUNT];

	if (!d->tc || qp_tc_counters(d->tc->prog, c))
		return;
	qp_strbuf_printf(b, "# HELP qpace_tc_frames_total frames the tc egress program saw on "
			 "%s, by what it did (roce; pass_*: not RoCEv2, passed as they were) or "
			 "what happened to them (unknown_flow, paced, beyond_horizon, reports, ...)"
			 "\n# TYPE qpace_tc_frames_total counter\n", d->tc->dev);
	for (unsigned i = 0; i < QP_TC_C_COUNT; i++)
		qp_strbuf_printf(b, "qpace_tc_frames_total{event=\"%s\"} %llu\n",
				 qp_tc_counter_name(i), (unsigned long long)c[i]);
}

/* ---- safe failure: the heartbeat, the takeover, what a dead qpaced left ---- */

static void beat(struct qpaced *d)
{
	struct qpaced_tc *t = d->tc;
	int rc;

	t->alive.beat_ns = qp_now_ns();   /* CLOCK_MONOTONIC: bpf_ktime_get_ns()'s clock */
	t->alive.flags = (qp_tc_made_clsact(t->prog) ? QP_TC_A_CLSACT : 0) |
			 (qpaced_qdisc_installed(d) ? QP_TC_A_FQ : 0);
	if ((rc = qp_tc_alive_set(t->prog, &t->alive)))
		qpaced_log(AGENT_LOG_WARN, "tc egress: heartbeat: %s", strerror(-rc));
}

static void on_beat(struct ev_loop *loop, ev_timer *tm, int revents)
{
	(void)loop;
	(void)revents;
	beat(tm->data);
}

/* The pid of a live qpaced (not a zombie) that beats into the maps pinned in @dir, or 0. */
static pid_t live_owner(const char *dir)
{
	struct qp_tc_alive a;
	char path[40], stat[128];

	if (!dir[0] || qp_tc_pinned_alive(dir, &a) || !a.pid || a.pid == (uint32_t)getpid() ||
	    kill((pid_t)a.pid, 0))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/stat", a.pid);   /* "PID (COMM) STATE ..." */
	return read_line(path, stat, sizeof(stat)) == 0 && strstr(stat, " (qpaced) ") &&
			       !strstr(stat, " (qpaced) Z")
		       ? (pid_t)a.pid : 0;
}

struct takeover {
	struct qpaced *d;
	unsigned qps, dropped;
	uint32_t ndel;
	struct qp_tc_key *del;       /* entries to delete after the walk */
};

/* One rate entry a dead qpaced left: a discovered flow becomes a QP again (its QPN if
 * free, its last rate held), anything else is forgotten (a program's QP registers anew). */
static void take_one(void *ctx, const struct qp_tc_key *k, const struct qp_tc_rate *r)
{
	struct takeover *to = ctx;
	struct qpaced *d = to->d;
	struct qpaced_tc *t = d->tc;
	struct agent_qp_reg reg = { .peer_qpn = k->dqpn, .mtu_bytes = (uint32_t)d->cfg.wire_mtu,
				    .link_bps = t->line_bps,
				    .base_rtt_ns = qpaced_wire_rtt(d, t->line_bps) };
	struct agent_qp_view v;
	struct qp_tc_state st;
	struct wire_flow *w;
	qp_time_ns now = qp_now_ns();
	char err[CTL_TEXT_MAX];

	if (!(r->flags & QP_TC_F_DISCOVERED) || qp_tc_flow(t->prog, k, &st) ||
	    !wire_flow_addrs(&reg, st.ipv6, st.saddr, k->daddr))
		goto forget;
	reg.sport = st.sport;
	reg.qpn = r->qpn;
	if ((reg.qpn < QPACED_WIRE_QPN_BASE || reg.qpn >= QP_RATE_QPN_MAX ||
	     agent_qp_view(d->agent, reg.qpn, &v) != -ENOENT) && free_qpn(d, &reg.qpn))
		goto forget;
	if (agent_register(d->agent, &reg, QPACED_WIRE_OWNER, 0, now, err, sizeof(err)))
		goto forget;
	w = flow_add(t, k, reg.qpn, true, false, now);
	if (!w || agent_qp_view(d->agent, reg.qpn, &v)) {
		agent_unregister(d->agent, reg.qpn, now);
		goto forget;
	}
	w->held_bps = t->mode == QPACED_ENFORCE_TC ? r->rate_bps : 0;
	w->held_target = v.target_bps;
	w->wire.set_bps = r->rate_bps;
	agent_qp_wire(d->agent, reg.qpn, &w->wire);
	to->qps++;
	return;
forget:
	if (to->ndel < t->cap)
		to->del[to->ndel++] = *k;
	to->dropped++;
}

static void takeover(struct qpaced *d)
{
	struct qpaced_tc *t = d->tc;
	struct takeover to = { .d = d, .del = calloc(t->cap, sizeof(*to.del)) };
	struct qp_tc_alive old;

	if (!to.del)
		return;
	if (qp_tc_alive_get(t->prog, &old))
		old = (struct qp_tc_alive){ 0 };
	qp_tc_rates(t->prog, take_one, &to);
	for (uint32_t i = 0; i < to.ndel; i++)
		qp_tc_del_rate(t->prog, &to.del[i]);
	free(to.del);
	agent_count(d->agent, AGENT_C_WIRE_CREATED, to.qps);
	qpaced_log(AGENT_LOG_INFO, "tc egress: took over the maps pinned in %s (pid %u's, last "
		   "beat %.1f s ago): %u QPs from the wire again, %u entries forgotten",
		   qp_tc_pin_dir(t->prog), old.pid,
		   old.beat_ns ? (double)(qp_now_ns() - old.beat_ns) / 1e9 : 0.0, to.qps,
		   to.dropped);
}

/* --enforce off --dev IFACE: remove what a qpaced left there (a crash leaves it all). */
static int remove_left(struct qpaced *d, const char *pin_dir, char *err, size_t errlen)
{
	char msg[300], what[300] = "";
	unsigned rm;
	pid_t pid = live_owner(pin_dir);
	int rc, qrc;

	if (pid)
		return qp_errmsg(-EBUSY, err, errlen, "--enforce off --dev %s: qpaced pid %d "
				 "enforces on it: stop it (its exit removes everything)",
				 d->cfg.dev, (int)pid);
	rc = qp_tc_remove(d->cfg.dev, pin_dir, &rm, msg, sizeof(msg));
	if (rc)
		return qp_errmsg(rc, err, errlen, "--enforce off --dev %s: %s", d->cfg.dev, msg);
	/* the qdiscs as the dead qpaced's record says they were */
	qrc = qpaced_qdisc_left(d, d->cfg.dev, what, sizeof(what));
	if (qrc == -ENOENT && (rm & QP_TC_REMOVED_FQ_OURS) &&   /* an older qpaced's root fq */
	    qd_del((int)if_nametoindex(d->cfg.dev), TC_H_ROOT, 0, what, sizeof(what)) == 0)
		qrc = 0, snprintf(what, sizeof(what), "the kernel's default root (fq removed)");
	if (qrc && qrc != -ENOENT)
		qpaced_log(AGENT_LOG_WARN, "tc egress: --enforce off on %s: putting its qdiscs "
			   "back: %s", d->cfg.dev, qrc == -EPROTO ? "the record is not qpaced's"
			   : what[0] ? what : strerror(-qrc));
	qpaced_log(AGENT_LOG_INFO, "tc egress: --enforce off on %s: %s%s%s%s%s%s", d->cfg.dev,
		   rm & QP_TC_REMOVED_FILTER ? "the filter removed" : "no qpace filter",
		   rm & QP_TC_REMOVED_CLSACT ? ", clsact removed" : "",
		   qrc == 0 ? ", the qdiscs put back: it had " : "", qrc == 0 ? what : "",
		   rm & QP_TC_REMOVED_PINS ? ", the pinned maps removed" : "",
		   rm & QP_TC_REMOVED_UNKNOWN ? " (no pinned record of what qpaced installed: "
		   "clsact and the root qdisc are left as they are)" : "");
	return 0;
}

/* ---- open, close ---- */

int qpaced_tc_open(struct qpaced *d, char *err, size_t errlen)
{
	struct qpaced_tc *t;
	struct qp_tc_conf conf = qp_tc_conf_default();
	char msg[300 + QP_TC_PIN_DIR_MAX], pin_dir[QP_TC_PIN_DIR_MAX] = "";
	int rc;
	pid_t pid;

	if (strcmp(d->cfg.bpf_pin, "none") && d->cfg.dev[0] &&
	    snprintf(pin_dir, sizeof(pin_dir), "%s/%s", d->cfg.bpf_pin, d->cfg.dev) >=
		    (int)sizeof(pin_dir))
		return qp_errmsg(-ENAMETOOLONG, err, errlen, "--bpf-pin '%s': too long",
				 d->cfg.bpf_pin);
	if (d->cfg.enforce == QPACED_ENFORCE_OFF)   /* ecn-mark: qpaced_config_finish */
		return d->cfg.dev[0] ? remove_left(d, pin_dir, err, errlen) : 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	d->tc = t;
	t->mode = d->cfg.enforce;
	t->next_qpn = QPACED_WIRE_QPN_BASE;
	t->cap = d->cfg.agent.max_qps;
	t->flows = calloc(t->cap, sizeof(*t->flows));
	if (!t->flows)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	if (d->cfg.dev[0])
		snprintf(t->dev, sizeof(t->dev), "%s", d->cfg.dev);
	else if (rdma_netdev(t->dev, sizeof(t->dev)))
		return qp_errmsg(-ENODEV, err, errlen, "--enforce: no RDMA device with a RoCE "
				 "netdev in /sys/class/infiniband: give --dev IFACE");
	t->line_bps = d->cfg.wire_rate_bps ? d->cfg.wire_rate_bps : dev_speed(t->dev);
	if (!t->line_bps && t->mode == QPACED_ENFORCE_TC)
		return qp_errmsg(-EINVAL, err, errlen, "--enforce tc --dev %s: the device reports "
				 "no speed (virtio and many cloud NICs do not): give --wire-rate "
				 "RATE, the rate of the slowest link its RoCE flows cross; qpaced "
				 "does not guess it (flows are paced below it and start at a "
				 "quarter of it)", t->dev);
	if (!t->line_bps) {
		t->line_bps = QPACED_WIRE_DEF_LINE;
		qpaced_log(AGENT_LOG_INFO, "tc egress: %s reports no speed: QPs from the wire get "
			   "a 10 Gb/s line rate to observe (--wire-rate sets it)", t->dev);
	}
	t->timeout_ns = wire_ack_timeout_ns((unsigned)d->cfg.wire_timeout);
	t->floor_bps = wire_rate_floor(1, (uint32_t)d->cfg.wire_mtu, t->timeout_ns,
				       WIRE_ACK_SHARE);
	if (!pin_dir[0] && strcmp(d->cfg.bpf_pin, "none"))
		snprintf(pin_dir, sizeof(pin_dir), "%.*s/%s", (int)(sizeof(pin_dir) - 18),
			 d->cfg.bpf_pin, t->dev);
	if ((pid = live_owner(pin_dir)))
		return qp_errmsg(-EBUSY, err, errlen, "--dev %s: qpaced pid %d already enforces "
				 "on it (its maps are pinned in %s)", t->dev, (int)pid, pin_dir);
	t->alive = (struct qp_tc_alive){ .hold_ns = d->cfg.wire_hold_ns,
					 .pid = (uint32_t)getpid(),
					 .safe_bps = d->cfg.wire_safe_bps ? d->cfg.wire_safe_bps :
						     t->line_bps / 1000 * d->cfg.fb_safe_permille };
	if (t->alive.safe_bps < t->floor_bps)
		t->alive.safe_bps = t->floor_bps;
	if (t->alive.safe_bps > t->line_bps)
		t->alive.safe_bps = t->line_bps;
	/* --wire-start 0: a quarter of the line, for the program's frames before qpaced's
	 * answer and as the algorithm's init_rate: rxe hands over 64 frames of a new QP at
	 * once, stamped before any feedback is back, and three flows starting at the line
	 * filled a 128 KiB buffer (docs/enforce.md) */
	t->start_bps = start_of(d, t->line_bps);
	if (d->cfg.wire_start_bps && t->start_bps != d->cfg.wire_start_bps) {
		char a[32], b[32];

		qpaced_log(AGENT_LOG_WARN, "--wire-start %s: flows on %s start at %s (%s)",
			   qp_fmt_rate(d->cfg.wire_start_bps, a, sizeof(a)), t->dev,
			   qp_fmt_rate(t->start_bps, b, sizeof(b)), t->start_bps == t->line_bps ?
			   "the line rate" : "the floor, see --wire-timeout");
	}
	{
		char p[AGENT_PARAMS_MAX];
		struct cc_path path = { .line_bps = t->line_bps,
					.base_rtt_ns = qpaced_wire_rtt(d, t->line_bps),
					.mtu_bytes = (uint32_t)d->cfg.wire_mtu };
		struct cc *probe;

		if (wire_start_params(cc_find(d->cfg.cc), d->cfg.cc_params, t->start_bps, p,
				      sizeof(p)))
			return qp_errmsg(-EINVAL, err, errlen, "--cc-params '%s': too long with "
					 "init_rate=%llu added for QPs from the wire (%u "
					 "characters at most)", d->cfg.cc_params,
					 (unsigned long long)t->start_bps, AGENT_PARAMS_MAX - 1);
		/* the algorithm's own checks of that start on this line (init_rate at least
		 * its min_rate: refused, not raised unsaid), now rather than at each flow's
		 * registration */
		probe = cc_create(d->cfg.cc, &path, p, 0, msg, sizeof(msg));
		if (!probe)
			return qp_errmsg(-EINVAL, err, errlen, "--wire-start with --cc %s on %s's "
					 "line rate: %s", d->cfg.cc, t->dev, msg);
		cc_destroy(probe);
	}
	rc = qp_tc_open_pinned(&t->prog, pin_dir, msg, sizeof(msg));
	if (rc)
		return qp_errmsg(rc, err, errlen, "--enforce %s: %s", t->mode == QPACED_ENFORCE_TC
				 ? "tc" : "observe", msg);
	if (msg[0])
		qpaced_log(AGENT_LOG_WARN, "tc egress: %s%s", msg, qp_tc_pin_dir(t->prog)[0] ? ""
			   : ": unpinned, so a restarted qpaced cannot take its flows over");
	conf.mode = t->mode == QPACED_ENFORCE_TC ? QP_TC_MODE_ENFORCE : QP_TC_MODE_OBSERVE;
	conf.ecn_mark = d->cfg.ecn_mark;
	conf.start_bps = t->start_bps;
	conf.rtt = 1;   /* AckReq frames stamped: the ingress program's RTT samples */
	if (t->mode == QPACED_ENFORCE_TC)
		conf.ack_gap_ns = wire_ack_gap(t->timeout_ns, WIRE_ACK_SHARE);
	t->conf = conf;
	qp_tc_set_conf(t->prog, &conf);
	/* fq first: a device qpaced must leave as it is refuses here, before anything is
	 * attached */
	if (t->mode == QPACED_ENFORCE_TC &&
	    (rc = qpaced_qdisc_open(d, t->dev, d->cfg.wire_catchup_pct
				    ? wire_fq_maxrate(t->start_bps,
						      (unsigned)d->cfg.wire_catchup_pct, fq_cap(d))
				    : d->cfg.wire_fq_maxrate_bps, err, errlen)))
		return rc;
	rc = qp_tc_attach(t->prog, t->dev, msg, sizeof(msg));
	if (rc)
		return qp_errmsg(rc, err, errlen, "--dev %s: %s", t->dev, msg);
	if (qp_tc_took_over(t->prog))
		takeover(d);
	beat(d);
	ev_timer_init(&t->beat, on_beat, 0, (t->alive.hold_ns / 4 < QPACED_WIRE_BEAT_NS ?
					      t->alive.hold_ns / 4 : QPACED_WIRE_BEAT_NS) / 1e9);
	t->beat.data = d;
	ev_timer_again(d->loop, &t->beat);
	ev_io_init(&t->reports_io, on_reports, qp_tc_reports_fd(t->prog), EV_READ);
	t->reports_io.data = d;
	ev_io_start(d->loop, &t->reports_io);
	ev_timer_init(&t->sample, on_sample, QPACED_WIRE_SAMPLE_NS / 1e9,
		      QPACED_WIRE_SAMPLE_NS / 1e9);
	t->sample.data = d;
	ev_timer_start(d->loop, &t->sample);
	qpaced_log(AGENT_LOG_INFO, "tc egress: %s on %s: QPs from the wire get cc %s%s%s, "
		   "line %llu Mb/s, start %llu kb/s, rtt %llu us, mtu %llu; rates at least "
		   "%llu kb/s, an ACK asked at least every %u%% of ACK timeout %llu; if qpaced dies: "
		   "rates held %llu ms, then "
		   "at most %llu kb/s", t->mode == QPACED_ENFORCE_TC ? "pacing" :
		   "observing", t->dev, d->cfg.cc, d->cfg.cc_params[0] ? " " : "",
		   d->cfg.cc_params,
		   (unsigned long long)(t->line_bps / QP_MBPS),
		   (unsigned long long)(t->start_bps / 1000),
		   (unsigned long long)(qpaced_wire_rtt(d, t->line_bps) / 1000),
		   (unsigned long long)d->cfg.wire_mtu, (unsigned long long)(t->floor_bps / 1000),
		   WIRE_ACK_SHARE, (unsigned long long)d->cfg.wire_timeout,
		   (unsigned long long)(t->alive.hold_ns / QP_NS_PER_MS),
		   (unsigned long long)(t->alive.safe_bps / 1000));
	return 0;
}

int qpaced_tc_rtt_fd(const struct qpaced *d)
{
	return d->tc && d->tc->prog ? qp_tc_rtt_fd(d->tc->prog) : -1;
}

int qpaced_tc_flow_qpn(struct qpaced *d, const struct qp_tc_key *k, uint32_t *qpn)
{
	struct wire_flow *w = d->tc ? flow_find(d->tc, k) : NULL;

	if (!w)
		return -ENOENT;
	*qpn = w->qpn;
	return 0;
}

qp_time_ns qpaced_wire_rtt(const struct qpaced *d, qp_rate_bps line)
{
	return d->cfg.wire_rtt_ns ? d->cfg.wire_rtt_ns
				  : wire_rtt_auto(line, (uint32_t)d->cfg.wire_mtu);
}

const char *qpaced_tc_dev(const struct qpaced *d)
{
	return d->tc ? d->tc->dev : "";
}

qp_rate_bps qpaced_tc_line_bps(const struct qpaced *d)
{
	return d->tc ? d->tc->line_bps : QPACED_WIRE_DEF_LINE;
}

void qpaced_tc_close(struct qpaced *d)
{
	struct qpaced_tc *t = d->tc;

	if (!t)
		return;
	if (t->prog && d->loop) {
		ev_io_stop(d->loop, &t->reports_io);
		ev_timer_stop(d->loop, &t->sample);
		ev_timer_stop(d->loop, &t->beat);
	}
	qpaced_qdisc_close(d);
	qp_tc_unpin(t->prog);       /* a clean exit: nothing to take over */
	qp_tc_close(t->prog);       /* detaches the filter, and clsact if it was ours */
	free(t->flows);
	free(t);
	d->tc = NULL;
}
