/* The print helper and the QP view's field table (see qpace/qp_print.h). */
#include <stddef.h>
#include <string.h>

#include "qp_print.h"
#include "qpace/units.h"

void qp_pr_init(struct qp_pr *p, FILE *f, enum qp_pr_mode mode)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->mode = mode;
	p->first[0] = true;
}

/* JSON: a comma between members, the key when inside an object. */
static void json_key(struct qp_pr *p, const char *key)
{
	if (!p->first[p->depth])
		fputc(',', p->f);
	p->first[p->depth] = false;
	if (key && !p->in_array[p->depth])
		fprintf(p->f, "\"%s\":", key);
}

static void text_indent(struct qp_pr *p)
{
	for (unsigned i = 1; i < p->depth; i++)
		fputs("  ", p->f);
}

void qp_pr_open(struct qp_pr *p, const char *key, bool array)
{
	if (p->depth + 1 >= QP_PR_DEPTH)
		return;
	if (p->mode == QP_PR_JSON) {
		json_key(p, key);
		fputc(array ? '[' : '{', p->f);
	} else if (key) {
		text_indent(p);
		fprintf(p->f, "%s:\n", key);
	}
	p->depth++;
	p->first[p->depth] = true;
	p->in_array[p->depth] = array;
}

void qp_pr_close(struct qp_pr *p)
{
	if (!p->depth)
		return;
	if (p->mode == QP_PR_JSON)
		fputc(p->in_array[p->depth] ? ']' : '}', p->f);
	else if (!p->in_array[p->depth] && p->depth > 1)
		fputc('\n', p->f);
	p->depth--;
	if (p->depth == 0)
		fputc('\n', p->f);
}

static void text_line(struct qp_pr *p, const char *key, const char *text)
{
	text_indent(p);
	fprintf(p->f, "%-18s %s\n", key, text);
}

void qp_pr_u64(struct qp_pr *p, const char *key, const char *text, uint64_t v)
{
	char t[32];

	if (p->mode == QP_PR_JSON) {
		json_key(p, key);
		fprintf(p->f, "%llu", (unsigned long long)v);
		return;
	}
	snprintf(t, sizeof(t), "%llu", (unsigned long long)v);
	text_line(p, key, text ? text : t);
}

void qp_pr_double(struct qp_pr *p, const char *key, const char *text, double v)
{
	char t[32];

	if (p->mode == QP_PR_JSON) {
		json_key(p, key);
		fprintf(p->f, "%.6g", v);
		return;
	}
	snprintf(t, sizeof(t), "%.3f", v);
	text_line(p, key, text ? text : t);
}

void qp_pr_str(struct qp_pr *p, const char *key, const char *v)
{
	if (p->mode == QP_PR_TEXT) {
		text_line(p, key, v);
		return;
	}
	json_key(p, key);
	fputc('"', p->f);
	for (const char *s = v; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(p->f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(p->f, "\\u%04x", *s);
		else
			fputc(*s, p->f);
	}
	fputc('"', p->f);
}

void qp_pr_bool(struct qp_pr *p, const char *key, bool v)
{
	if (p->mode == QP_PR_TEXT) {
		text_line(p, key, v ? "yes" : "no");
		return;
	}
	json_key(p, key);
	fputs(v ? "true" : "false", p->f);
}

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

static const char *bytes_fmt(uint64_t b, char *buf, size_t len)
{
	static const char units[] = " KMGTP";
	double v = (double)b;
	unsigned u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu", (unsigned long long)b);
	else
		snprintf(buf, len, "%.*f%c", v < 10 ? 1 : 0, v, units[u]);
	return buf;
}

const char *qp_view_cell(const struct qp_view_field *f, const struct agent_qp_view *v,
			 char *buf, size_t len)
{
	uint64_t u = field_u64(f, v);

	switch (f->kind) {
	case QF_QPN:
		snprintf(buf, len, "0x%06llx", (unsigned long long)u);
		break;
	case QF_IP:
		agent_ip_fmt((uint32_t)u, buf, len);
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
		bytes_fmt(u, buf, len);
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
	}
	return buf;
}

void qp_pr_view(struct qp_pr *p, const struct agent_qp_view *v)
{
	char text[64];

	qp_pr_open(p, NULL, false);
	for (const struct qp_view_field *f = fields; f->key; f++) {
		qp_view_cell(f, v, text, sizeof(text));
		switch (f->kind) {
		case QF_QPN:
		case QF_IP:
		case QF_STR:
			qp_pr_str(p, f->key, text);
			break;
		case QF_BOOL:
		case QF_RECEIVER:
			qp_pr_bool(p, f->key, field_u64(f, v) != 0);
			break;
		case QF_RATIO:
			qp_pr_double(p, f->key, text, field_double(f, v));
			break;
		case QF_I32:
			qp_pr_double(p, f->key, text, (double)(int64_t)field_u64(f, v));
			break;
		default:
			qp_pr_u64(p, f->key, text, field_u64(f, v));
			break;
		}
	}
	qp_pr_close(p);
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
	fputc('\n', out);
}

void qp_view_table_row(FILE *out, const struct agent_qp_view *v)
{
	for (const struct qp_view_field *f = fields; f->key; f++) {
		char cell[64];

		if (f->head)
			fprintf(out, "%-*s ", f->width, qp_view_cell(f, v, cell, sizeof(cell)));
	}
	fputc('\n', out);
}
