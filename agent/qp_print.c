/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP view's field table and the records qpacectl prints (see qpace/qp_print.h). */
#include <stddef.h>
#include <string.h>

#include "qp_print.h"
#include "qpace/addr.h"
#include "qpace/units.h"

/* ---- the QP view ---- */

#define VF(key, head, width, kind, member) \
	{ key, head, width, kind, offsetof(struct agent_qp_view, member), \
	  sizeof(((struct agent_qp_view *)0)->member) }

static const struct qp_view_field fields[] = {
	VF("qpn", "QPN", 8, QF_QPN, reg.qpn),
	VF("peer", "PEER", 15, QF_IP, reg.peer_ip),
	VF("peer_qpn", NULL, 8, QF_QPN, reg.peer_qpn),
	VF("local", NULL, 15, QF_IP, reg.local_ip),
	VF("algo", "ALGO", 6, QF_STR, reg.algo),
	VF("rate", "RATE", 8, QF_RATE, rate_bps),
	VF("target", "TARGET", 8, QF_RATE, target_bps),
	VF("enforce", "ENF", 5, QF_ENFORCE, enforce),
	VF("wire", "WIRE", 8, QF_RATE, wire.measured_bps),
	VF("wire_set", NULL, 8, QF_RATE, wire.set_bps),
	VF("wire_bytes", NULL, 8, QF_BYTES, wire.bytes),
	VF("wire_pkts", NULL, 8, QF_U64, wire.pkts),
	VF("wire_seen", NULL, 3, QF_BOOL, wire.seen),
	VF("discovered", NULL, 3, QF_BOOL, wire.discovered),
	VF("floored", "FLOOR", 5, QF_BOOL, wire.floored),
	VF("wire_resent", NULL, 8, QF_U64, wire.resent),
	VF("wire_ackreq", NULL, 8, QF_U64, wire.ackreqs),
	VF("window", NULL, 8, QF_BYTES, cap_bytes),
	VF("credits", "CREDITS", 8, QF_BYTES, credits_rx_bytes),
	VF("util", "UTIL", 6, QF_RATIO, utilization),
	VF("queue", "QUEUE", 7, QF_BYTES, queue_bytes),
	VF("rtt", "RTT", 8, QF_TIME, rtt_ns),
	VF("bytes", "BYTES", 8, QF_BYTES, tx_bytes),
	VF("retx", "RETX", 6, QF_U64, retransmissions),
	VF("credits_granted", NULL, 8, QF_BYTES, credits_tx_bytes),
	VF("credit_gated", NULL, 3, QF_BOOL, credit_gated),
	VF("override", NULL, 3, QF_BOOL, override),
	VF("line", NULL, 8, QF_RATE, reg.link_bps),
	VF("base_rtt", NULL, 8, QF_TIME, reg.base_rtt_ns),
	VF("mtu", NULL, 6, QF_U64, reg.mtu_bytes),
	VF("sport", NULL, 6, QF_U64, reg.sport),
	VF("params", NULL, 20, QF_STR, reg.params),
	VF("receiver", NULL, 3, QF_RECEIVER, reg.flags),
	VF("feedback", NULL, 8, QF_U64, feedback),
	VF("psn64", NULL, 12, QF_U64, psn64),
	VF("pid", NULL, 7, QF_U64, pid),
	VF("slot", NULL, 5, QF_I32, slot),
	{ .key = NULL },
};

/* A member's value, by its size (I32 sign-extended, RECEIVER masked from the flags). */
static uint64_t field_u64(const struct qp_view_field *f, const struct agent_qp_view *v)
{
	const char *p = (const char *)v + f->off;
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;

	switch (f->size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return f->kind == QF_RECEIVER ? (u16 & AGENT_QP_RECEIVER) != 0 : u16;
	case 4:
		memcpy(&u32, p, 4);
		return f->kind == QF_I32 ? (uint64_t)(int64_t)(int32_t)u32 : u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static double field_double(const struct qp_view_field *f, const struct agent_qp_view *v)
{
	double d;

	if (f->kind != QF_RATIO)
		return (double)field_u64(f, v);
	memcpy(&d, (const char *)v + f->off, sizeof(d));
	return d;
}

const struct qp_view_field *qp_view_fields(void)
{
	return fields;
}

const struct qp_view_field *qp_view_field_find(const char *key)
{
	for (const struct qp_view_field *f = fields; f->key; f++)
		if (strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

const char *qp_view_cell(const struct qp_view_field *f, const struct agent_qp_view *v,
			 char *buf, size_t len)
{
	uint64_t u = field_u64(f, v);

	switch (f->kind) {
	case QF_QPN:
		snprintf(buf, len, "0x%06llx", (unsigned long long)u);
		break;
	case QF_IP:   /* an IPv6 flow's from its 16-byte address (AGENT_QP_IPV6) */
		agent_qp_addr_fmt(&v->reg, f->off == offsetof(struct agent_qp_view, reg.peer_ip),
				  buf, len);
		break;
	case QF_STR:
		snprintf(buf, len, "%s", (const char *)v + f->off);
		break;
	case QF_RATE:
		qp_fmt_rate(u, buf, len);
		break;
	case QF_TIME:
		qp_fmt_time(u, buf, len);
		break;
	case QF_BYTES:
		qp_fmt_bytes_short(u, buf, len);
		break;
	case QF_RATIO:
		snprintf(buf, len, "%.2f", field_double(f, v));
		break;
	case QF_BOOL:
	case QF_RECEIVER:
		snprintf(buf, len, "%s", u ? "yes" : "no");
		break;
	case QF_I32:
		snprintf(buf, len, "%lld", (long long)(int64_t)u);
		break;
	case QF_U64:
		snprintf(buf, len, "%llu", (unsigned long long)u);
		break;
	case QF_ENFORCE:
		snprintf(buf, len, "%s", ctl_enforce_name((unsigned)u));
		break;
	}
	return buf;
}

void qp_print_view(struct qp_out *o, const struct agent_qp_view *v)
{
	qp_print_view_owned(o, v, NULL);
}

const struct rdma_nl_qp *qp_view_owner(const struct agent_qp_view *v,
				       const struct rdma_nl_qp *dump, size_t n)
{
	/* QPNs are 24 bits: UINT32_MAX matches no local QPN */
	return rdma_nl_find(dump, n, v->wire.discovered ? UINT32_MAX : v->reg.qpn,
			    v->wire.discovered ? v->reg.peer_qpn : 0);
}

const char *qp_owner_cell(const struct rdma_nl_qp *q, char *buf, size_t len)
{
	if (q && (q->has & RDMA_NL_HAS_PID))
		snprintf(buf, len, "%u/%s", q->pid, q->has & RDMA_NL_HAS_COMM ? q->comm : "?");
	else if (q && (q->has & RDMA_NL_HAS_COMM))
		snprintf(buf, len, "[%s]", q->comm);
	else
		snprintf(buf, len, "-");
	return buf;
}

static void print_owner(struct qp_out *o, const struct rdma_nl_qp *q)
{
	if (q->has & RDMA_NL_HAS_PID)
		qp_out_u64(o, "owner_pid", q->pid);
	if (q->has & RDMA_NL_HAS_COMM)
		qp_out_str(o, "owner_comm", q->comm);
	qp_out_str(o, "owner_dev", q->dev);
	qp_out_u64(o, "owner_lqpn", q->lqpn);
}

void qp_print_view_owned(struct qp_out *o, const struct agent_qp_view *v,
			 const struct rdma_nl_qp *owner)
{
	char text[64];

	qp_out_obj(o, NULL);
	for (const struct qp_view_field *f = fields; f->key; f++) {
		uint64_t u = field_u64(f, v);

		switch (f->kind) {
		case QF_QPN:
		case QF_IP:
		case QF_STR:
		case QF_ENFORCE:
			qp_out_str(o, f->key, qp_view_cell(f, v, text, sizeof(text)));
			break;
		case QF_BOOL:
		case QF_RECEIVER:
			qp_out_bool(o, f->key, u != 0);
			break;
		case QF_RATIO:
			qp_out_double2(o, f->key, field_double(f, v), "%.6g", "%.2f");
			break;
		case QF_I32:
			qp_out_i64(o, f->key, (int64_t)u);
			break;
		case QF_RATE:
			qp_out_rate(o, f->key, u);
			break;
		case QF_TIME:
			qp_out_time(o, f->key, u);
			break;
		case QF_BYTES:
			qp_out_bytes(o, f->key, u);
			break;
		case QF_U64:
			qp_out_u64(o, f->key, u);
			break;
		}
	}
	if (owner)
		print_owner(o, owner);
	qp_out_end(o);
}

void qp_print_status(struct qp_out *o, const struct ctl_agent *a)
{
	qp_out_obj(o, NULL);
	qp_out_u64(o, "pid", a->pid);
	qp_out_u64(o, "qps", a->qps);
	qp_out_u64(o, "max_qps", a->max_qps);
	qp_out_time(o, "uptime_ns", a->uptime_ns);
	qp_out_obj(o, "feedback_delay");
	qp_out_u64(o, "samples", a->delay_samples);
	qp_out_time(o, "p50_ns", a->delay_p50_ns);
	qp_out_time(o, "p99_ns", a->delay_p99_ns);
	qp_out_time(o, "max_ns", a->delay_max_ns);
	qp_out_end(o);
	qp_out_obj(o, "counters");
	for (int i = 0; i < AGENT_C_COUNT; i++)
		qp_out_u64(o, agent_counter_name(i), a->counters[i]);
	qp_out_end(o);
	qp_out_end(o);
}

int qp_view_cmp(const struct qp_view_field *f, const struct agent_qp_view *a,
		const struct agent_qp_view *b)
{
	double x, y;

	if (f->kind == QF_STR)
		return strcmp((const char *)a + f->off, (const char *)b + f->off);
	x = field_double(f, a);
	y = field_double(f, b);
	return x < y ? -1 : x > y;
}

void qp_view_table_header(FILE *out, const struct qp_view_field *sorted_by, bool descending)
{
	for (const struct qp_view_field *f = fields; f->key; f++) {
		char h[24];

		if (!f->head)
			continue;
		snprintf(h, sizeof(h), "%s%s", f->head,
			 f == sorted_by ? (descending ? "v" : "^") : "");
		fprintf(out, "%-*s ", f->width, h);
	}
	fputs("OWNER\n", out);
}

void qp_view_table_row(FILE *out, const struct agent_qp_view *v, const struct rdma_nl_qp *owner)
{
	char cell[96];

	for (const struct qp_view_field *f = fields; f->key; f++) {
		if (f->head)
			fprintf(out, "%-*s ", f->width, qp_view_cell(f, v, cell, sizeof(cell)));
	}
	fprintf(out, "%s\n", qp_owner_cell(owner, cell, sizeof(cell)));
}
