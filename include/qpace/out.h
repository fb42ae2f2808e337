/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace's one printer: a caller emits keyed values once and they come out as text or as
 * JSON (-j), so the two outputs carry the same keys and cannot drift (iproute2's
 * print_uint(PRINT_ANY, ...) habit). Every JSON that qpace writes goes through it.
 *
 *     struct qp_out o;
 *     qp_out_init(&o, stdout, json ? QP_OUT_JSON : QP_OUT_TEXT);
 *     qp_out_obj(&o, NULL);
 *     qp_out_u64(&o, "qps", 2);
 *     qp_out_rate(&o, "rate", 5 * QP_GBPS);       text "rate  5G", JSON "rate":5000000000
 *     qp_out_end(&o);
 *
 * Keys are given inside objects and NULL inside arrays (and for the top-level value).
 * Closing the top-level value ends the line (and flushes), so one call per record gives
 * JSON lines; a scalar at the top level ends its line too.
 *
 * JSON: compact (QP_OUT_JSON: {"a":1,"b":[2,3]}) or indented two spaces a level
 * (QP_OUT_JSON_PRETTY, "key": value one per line). Strings are escaped for JSON (quote,
 * backslash, every control character; bytes from 0x80 up pass through unchanged, so UTF-8
 * stays UTF-8). Non-finite doubles are written as null (JSON has no NaN).
 *
 * Text: one "key value" line per value, the key padded to QP_OUT_TEXT_KEY columns; an
 * object with a key prints "key:" and indents what it holds by two spaces, and a blank
 * line after it; arrays print nothing of their own. Values take their short forms
 * ("5G", "12.5us", "64K", yes/no, n/a for null). Tables that are a program's text form
 * (qpacectl list/top, perftest's result tables) are laid out by their callers; their
 * JSON still comes from here.
 *
 * Nesting deeper than QP_OUT_DEPTH, or closing what was never opened, is refused: counted
 * in o->errors, nothing written, so a caller's bug cannot write past the state arrays.
 */
#ifndef QPACE_OUT_H
#define QPACE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum qp_out_mode { QP_OUT_TEXT, QP_OUT_JSON, QP_OUT_JSON_PRETTY };

#define QP_OUT_DEPTH 16
#define QP_OUT_TEXT_KEY 18

struct qp_out {
	FILE *f;
	enum qp_out_mode mode;
	int depth;
	bool first[QP_OUT_DEPTH];     /* nothing written yet at this level */
	bool array[QP_OUT_DEPTH];     /* this level is an array */
	unsigned errors;
};

void qp_out_init(struct qp_out *o, FILE *f, enum qp_out_mode mode);
bool qp_out_json(const struct qp_out *o);       /* either JSON mode */

void qp_out_obj(struct qp_out *o, const char *key);
void qp_out_arr(struct qp_out *o, const char *key);
void qp_out_end(struct qp_out *o);                   /* the innermost object or array */

void qp_out_u64(struct qp_out *o, const char *key, uint64_t v);
void qp_out_i64(struct qp_out *o, const char *key, int64_t v);
void qp_out_bool(struct qp_out *o, const char *key, bool v);
void qp_out_str(struct qp_out *o, const char *key, const char *s);   /* NULL: "" */
void qp_out_null(struct qp_out *o, const char *key);
/* @fmt: a printf conversion of one double ("%.2f", "%.6g"), for both outputs. */
void qp_out_double(struct qp_out *o, const char *key, double v, const char *fmt);
/* The same, with its own conversion for each output. */
void qp_out_double2(struct qp_out *o, const char *key, double v, const char *json_fmt,
		    const char *text_fmt);
/* Quantities: JSON writes the number, text its short form. */
void qp_out_rate(struct qp_out *o, const char *key, uint64_t bps);      /* "2.5G" */
void qp_out_time(struct qp_out *o, const char *key, uint64_t ns);       /* "12.5us" */
void qp_out_bytes(struct qp_out *o, const char *key, uint64_t bytes);   /* "64K" */

/* A JSON string literal of @s (quotes and escapes) to @f. */
void qp_out_json_string(FILE *f, const char *s);

#endif
