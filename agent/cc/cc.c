/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The algorithm-independent half of qpace congestion control: parameter tables parsed and
 * checked, controllers created, events validated and dispatched through each algorithm's
 * table of handlers.
 *
 * Validation happens here, once, for every algorithm: an algorithm's handler never sees a
 * report with zero hops, more than QP_INT_MAX_HOPS, or a zero link rate, so no algorithm
 * can divide by zero or read past the caller's hop array.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"

/* ---- parameters ---- */

static const char *const type_hint[] = {
	[CC_P_DOUBLE] = "a number",
	[CC_P_RATE] = "a rate such as 100M or 25G",
	[CC_P_TIME] = "a time such as 900ns, 10us or 1ms",
	[CC_P_U32] = "a whole number",
	[CC_P_BYTES] = "a size such as 1500 or 64K",
};

static bool in_range(const struct cc_param *p, double v)
{
	bool lo = (p->flags & CC_P_MIN_OPEN) ? v > p->min : v >= p->min;
	bool hi = (p->flags & CC_P_MAX_OPEN) ? v < p->max : v <= p->max;
	return lo && hi;
}

static void store(const struct cc_param *p, void *params, double v)
{
	char *field = (char *)params + p->offset;

	switch (p->type) {
	case CC_P_DOUBLE:
		memcpy(field, &v, sizeof(v));
		break;
	case CC_P_RATE:
	case CC_P_TIME:
	case CC_P_BYTES: {
		uint64_t u = (uint64_t)v;
		memcpy(field, &u, sizeof(u));
		break;
	}
	case CC_P_U32: {
		uint32_t u = (uint32_t)v;
		memcpy(field, &u, sizeof(u));
		break;
	}
	}
}

static int parse_value(const struct cc_param *p, const char *s, double *out)
{
	uint64_t u;
	int rc;

	switch (p->type) {
	case CC_P_DOUBLE:
		return qp_parse_double(s, out);
	case CC_P_RATE:
		rc = qp_parse_rate(s, &u);
		break;
	case CC_P_TIME:
		rc = qp_parse_time(s, &u);
		break;
	case CC_P_BYTES:
		rc = qp_parse_bytes(s, &u);
		break;
	case CC_P_U32:
		rc = qp_parse_u64(s, &u);
		break;
	default:
		return -EINVAL;
	}
	if (rc == 0)
		*out = (double)u;
	return rc;
}

static const struct cc_param *find_param(const struct cc_ops *ops, const char *name, size_t len)
{
	for (const struct cc_param *p = ops->params; p && p->name; p++)
		if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
			return p;
	return NULL;
}

const struct cc_param *cc_param_find(const struct cc_ops *ops, const char *name)
{
	return find_param(ops, name, strlen(name));
}

static int range_error(const struct cc_ops *ops, const struct cc_param *p, const char *value,
		       char *err, size_t errlen)
{
	return qp_errmsg(-EINVAL, err, errlen, "%s: %s=%s is out of range: must be %s %g and %s %g (%s)",
		    ops->name, p->name, value, (p->flags & CC_P_MIN_OPEN) ? ">" : ">=", p->min,
		    (p->flags & CC_P_MAX_OPEN) ? "<" : "<=", p->max, p->doc);
}

int cc_params_parse(const struct cc_ops *ops, void *params, const char *text, char *err,
		    size_t errlen)
{
	const char *s = text ? text : "";

	memset(params, 0, ops->params_size);
	for (const struct cc_param *p = ops->params; p && p->name; p++)
		store(p, params, p->def);

	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', len);
		const struct cc_param *p;
		char value[64];
		double v;

		if (len == 0)
			return qp_errmsg(-EINVAL, err, errlen, "%s: empty parameter in \"%s\"", ops->name, text);
		if (!eq)
			return qp_errmsg(-EINVAL, err, errlen, "%s: \"%.*s\" is not key=value", ops->name, (int)len, s);
		p = find_param(ops, s, (size_t)(eq - s));
		if (!p)
			return qp_errmsg(-EINVAL, err, errlen, "%s: unknown parameter \"%.*s\" (see --help-params %s)",
				    ops->name, (int)(eq - s), s, ops->name);
		if ((size_t)(s + len - eq - 1) >= sizeof(value))
			return qp_errmsg(-EINVAL, err, errlen, "%s: value of %s is too long", ops->name, p->name);
		memcpy(value, eq + 1, (size_t)(s + len - eq - 1));
		value[s + len - eq - 1] = '\0';
		if (parse_value(p, value, &v))
			return qp_errmsg(-EINVAL, err, errlen, "%s: %s=\"%s\" is not %s", ops->name, p->name, value,
				    type_hint[p->type]);
		if (!in_range(p, v))
			return range_error(ops, p, value, err, errlen);
		store(p, params, v);
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* ---- controllers ---- */

static int check_path(const struct cc_ops *ops, const struct cc_path *path, char *err,
		      size_t errlen)
{
	if (!path)
		return qp_errmsg(-EINVAL, err, errlen, "%s: no path given", ops->name);
	if (path->line_bps == 0)
		return qp_errmsg(-EINVAL, err, errlen, "%s: line rate must be > 0", ops->name);
	if (path->base_rtt_ns == 0)
		return qp_errmsg(-EINVAL, err, errlen, "%s: base RTT must be > 0", ops->name);
	if (path->mtu_bytes == 0)
		return qp_errmsg(-EINVAL, err, errlen, "%s: MTU must be > 0 bytes", ops->name);
	return 0;
}

struct cc *cc_create_ops(const struct cc_ops *ops, const struct cc_path *path,
			 const char *params, qp_time_ns now, char *err, size_t errlen)
{
	void *p = NULL;
	struct cc *cc = NULL;

	if (check_path(ops, path, err, errlen))
		return NULL;
	p = calloc(1, ops->params_size ? ops->params_size : 1);
	if (!p) {
		qp_errmsg(-EINVAL, err, errlen, "%s: out of memory", ops->name);
		return NULL;
	}
	if (cc_params_parse(ops, p, params, err, errlen))
		goto out;
	if (ops->check && ops->check(p, path, err, errlen))
		goto out;
	cc = calloc(1, ops->state_size);
	if (!cc) {
		qp_errmsg(-EINVAL, err, errlen, "%s: out of memory", ops->name);
		goto out;
	}
	cc->ops = ops;
	cc->path = *path;
	cc->rate_bps = path->line_bps;
	cc->cap_bytes = CC_CAP_NONE;
	cc->timer_ns = QP_TIME_NEVER;
	ops->init(cc, p, now);
out:
	free(p);
	return cc;
}

void cc_destroy(struct cc *cc)
{
	free(cc);
}

static const unsigned event_need[CC_EV_COUNT] = {
	[CC_EV_INT] = CC_NEED_INT, [CC_EV_NOTICE] = CC_NEED_NOTICE,
	[CC_EV_CNP] = CC_NEED_CNP, [CC_EV_LEVEL] = CC_NEED_LEVEL,
	[CC_EV_RTT] = CC_NEED_RTT, [CC_EV_ACKED] = CC_NEED_ACK,
	[CC_EV_NAK] = CC_NEED_LOSS, [CC_EV_TIMEOUT] = CC_NEED_LOSS,
	[CC_EV_FLOW_START] = CC_NEED_FLOW,
};

unsigned cc_event_need(enum cc_event_type type)
{
	return (unsigned)type < CC_EV_COUNT ? event_need[type] : 0;
}

unsigned cc_needs(const struct cc_ops *ops)
{
	unsigned n = ops->feedback.ecn_echo ? CC_NEED_ECN : 0;

	for (unsigned t = 0; t < CC_EV_COUNT; t++)
		if (ops->on[t])
			n |= event_need[t];
	return n;
}

size_t cc_counter_count(const struct cc_ops *ops)
{
	size_t n = 0;

	while (ops->counters && ops->counters[n].name)
		n++;
	return n;
}

uint64_t cc_counter_value(const struct cc *cc, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)cc + cc->ops->counters[i].offset, sizeof(v));
	return v;
}

/* Structural validity of an event, independent of the algorithm. */
static bool event_valid(const struct cc_event *ev)
{
	switch (ev->type) {
	case CC_EV_INT:
		if (ev->u.int_report.nhops == 0 || ev->u.int_report.nhops > QP_INT_MAX_HOPS ||
		    !ev->u.int_report.hops)
			return false;
		for (unsigned i = 0; i < ev->u.int_report.nhops; i++)
			if (ev->u.int_report.hops[i].link_bps == 0)
				return false;
		return true;
	case CC_EV_NOTICE:
		return ev->u.notice.link_bps != 0;
	case CC_EV_LEVEL:
		return ev->u.level <= CC_LEVEL_SEVERE;
	case CC_EV_RTT:
		return ev->u.rtt.rtt_ns != 0 && ev->u.rtt.host_ns <= ev->u.rtt.rtt_ns;
	case CC_EV_ACKED:
		return ev->u.ack.bytes != 0 && ev->u.ack.ecn <= CC_ECN_CE;
	default:
		return true;
	}
}

static unsigned note_change(struct cc *cc, qp_rate_bps rate, uint64_t cap, unsigned act)
{
	if (cc->rate_bps != rate || cc->cap_bytes != cap)
		act |= CC_ACT_RATE;
	else
		act &= ~CC_ACT_RATE;
	if (act & CC_ACT_RATE)
		cc->stats.rate_changes++;
	return act;
}

unsigned cc_event(struct cc *cc, const struct cc_event *ev, qp_time_ns now)
{
	qp_rate_bps rate = cc->rate_bps;
	uint64_t cap = cc->cap_bytes;
	cc_event_fn fn;

	if ((unsigned)ev->type >= CC_EV_COUNT)
		return 0;
	if (!event_valid(ev)) {
		cc->stats.rejected[ev->type]++;
		return 0;
	}
	cc->stats.events[ev->type]++;
	fn = cc->ops->on[ev->type];
	if (!fn)
		return 0;
	return note_change(cc, rate, cap, fn(cc, ev, now));
}

unsigned cc_timer(struct cc *cc, qp_time_ns now)
{
	qp_rate_bps rate = cc->rate_bps;
	uint64_t cap = cc->cap_bytes;

	if (!cc->ops->on_timer || cc->timer_ns == QP_TIME_NEVER || now < cc->timer_ns)
		return 0;
	cc->stats.timers++;
	return note_change(cc, rate, cap, cc->ops->on_timer(cc, now));
}
