/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The printer: see qpace/out.h. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "qpace/out.h"
#include "qpace/units.h"

void qp_out_init(struct qp_out *o, FILE *f, enum qp_out_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->mode = mode;
	o->first[0] = true;
}

bool qp_out_json(const struct qp_out *o)
{
	return o->mode != QP_OUT_TEXT;
}

void qp_out_json_string(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		const char *esc = NULL;

		switch (*p) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\t': esc = "\\t"; break;
		case '\r': esc = "\\r"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		}
		if (esc) {
			fputs(esc, f);
		} else if (*p < 0x20) {
			fputs("\\u00", f);
			fputc(hex[*p >> 4], f);
			fputc(hex[*p & 15], f);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* ---- where a value goes ---- */

static void json_indent(struct qp_out *o)
{
	if (o->mode != QP_OUT_JSON_PRETTY)
		return;
	fputc('\n', o->f);
	for (int i = 0; i < o->depth; i++)
		fputs("  ", o->f);
}

/* Separator, indentation and key before a JSON value at the current depth. */
static void json_key(struct qp_out *o, const char *key)
{
	if (!o->first[o->depth])
		fputc(',', o->f);
	o->first[o->depth] = false;
	if (o->depth > 0)
		json_indent(o);
	if (key && o->depth > 0 && !o->array[o->depth]) {
		qp_out_json_string(o->f, key);
		fputs(o->mode == QP_OUT_JSON_PRETTY ? ": " : ":", o->f);
	}
}

/* Text: two spaces per level below the top-level object. */
static void text_indent(struct qp_out *o)
{
	for (int i = 1; i < o->depth; i++)
		fputs("  ", o->f);
}

/* The end of a top-level value: its line ends, and the next one starts afresh. */
static void top_done(struct qp_out *o)
{
	if (o->depth)
		return;
	fputc('\n', o->f);
	fflush(o->f);
	o->first[0] = true;
}

/* One scalar: @json is its JSON literal, @text its text form. */
static void value(struct qp_out *o, const char *key, const char *json, const char *text)
{
	if (qp_out_json(o)) {
		json_key(o, key);
		fputs(json, o->f);
	} else {
		text_indent(o);
		if (key)
			fprintf(o->f, "%-*s %s", QP_OUT_TEXT_KEY, key, text);
		else
			fputs(text, o->f);
		if (o->depth)
			fputc('\n', o->f);
	}
	top_done(o);
}

/* ---- containers ---- */

static void open_level(struct qp_out *o, const char *key, bool array)
{
	if (o->depth + 1 >= QP_OUT_DEPTH) {
		o->errors++;
		return;
	}
	if (qp_out_json(o)) {
		json_key(o, key);
		fputc(array ? '[' : '{', o->f);
	} else if (key) {
		text_indent(o);
		fprintf(o->f, "%s:\n", key);
	}
	o->depth++;
	o->first[o->depth] = true;
	o->array[o->depth] = array;
}

void qp_out_obj(struct qp_out *o, const char *key)
{
	open_level(o, key, false);
}

void qp_out_arr(struct qp_out *o, const char *key)
{
	open_level(o, key, true);
}

void qp_out_end(struct qp_out *o)
{
	if (o->depth == 0) {
		o->errors++;
		return;
	}
	bool empty = o->first[o->depth], array = o->array[o->depth];

	o->depth--;
	if (qp_out_json(o)) {
		if (!empty)
			json_indent(o);
		fputc(array ? ']' : '}', o->f);
	} else if (!array && o->depth > 0) {
		fputc('\n', o->f);
	}
	top_done(o);
}

/* ---- scalars ---- */

void qp_out_u64(struct qp_out *o, const char *key, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRIu64, v);
	value(o, key, t, t);
}

void qp_out_i64(struct qp_out *o, const char *key, int64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRId64, v);
	value(o, key, t, t);
}

void qp_out_bool(struct qp_out *o, const char *key, bool v)
{
	value(o, key, v ? "true" : "false", v ? "yes" : "no");
}

void qp_out_null(struct qp_out *o, const char *key)
{
	value(o, key, "null", "n/a");
}

void qp_out_str(struct qp_out *o, const char *key, const char *s)
{
	if (!qp_out_json(o)) {
		value(o, key, NULL, s ? s : "");
		return;
	}
	json_key(o, key);
	qp_out_json_string(o->f, s);
	top_done(o);
}

void qp_out_double2(struct qp_out *o, const char *key, double v, const char *json_fmt,
		    const char *text_fmt)
{
	char t[64];
	const char *fmt = qp_out_json(o) ? json_fmt : text_fmt;

	if (!isfinite(v))
		snprintf(t, sizeof(t), "%s", qp_out_json(o) ? "null" : "n/a");
	else
		snprintf(t, sizeof(t), fmt, v);
	value(o, key, t, t);
}

void qp_out_double(struct qp_out *o, const char *key, double v, const char *fmt)
{
	qp_out_double2(o, key, v, fmt, fmt);
}

/* A quantity: the number in JSON, @text in text. */
static void quantity(struct qp_out *o, const char *key, uint64_t v, const char *text)
{
	char j[24];

	snprintf(j, sizeof(j), "%" PRIu64, v);
	value(o, key, j, text);
}

void qp_out_rate(struct qp_out *o, const char *key, uint64_t bps)
{
	char t[32];

	quantity(o, key, bps, qp_fmt_rate(bps, t, sizeof(t)));
}

void qp_out_time(struct qp_out *o, const char *key, uint64_t ns)
{
	char t[32];

	quantity(o, key, ns, qp_fmt_time(ns, t, sizeof(t)));
}

void qp_out_bytes(struct qp_out *o, const char *key, uint64_t bytes)
{
	char t[32];

	quantity(o, key, bytes, qp_fmt_bytes_short(bytes, t, sizeof(t)));
}
