/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent core: QPs, their controllers and rate-table slots, timers, the send queue and
 * monitoring views (the contract is in qpace/agent.h). Feedback intake is in
 * core_feedback.c, IA credits in core_credit.c, indexes and the timer heap in core_map.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/fb_auth.h"
#include "qpace/units.h"
#include "core_priv.h"

/* ---- counters ---- */

static const struct {
	const char *name, *help;
} counter_info[AGENT_C_COUNT] = {
	[AGENT_C_FB_DATAGRAMS] = { "feedback_datagrams", "feedback datagrams received" },
	[AGENT_C_FB_ACCEPTED] = { "feedback_accepted", "feedback messages accepted" },
	[AGENT_C_FB_REJ_SOURCE] = { "feedback_rejected_source",
				    "feedback from a source not on the allow-list" },
	[AGENT_C_FB_REJ_NOTAG] = { "feedback_rejected_notag",
				   "feedback without an authentication tag (key set)" },
	[AGENT_C_FB_REJ_TAG] = { "feedback_rejected_tag",
				 "feedback whose authentication tag is wrong" },
	[AGENT_C_FB_MAL_PROTO] = { "feedback_malformed_proto", "feedback with a wrong magic or version" },
	[AGENT_C_FB_MAL_TRUNC] = { "feedback_malformed_truncated", "truncated feedback messages" },
	[AGENT_C_FB_MAL_FIELD] = { "feedback_malformed_field", "feedback with a field out of range" },
	[AGENT_C_FB_MAL_TYPE] = { "feedback_malformed_type", "feedback of an unknown type" },
	[AGENT_C_FB_MAL_OVERSIZE] = { "feedback_malformed_oversize",
				      "datagrams longer than any feedback message" },
	[AGENT_C_FB_KERNEL_DROPS] = { "feedback_kernel_drops",
				      "feedback the kernel dropped: socket buffer full" },
	[AGENT_C_FB_UNKNOWN_FLOW] = { "feedback_unknown_flow", "feedback for no local QP" },
	[AGENT_C_FB_IGNORED] = { "feedback_ignored", "feedback with nothing to do here" },
	[AGENT_C_FB_CC_REJECTED] = { "feedback_cc_rejected", "events a controller rejected" },
	[AGENT_C_FB_DUP_CREDIT] = { "feedback_credit_duplicate", "credit grants seen before" },
	[AGENT_C_RATE_WRITES] = { "rate_writes", "rate-table updates" },
	[AGENT_C_ECHOES] = { "echoes_sent", "INT reports echoed to senders' agents" },
	[AGENT_C_GRANTS] = { "credit_grants_sent", "credit grants sent to senders' agents" },
	[AGENT_C_LEVEL_ACKS] = { "level_acks_sent", "congestion-level acknowledgements sent" },
	[AGENT_C_TX_DROPPED] = { "tx_dropped", "datagrams dropped on a full send queue" },
	[AGENT_C_CREDIT_EXPIRED] = { "credit_expired", "credit gating ended for lack of grants" },
	[AGENT_C_REG_OK] = { "registrations", "QPs registered" },
	[AGENT_C_UNREG_OK] = { "unregistrations", "QPs unregistered" },
	[AGENT_C_REAPED] = { "reaped", "QPs removed after their process went away" },
	[AGENT_C_REG_BAD] = { "registrations_rejected_field",
			      "registrations with a field out of range" },
	[AGENT_C_REG_DUP] = { "registrations_rejected_duplicate",
			      "registrations of a QP already registered" },
	[AGENT_C_REG_FULL] = { "registrations_rejected_full",
			       "registrations beyond the QP limit" },
	[AGENT_C_REG_ALGO] = { "registrations_rejected_algorithm",
			       "registrations with an unknown algorithm or bad parameters" },
	[AGENT_C_CTL_MALFORMED] = { "control_malformed", "control messages that did not decode" },
	[AGENT_C_CTL_REJECTED] = { "control_rejected", "control requests refused" },
	[AGENT_C_OVERRIDES] = { "overrides", "manual rate or algorithm changes" },
	[AGENT_C_HTTP_BAD] = { "metrics_bad_requests", "metrics HTTP requests refused" },
	[AGENT_C_FB_REJ_REPLAY] = { "feedback_rejected_replay",
				    "signed feedback seen before or too old (key set)" },
	[AGENT_C_FB_REJ_FUTURE] = { "feedback_rejected_future",
				    "signed feedback from a clock too far ahead (key set)" },
	[AGENT_C_WIRE_CREATED] = { "wire_qps_created", "QPs created from flows on the wire" },
	[AGENT_C_WIRE_SKIPPED] = { "wire_reports_skipped",
				   "flows on the wire not made QPs (IPv6, ACK-only)" },
	[AGENT_C_WIRE_IDLE] = { "wire_qps_idle", "QPs from the wire removed when quiet" },
	[AGENT_C_WIRE_FLOORED] = { "wire_qps_floored", "times a QP from the wire was paced at "
				   "the no-timeout floor, above its algorithm's rate" },
	[AGENT_C_FB_SENDERS_EVICTED] = { "feedback_senders_evicted",
					 "replay windows forgotten to make room for a sender" },
	[AGENT_C_WANTS_SENT] = { "int_wants_sent", "INT wishes and withdrawals sent to the "
				 "switches on a flow's path" },
	[AGENT_C_FB_WANT_SEEN] = { "feedback_want_seen", "peers' INT wishes that reached this "
				   "host (nothing to do)" },
	[AGENT_C_TXPSN_STALE] = { "txpsn_stale", "INT about a packet past the sender's last "
				  "reported posted PSN: snd_nxt estimated" },
	[AGENT_C_TP_ACKS] = { "transport_acks", "ACKs the QPs' transports reported" },
	[AGENT_C_TP_RTT] = { "transport_rtt_samples", "RTT samples the QPs' transports "
			     "reported" },
	[AGENT_C_TP_NAKS] = { "transport_naks", "NAK sequence errors the QPs' transports "
			      "reported" },
	[AGENT_C_TP_TIMEOUTS] = { "transport_timeouts", "retransmission timeouts the QPs' "
				  "transports reported" },
	[AGENT_C_TP_UNKNOWN] = { "transport_unknown_qp", "transport events for no registered "
				 "QP" },
};

const char *agent_counter_name(enum agent_counter c)
{
	return (unsigned)c < AGENT_C_COUNT ? counter_info[c].name : "unknown";
}

const char *agent_counter_help(enum agent_counter c)
{
	return (unsigned)c < AGENT_C_COUNT ? counter_info[c].help : "unknown";
}

const uint64_t *agent_counters(const struct agent *a)
{
	return a->counters;
}

/* ---- logging ---- */

static void agent_vlog(struct agent *a, enum agent_log_kind kind, const char *fmt, va_list ap)
{
	char line[320];

	if (!a->p.log)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	a->p.log(a->p.log_arg, kind, line);
}

void agent_log(struct agent *a, enum agent_log_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	agent_vlog(a, kind, fmt, ap);
	va_end(ap);
}

void agent_count(struct agent *a, enum agent_counter c, uint64_t n)
{
	if ((unsigned)c < AGENT_C_COUNT)
		a->counters[c] += n;
}

void agent_note(struct agent *a, enum agent_counter c, const char *fmt, ...)
{
	va_list ap;
	char line[280];

	if ((unsigned)c >= AGENT_C_COUNT)
		return;
	a->counters[c]++;
	if (a->logged & (1ULL << c))
		return;
	a->logged |= 1ULL << c;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	agent_log(a, AGENT_LOG_WARN, "%s (first of its kind; more are counted in %s)", line,
		  counter_info[c].name);
}

_Static_assert(AGENT_C_COUNT <= 64, "agent->logged is a 64-bit mask");

/* ---- allow-list networks ---- */

int agent_net_parse(const char *s, struct agent_net *out)
{
	const char *e;
	uint32_t ip;
	unsigned long prefix = 32;

	if (strcmp(s, "any") == 0) {
		*out = (struct agent_net){ 0, 0 };
		return 0;
	}
	if (qp_ipv4_scan(s, &e, &ip))
		return -EINVAL;
	if (*e == '/') {
		char *pe;

		if (e[1] < '0' || e[1] > '9')
			return -EINVAL;
		prefix = strtoul(e + 1, &pe, 10);
		if (prefix > 32 || *pe)
			return -EINVAL;
	} else if (*e) {
		return -EINVAL;
	}
	*out = (struct agent_net){ ip, (uint8_t)prefix };
	return 0;
}

bool agent_net_match(const struct agent_net *n, uint32_t ip)
{
	uint32_t mask = n->prefix ? ~0u << (32 - n->prefix) : 0;

	return (ip & mask) == (n->addr & mask);
}

/* ---- create ---- */

void agent_params_default(struct agent_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_qps = AGENT_DEF_MAX_QPS;
	p->cc = "hpcc";
	p->peer_port = FB_PORT;
	p->tx_queue = AGENT_DEF_TX_QUEUE;
	p->max_senders = AGENT_DEF_SENDERS;
	p->seed = 1;
	p->allow[0] = (struct agent_net){ 0x7f000000u, 8 };
	p->nallow = 1;
}

static int check_params(const struct agent_params *p, const struct qp_ratetable *t, char *err,
			size_t errlen)
{
	const struct cc_ops *ops = cc_find(p->cc);
	void *buf;
	int rc;

	if (p->max_qps < 1 || p->max_qps > AGENT_MAX_QPS)
		return qp_errmsg(-EINVAL, err, errlen, "max-qps %u out of range 1..%u", p->max_qps,
				 AGENT_MAX_QPS);
	if (p->int_every > AGENT_MAX_INT_EVERY)
		return qp_errmsg(-EINVAL, err, errlen, "int-sample every=%u out of range 1..%u",
				 p->int_every, AGENT_MAX_INT_EVERY);
	if (p->tx_queue < 1 || p->tx_queue > AGENT_MAX_TX_QUEUE)
		return qp_errmsg(-EINVAL, err, errlen, "tx queue %u out of range 1..%u",
				 p->tx_queue, AGENT_MAX_TX_QUEUE);
	if (p->nallow > AGENT_MAX_ALLOW)
		return qp_errmsg(-EINVAL, err, errlen, "%u allow entries, at most %u", p->nallow,
				 AGENT_MAX_ALLOW);
	if (p->peer_port == 0)
		return qp_errmsg(-EINVAL, err, errlen, "peer port 0 out of range 1..65535");
	if (p->have_key && (p->max_senders < 1 || p->max_senders > FB_REPLAY_MAX_SENDERS))
		return qp_errmsg(-EINVAL, err, errlen, "max senders %u out of range 1..%u",
				 p->max_senders, FB_REPLAY_MAX_SENDERS);
	if (!t || qp_ratetable_nslots(t) < p->max_qps)
		return qp_errmsg(-EINVAL, err, errlen, "rate table has %u slots, max-qps is %u",
				 t ? qp_ratetable_nslots(t) : 0, p->max_qps);
	if (!ops) {
		/* unknown: cc_create's message lists the known names */
		(void)cc_create(p->cc, NULL, NULL, 0, err, errlen);
		return -ENOENT;
	}
	if (strlen(ops->name) >= AGENT_ALGO_MAX ||
	    (p->cc_params && strlen(p->cc_params) >= AGENT_PARAMS_MAX))
		return qp_errmsg(-EINVAL, err, errlen, "cc parameters longer than %u characters",
				 AGENT_PARAMS_MAX - 1);
	buf = calloc(1, ops->params_size ? ops->params_size : 1);
	if (!buf)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	rc = cc_params_parse(ops, buf, p->cc_params, err, errlen);
	free(buf);
	return rc;
}

struct agent *agent_create(const struct agent_params *p, struct qp_ratetable *table,
			   qp_time_ns now, char *err, size_t errlen)
{
	struct agent *a;

	if (check_params(p, table, err, errlen))
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		goto oom;
	a->p = *p;
	a->grant_seq = (uint32_t)(now / QP_NS_PER_US);
	snprintf(a->cc_default, sizeof(a->cc_default), "%s", p->cc);
	snprintf(a->cc_default_params, sizeof(a->cc_default_params), "%s",
		 p->cc_params ? p->cc_params : "");
	a->p.cc = a->cc_default;
	a->p.cc_params = a->cc_default_params;
	fb_signer_init(&a->signer, p->key, p->sender_id);
	a->table = table;
	a->qps = calloc(p->max_qps, sizeof(*a->qps));
	a->free_idx = calloc(p->max_qps, sizeof(*a->free_idx));
	a->heap = calloc(p->max_qps, sizeof(*a->heap));
	a->txq = calloc(p->tx_queue, sizeof(*a->txq));
	if (!a->qps || !a->free_idx || !a->heap || !a->txq ||
	    (p->have_key && fb_replay_init(&a->replay, p->max_senders, now + p->clock_offset_ns)) ||
	    agent_map_init(&a->by_qpn, p->max_qps) || agent_map_init(&a->by_flow, p->max_qps))
		goto oom;
	for (uint32_t i = 0; i < p->max_qps; i++)
		a->free_idx[i] = p->max_qps - 1 - i;
	a->nfree = p->max_qps;
	return a;
oom:
	agent_destroy(a);
	qp_errmsg(-ENOMEM, err, errlen, "agent: out of memory for %u QPs", p->max_qps);
	return NULL;
}

void agent_destroy(struct agent *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; a->qps && i < a->p.max_qps; i++)
		cc_destroy(a->qps[i].cc);
	for (unsigned i = 0; i < AGENT_MAX_LINKS; i++)
		credit_destroy(a->links[i].pacer);
	agent_map_fini(&a->by_qpn);
	agent_map_fini(&a->by_flow);
	fb_replay_fini(&a->replay);
	free(a->qps);
	free(a->free_idx);
	free(a->heap);
	free(a->txq);
	free(a);
}

/* ---- rate table, timers, send queue ---- */

bool agent_publish(struct agent *a, struct agent_qp *q, qp_time_ns now)
{
	qp_rate_bps rate = q->override_bps ? q->override_bps : q->cc->rate_bps;
	/* The controller's in-flight cap goes with its rate (an operator's rate has none). */
	uint64_t cap = q->override_bps || q->cc->cap_bytes == CC_CAP_NONE ? 0 : q->cc->cap_bytes;
	uint32_t flags = q->credit_gated ? QP_RATE_F_CREDITS : 0;

	if (rate == q->published_bps && cap == q->published_cap && flags == q->published_flags)
		return false;
	if (qp_ratetable_set(a->table, (uint32_t)q->slot, rate, cap, flags, now))
		return false;
	q->published_bps = rate;
	q->published_cap = cap;
	q->published_flags = flags;
	a->counters[AGENT_C_RATE_WRITES]++;
	return true;
}

void agent_reschedule(struct agent *a, uint32_t idx)
{
	struct agent_qp *q = &a->qps[idx];

	q->deadline_ns = qp_time_min(qp_time_min(q->cc->timer_ns, q->credit_expiry_ns),
				     q->want_ns);
	agent_heap_update(a, idx);
}

bool agent_send(struct agent *a, const struct fb_msg *m, uint32_t ip, uint16_t port,
		qp_time_ns now)
{
	struct agent_dgram *d;
	int len;

	if (a->tx_len == a->p.tx_queue) {
		char ips[QP_IPV4_STRLEN];

		agent_note(a, AGENT_C_TX_DROPPED, "send queue full (%u datagrams): %s to %s:%u dropped",
			   a->p.tx_queue, fb_type_name(m->type), qp_ipv4_fmt(ip, ips, sizeof(ips)),
			   port);
		return false;
	}
	d = &a->txq[(a->tx_head + a->tx_len) % a->p.tx_queue];
	len = fb_encode(d->buf, sizeof(d->buf), m);
	if (len > 0 && a->p.have_key)
		len = fb_signer_sign(&a->signer, d->buf, sizeof(d->buf), (size_t)len,
				     now + a->p.clock_offset_ns);
	if (len <= 0)
		return false; /* our own message: cannot happen with the sizes used */
	d->len = (uint16_t)len;
	d->dst_ip = ip;
	d->dst_port = port;
	a->tx_len++;
	return true;
}

unsigned agent_tx_take(struct agent *a, struct agent_dgram *out, unsigned max)
{
	unsigned n = 0;

	while (n < max && a->tx_len) {
		out[n++] = a->txq[a->tx_head];
		a->tx_head = (a->tx_head + 1) % a->p.tx_queue;
		a->tx_len--;
	}
	return n;
}

unsigned agent_tx_pending(const struct agent *a)
{
	return a->tx_len;
}

/* ---- registration ---- */

static void qp_remove(struct agent *a, uint32_t idx, qp_time_ns now);

/* Ranges of the numeric registration fields: one table, one message format. */
static const struct reg_field {
	const char *name;
	size_t offset, size;
	uint64_t min, max;
} reg_fields[] = {
#define RF(f, lo, hi) { #f, offsetof(struct agent_qp_reg, f), \
			sizeof(((struct agent_qp_reg *)0)->f), (lo), (hi) }
	RF(qpn, 0, QP_RATE_QPN_MAX),
	RF(peer_qpn, 0, QP_RATE_QPN_MAX),
	RF(local_ip, 0, UINT32_MAX),   /* not 0 but for IPv6: agent_flow_check */
	RF(peer_ip, 0, UINT32_MAX),
	RF(flags, 0, AGENT_QP_FLAGS_ALL),
	RF(mtu_bytes, AGENT_MIN_MTU, AGENT_MAX_MTU),
	RF(link_bps, AGENT_MIN_LINK_BPS, AGENT_MAX_LINK_BPS),
	RF(base_rtt_ns, AGENT_MIN_RTT_NS, AGENT_MAX_RTT_NS),
#undef RF
};

static uint64_t field_value(const void *base, size_t offset, size_t size)
{
	const char *p = (const char *)base + offset;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (size) {
	case 8:
		memcpy(&v64, p, 8);
		return v64;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v16, p, 2);
		return v16;
	}
}

static int reg_check(struct agent *a, const struct agent_qp_reg *r, char *err, size_t errlen)
{
	char why[160];

	for (size_t i = 0; i < sizeof(reg_fields) / sizeof(reg_fields[0]); i++) {
		const struct reg_field *f = &reg_fields[i];
		uint64_t v = field_value(r, f->offset, f->size);

		if (v >= f->min && v <= f->max)
			continue;
		qp_errmsg(-EINVAL, err, errlen,
			  "register qp 0x%06x: %s=%llu out of range %llu..%llu", r->qpn & 0xffffffu,
			  f->name, (unsigned long long)v, (unsigned long long)f->min,
			  (unsigned long long)f->max);
		agent_note(a, AGENT_C_REG_BAD, "%s", err);
		return -EINVAL;
	}
	if (!memchr(r->algo, 0, sizeof(r->algo)) || !memchr(r->params, 0, sizeof(r->params))) {
		qp_errmsg(-EINVAL, err, errlen, "register qp 0x%06x: algorithm name or parameters "
			  "not terminated", r->qpn);
		agent_note(a, AGENT_C_REG_BAD, "%s", err);
		return -EINVAL;
	}
	if (agent_flow_check(r, why, sizeof(why))) {
		qp_errmsg(-EINVAL, err, errlen, "register qp 0x%06x: %s", r->qpn, why);
		agent_note(a, AGENT_C_REG_BAD, "%s", err);
		return -EINVAL;
	}
	return 0;
}

static int reg_unique(struct agent *a, const struct agent_qp_reg *r, char *err, size_t errlen)
{
	uint32_t idx = agent_map_find_qpn(a, r->qpn);
	char ips[QP_IPV6_STRLEN];

	if (idx == AGENT_NO_IDX)
		idx = r->flags & AGENT_QP_IPV6
			      ? agent_map_find_flow6(a, r->local_ip6, r->peer_ip6, r->peer_qpn)
			      : agent_map_find_flow(a, r->local_ip, r->peer_ip, r->peer_qpn);
	if (idx != AGENT_NO_IDX) {
		qp_errmsg(-EEXIST, err, errlen,
			  "register qp 0x%06x: qp 0x%06x (pid %u) already has qpn or flow to %s "
			  "qp 0x%06x", r->qpn, a->qps[idx].reg.qpn, a->qps[idx].pid,
			  agent_qp_addr_fmt(r, true, ips, sizeof(ips)), r->peer_qpn);
		agent_note(a, AGENT_C_REG_DUP, "%s", err);
		return -EEXIST;
	}
	if (!a->nfree) {
		qp_errmsg(-ENOSPC, err, errlen, "register qp 0x%06x: %u QPs registered, the limit "
			  "(max-qps)", r->qpn, a->p.max_qps);
		agent_note(a, AGENT_C_REG_FULL, "%s", err);
		return -ENOSPC;
	}
	return 0;
}

/* A controller for @r's path: algo "" = the default with its parameters. */
static struct cc *reg_cc(struct agent *a, struct agent_qp_reg *r, qp_time_ns now, int *rc,
			 char *err, size_t errlen)
{
	struct cc_path path = { r->link_bps, r->base_rtt_ns, r->mtu_bytes };
	struct cc *cc;
	char msg[200];

	if (!r->algo[0]) {
		snprintf(r->algo, sizeof(r->algo), "%s", a->cc_default);
		if (!r->params[0])
			snprintf(r->params, sizeof(r->params), "%s", a->cc_default_params);
	}
	cc = cc_create(r->algo, &path, r->params, now, msg, sizeof(msg));
	if (!cc) {
		*rc = cc_find(r->algo) ? -EINVAL : -ENOENT;
		qp_errmsg(*rc, err, errlen, "qp 0x%06x: %s", r->qpn, msg);
	}
	return cc;
}

int agent_register(struct agent *a, const struct agent_qp_reg *reg, uint32_t owner,
		   uint32_t pid, qp_time_ns now, char *err, size_t errlen)
{
	struct agent_qp_reg r = *reg;
	struct agent_qp *q;
	struct cc *cc;
	uint32_t idx;
	int slot, rc;

	if ((rc = reg_check(a, &r, err, errlen)) || (rc = reg_unique(a, &r, err, errlen)))
		return rc;
	cc = reg_cc(a, &r, now, &rc, err, errlen);
	if (!cc) {
		agent_note(a, AGENT_C_REG_ALGO, "%s", err);
		return rc;
	}
	slot = qp_ratetable_assign(a->table, r.qpn);
	if (slot < 0) {
		cc_destroy(cc);
		qp_errmsg(-ENOSPC, err, errlen, "register qp 0x%06x: no free rate-table slot "
			  "(%u slots)", r.qpn, qp_ratetable_nslots(a->table));
		agent_note(a, AGENT_C_REG_FULL, "%s", err);
		return -ENOSPC;
	}
	idx = a->free_idx[--a->nfree];
	q = &a->qps[idx];
	*q = (struct agent_qp){
		.used = true, .reg = r, .owner = owner, .pid = pid, .cc = cc, .slot = slot,
		.heap_pos = AGENT_NO_IDX, .credit_expiry_ns = QP_TIME_NEVER, .link = -1,
		.rtt_ns = r.base_rtt_ns, .want_ns = QP_TIME_NEVER,
	};
	agent_map_add(a, &a->by_qpn, idx);
	agent_map_add(a, &a->by_flow, idx);
	a->nqps++;
	if ((r.flags & (AGENT_QP_RECEIVER | AGENT_QP_READER)) && a->p.credits &&
	    (rc = agent_link_join(a, idx, now, err, errlen))) {
		agent_note(a, AGENT_C_REG_FULL, "%s", err);
		qp_remove(a, idx, now);
		return rc;
	}
	agent_publish(a, q, now);
	agent_want_update(a, idx, now);
	agent_reschedule(a, idx);
	a->counters[AGENT_C_REG_OK]++;
	return 0;
}

static void qp_remove(struct agent *a, uint32_t idx, qp_time_ns now)
{
	struct agent_qp *q = &a->qps[idx];

	if (q->link >= 0)
		agent_link_leave(a, idx, now);
	agent_want_withdraw(a, idx, now);
	agent_heap_remove(a, idx);
	agent_map_del(a, &a->by_qpn, idx);
	agent_map_del(a, &a->by_flow, idx);
	qp_ratetable_release(a->table, (uint32_t)q->slot);
	cc_destroy(q->cc);
	memset(q, 0, sizeof(*q));
	a->free_idx[a->nfree++] = idx;
	a->nqps--;
}

int agent_unregister(struct agent *a, uint32_t qpn, qp_time_ns now)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	qp_remove(a, idx, now);
	a->counters[AGENT_C_UNREG_OK]++;
	return 0;
}

unsigned agent_unregister_owner(struct agent *a, uint32_t owner, qp_time_ns now)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < a->p.max_qps; i++) {
		if (a->qps[i].used && a->qps[i].owner == owner) {
			qp_remove(a, i, now);
			n++;
		}
	}
	a->counters[AGENT_C_REAPED] += n;
	return n;
}

/* ---- application events, overrides ---- */

static uint32_t find_or_note(struct agent *a, uint32_t qpn, const char *what)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	if (idx == AGENT_NO_IDX)
		agent_note(a, AGENT_C_CTL_REJECTED, "%s: no qp 0x%06x registered", what, qpn);
	return idx;
}

int agent_qp_event(struct agent *a, uint32_t qpn, const struct cc_event *ev, qp_time_ns now)
{
	uint32_t idx = find_or_note(a, qpn, "event");
	struct agent_qp *q;
	uint64_t rejected;

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	if (ev->type >= CC_EV_COUNT)
		return -EINVAL;
	q = &a->qps[idx];
	rejected = q->cc->stats.rejected[ev->type];
	unsigned act = cc_event(q->cc, ev, now);
	if (q->cc->stats.rejected[ev->type] != rejected) {
		agent_note(a, AGENT_C_FB_CC_REJECTED, "qp 0x%06x: %s rejected a %d event",
			   qpn, q->cc->ops->name, ev->type);
		return -EINVAL;
	}
	if (ev->type == CC_EV_FLOW_START)   /* a new message: in the switches' counts again */
		agent_want_last(a, idx, false, now);
	agent_after_cc(a, idx, act, now);
	return 0;
}

int agent_qp_arrived(struct agent *a, uint32_t qpn, uint64_t bytes, qp_time_ns now)
{
	/* Not noted: data on a QP not registered (yet, or any more) is no error. */
	uint32_t idx = agent_map_find_qpn(a, qpn);

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	agent_link_arrived(a, idx, bytes, now);
	return 0;
}

int agent_qp_stats(struct agent *a, uint32_t qpn, uint64_t tx_bytes, uint64_t retransmissions)
{
	uint32_t idx = find_or_note(a, qpn, "stats");

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	a->qps[idx].tx_bytes = tx_bytes;
	a->qps[idx].retransmissions = retransmissions;
	return 0;
}

int agent_qp_txstate(struct agent *a, const struct ctl_txstate *t)
{
	uint32_t idx = find_or_note(a, t->qpn, "txstate");

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	if (t->psn > QP_RATE_QPN_MAX || t->enforce >= AGENT_ENF_COUNT)
		return -EINVAL;
	a->qps[idx].tx_psn = t->psn;
	a->qps[idx].tx_psn_valid = true;
	a->qps[idx].enforce = t->enforce;
	return 0;
}

int agent_qp_wire(struct agent *a, uint32_t qpn, const struct agent_qp_wire *w)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	if (idx == AGENT_NO_IDX)
		return -ENOENT;
	a->qps[idx].wire = *w;
	return 0;
}

int agent_set_rate(struct agent *a, uint32_t qpn, qp_rate_bps bps, uint32_t who_pid,
		   qp_time_ns now, char *err, size_t errlen)
{
	uint32_t idx = find_or_note(a, qpn, "set rate");
	struct agent_qp *q;
	char rs[32], ls[32];

	if (idx == AGENT_NO_IDX)
		return qp_errmsg(-ENOENT, err, errlen, "no qp 0x%06x registered", qpn);
	q = &a->qps[idx];
	if (bps && (bps < AGENT_MIN_LINK_BPS || bps > q->reg.link_bps)) {
		a->counters[AGENT_C_CTL_REJECTED]++;
		return qp_errmsg(-EINVAL, err, errlen, "qp 0x%06x: rate %s out of range 1k..%s "
				 "(its link rate)", qpn, qp_fmt_rate(bps, rs, sizeof(rs)),
				 qp_fmt_rate(q->reg.link_bps, ls, sizeof(ls)));
	}
	q->override_bps = bps;
	agent_publish(a, q, now);
	a->counters[AGENT_C_OVERRIDES]++;
	if (bps)
		agent_log(a, AGENT_LOG_INFO, "qp 0x%06x: manual rate %s (%s would say %s), set by "
			  "pid %u", qpn, qp_fmt_rate(bps, rs, sizeof(rs)), q->reg.algo,
			  qp_fmt_rate(q->cc->rate_bps, ls, sizeof(ls)), who_pid);
	else
		agent_log(a, AGENT_LOG_INFO, "qp 0x%06x: manual rate cleared, %s in control again "
			  "(pid %u)", qpn, q->reg.algo, who_pid);
	return 0;
}

int agent_set_algo(struct agent *a, uint32_t qpn, const char *algo, const char *params,
		   uint32_t who_pid, qp_time_ns now, char *err, size_t errlen)
{
	uint32_t idx = find_or_note(a, qpn, "set algo");
	struct agent_qp_reg r;
	struct cc *cc;
	int rc;

	if (idx == AGENT_NO_IDX)
		return qp_errmsg(-ENOENT, err, errlen, "no qp 0x%06x registered", qpn);
	r = a->qps[idx].reg;
	if (snprintf(r.algo, sizeof(r.algo), "%s", algo ? algo : "") >= (int)sizeof(r.algo) ||
	    snprintf(r.params, sizeof(r.params), "%s", params ? params : "") >=
		    (int)sizeof(r.params)) {
		a->counters[AGENT_C_CTL_REJECTED]++;
		return qp_errmsg(-EINVAL, err, errlen, "qp 0x%06x: algorithm name or parameters "
				 "too long (%u / %u characters at most)", qpn, AGENT_ALGO_MAX - 1,
				 AGENT_PARAMS_MAX - 1);
	}
	cc = reg_cc(a, &r, now, &rc, err, errlen);
	if (!cc) {
		a->counters[AGENT_C_CTL_REJECTED]++;
		return rc;
	}
	agent_log(a, AGENT_LOG_INFO, "qp 0x%06x: algorithm %s -> %s%s%s, set by pid %u", qpn,
		  a->qps[idx].reg.algo, r.algo, r.params[0] ? " " : "", r.params, who_pid);
	cc_destroy(a->qps[idx].cc);
	a->qps[idx].cc = cc;
	a->qps[idx].reg = r;
	a->counters[AGENT_C_OVERRIDES]++;
	agent_publish(a, &a->qps[idx], now);
	agent_want_update(a, idx, now);
	agent_reschedule(a, idx);
	return 0;
}

/* ---- timers ---- */

void agent_poll(struct agent *a, qp_time_ns now)
{
	/* Bounded: a controller whose timer stays due is served again on the next poll. */
	for (uint32_t n = a->heap_len; n && a->heap_len; n--) {
		uint32_t idx = a->heap[0];
		struct agent_qp *q = &a->qps[idx];

		if (q->deadline_ns > now)
			break;
		unsigned act = 0;

		if (q->credit_expiry_ns <= now)
			agent_credit_expire(a, idx, now);
		if (q->cc->timer_ns <= now)
			act = cc_timer(q->cc, now);
		if (q->want_ns <= now)
			agent_want_update(a, idx, now);
		agent_after_cc(a, idx, act, now);
	}
	agent_links_poll(a, now);
}

qp_time_ns agent_next_ns(const struct agent *a)
{
	qp_time_ns t = agent_links_next_ns(a);

	if (a->heap_len)
		t = qp_time_min(t, a->qps[a->heap[0]].deadline_ns);
	return t;
}

/* ---- views ---- */

uint32_t agent_qp_count(const struct agent *a)
{
	return a->nqps;
}

uint32_t agent_max_qps(const struct agent *a)
{
	return a->p.max_qps;
}

int agent_qp_view_at(const struct agent *a, uint32_t idx, struct agent_qp_view *v)
{
	const struct agent_qp *q;

	if (idx >= a->p.max_qps)
		return -ERANGE;
	q = &a->qps[idx];
	if (!q->used)
		return -ENOENT;
	*v = (struct agent_qp_view){
		.reg = q->reg, .owner = q->owner, .pid = q->pid, .slot = q->slot,
		.rate_bps = q->published_bps, .target_bps = q->cc->rate_bps,
		.cap_bytes = q->published_cap,
		.override = q->override_bps != 0, .credit_gated = q->credit_gated,
		.credits_rx_bytes = q->credits_rx_bytes, .credits_tx_bytes = q->credits_tx_bytes,
		.utilization = q->utilization, .queue_bytes = q->queue_bytes, .rtt_ns = q->rtt_ns,
		.tx_bytes = q->tx_bytes, .retransmissions = q->retransmissions,
		.feedback = q->feedback, .psn64 = q->psn64_max, .wire = q->wire,
		/* a QP from the wire is paced by tc when it has a rate there, else by nobody */
		.enforce = !q->wire.discovered ? q->enforce
			   : q->wire.set_bps ? AGENT_ENF_TC : AGENT_ENF_NONE,
	};
	return 0;
}

int agent_qp_view(const struct agent *a, uint32_t qpn, struct agent_qp_view *v)
{
	uint32_t idx = agent_map_find_qpn(a, qpn);

	return idx == AGENT_NO_IDX ? -ENOENT : agent_qp_view_at(a, idx, v);
}
