/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The printer (qpace/out.h): one record emitted once comes out as text and as JSON with
 * the same keys; strings are escaped so that the reader gives back every byte; nesting is
 * bounded; numbers keep their exact values and formats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "qpace/out.h"
#include "qpace/rate.h"

/* What @fn prints, in @mode (the caller frees it). */
static char *capture(enum qp_out_mode mode, void (*fn)(struct qp_out *o), unsigned *errors)
{
	char *buf = NULL, *text;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct qp_out o;

	assert_non_null(f);
	qp_out_init(&o, f, mode);
	fn(&o);
	fclose(f);
	if (errors)
		*errors = o.errors;
	text = strdup(buf);
	free(buf);
	assert_non_null(text);
	return text;
}

static void writer_record(struct qp_out *o)
{
	qp_out_obj(o, NULL);
	qp_out_str(o, "a", "x\"y\n");
	qp_out_u64(o, "n", 18446744073709551615ULL);
	qp_out_arr(o, "l");
	qp_out_double(o, NULL, 1.5, "%.2f");
	qp_out_double(o, NULL, NAN, "%.2f");
	qp_out_bool(o, NULL, true);
	qp_out_end(o);
	qp_out_obj(o, "e");
	qp_out_end(o);
	qp_out_end(o);
}

static void close_unopened(struct qp_out *o)
{
	qp_out_end(o);
}

/* The writer qpace-bench had (bench/json.c), byte for byte. */
static void test_json_writer(void **state)
{
	unsigned errors;
	char *text;
	(void)state;

	text = capture(QP_OUT_JSON, writer_record, &errors);
	assert_string_equal(text,
		"{\"a\":\"x\\\"y\\n\",\"n\":18446744073709551615,\"l\":[1.50,null,true],\"e\":{}}\n");
	assert_int_equal(errors, 0);
	free(text);
	/* Closing more than was opened is counted, not written. */
	text = capture(QP_OUT_JSON, close_unopened, &errors);
	assert_int_equal(errors, 1);
	assert_string_equal(text, "");
	free(text);
}

/* One record with every kind of value, nested. */
static void record(struct qp_out *o)
{
	qp_out_obj(o, NULL);
	qp_out_str(o, "name", "p1");
	qp_out_u64(o, "frames", 12);
	qp_out_i64(o, "slot", -1);
	qp_out_bool(o, "up", true);
	qp_out_null(o, "drops");
	qp_out_double(o, "jain", 0.99871, "%.4f");
	qp_out_double2(o, "util", 0.5, "%.6g", "%.2f");
	qp_out_rate(o, "rate", 2500 * QP_MBPS);
	qp_out_time(o, "rtt", 12500);
	qp_out_bytes(o, "queue", 70000);
	qp_out_obj(o, "delay");
	qp_out_u64(o, "samples", 3);
	qp_out_time(o, "p99_ns", 2000000);
	qp_out_end(o);
	qp_out_arr(o, "hops");
	qp_out_u64(o, NULL, 1);
	qp_out_u64(o, NULL, 2);
	qp_out_end(o);
	qp_out_end(o);
}

static void test_text_and_json(void **state)
{
	unsigned errors;
	char *text;
	(void)state;

	text = capture(QP_OUT_TEXT, record, &errors);
	assert_string_equal(text,
		"name               p1\n"
		"frames             12\n"
		"slot               -1\n"
		"up                 yes\n"
		"drops              n/a\n"
		"jain               0.9987\n"
		"util               0.50\n"
		"rate               2.5G\n"
		"rtt                12.5us\n"
		"queue              68K\n"
		"delay:\n"
		"  samples            3\n"
		"  p99_ns             2ms\n"
		"\n"
		"hops:\n"
		"  1\n"
		"  2\n"
		"\n");
	assert_int_equal(errors, 0);
	free(text);
	text = capture(QP_OUT_JSON, record, &errors);
	assert_string_equal(text,
		"{\"name\":\"p1\",\"frames\":12,\"slot\":-1,\"up\":true,\"drops\":null,"
		"\"jain\":0.9987,\"util\":0.5,\"rate\":2500000000,\"rtt\":12500,\"queue\":70000,"
		"\"delay\":{\"samples\":3,\"p99_ns\":2000000},\"hops\":[1,2]}\n");
	free(text);
	text = capture(QP_OUT_JSON_PRETTY, record, &errors);
	assert_string_equal(text,
		"{\n"
		"  \"name\": \"p1\",\n"
		"  \"frames\": 12,\n"
		"  \"slot\": -1,\n"
		"  \"up\": true,\n"
		"  \"drops\": null,\n"
		"  \"jain\": 0.9987,\n"
		"  \"util\": 0.5,\n"
		"  \"rate\": 2500000000,\n"
		"  \"rtt\": 12500,\n"
		"  \"queue\": 70000,\n"
		"  \"delay\": {\n"
		"    \"samples\": 3,\n"
		"    \"p99_ns\": 2000000\n"
		"  },\n"
		"  \"hops\": [\n"
		"    1,\n"
		"    2\n"
		"  ]\n"
		"}\n");
	free(text);
}

struct keys {
	char key[32][32];
	int n;
};

static void add_key(struct keys *k, const char *key)
{
	for (int i = 0; i < k->n; i++)
		if (!strcmp(k->key[i], key))
			return;
	assert_true(k->n < 32);
	snprintf(k->key[k->n++], sizeof(k->key[0]), "%s", key);
}

/* Every object key of the JSON document, at any depth. */
static void json_keys(void *arg, const char *path, const struct jsonr_val *v)
{
	char buf[JSONR_MAX_PATH], *save = NULL;
	(void)v;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save))
		if (strspn(t, "0123456789") != strlen(t))
			add_key(arg, t);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The same keys in both outputs: what the text names (first word of a line, "key:" for an
 * object) is what the JSON has. */
static void test_same_keys(void **state)
{
	struct keys kt = { .n = 0 }, kj = { .n = 0 };
	char *text = capture(QP_OUT_TEXT, record, NULL), *json = capture(QP_OUT_JSON, record, NULL);
	char err[128], *save = NULL;
	(void)state;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char word[64];

		if (sscanf(line, " %63[^ :]", word) == 1 && strspn(word, "0123456789") != strlen(word))
			add_key(&kt, word);
	}
	assert_int_equal(jsonr_walk(json, strlen(json), json_keys, &kj, err, sizeof(err)), 0);
	qsort(kt.key, (size_t)kt.n, sizeof(kt.key[0]), key_cmp);
	qsort(kj.key, (size_t)kj.n, sizeof(kj.key[0]), key_cmp);
	assert_int_equal(kt.n, kj.n);
	assert_int_equal(kt.n, 14);
	for (int i = 0; i < kt.n; i++)
		assert_string_equal(kt.key[i], kj.key[i]);
	free(text);
	free(json);
}

static char every_byte[256];

static void escaped_record(struct qp_out *o)
{
	qp_out_obj(o, NULL);
	qp_out_str(o, every_byte, every_byte);
	qp_out_str(o, "null", NULL);
	qp_out_end(o);
}

struct got {
	char value[JSONR_MAX_PATH];
	int strings;
};

static void on_string(void *arg, const char *path, const struct jsonr_val *v)
{
	struct got *g = arg;

	if (v->type != JSONR_STR)
		return;
	g->strings++;
	if (strcmp(path, "null"))
		snprintf(g->value, sizeof(g->value), "%s", v->str);
	else
		assert_string_equal(v->str, "");
}

/* Quotes, backslashes and every control character escaped; bytes from 0x80 up (UTF-8)
 * passed through; the reader gives back every byte, of keys and values. */
static void test_escaping(void **state)
{
	struct got g = { .strings = 0 };
	char err[128], *json, *esc;
	(void)state;

	for (int i = 1; i < 256; i++)
		every_byte[i - 1] = (char)i;
	json = capture(QP_OUT_JSON, escaped_record, NULL);
	esc = strchr(json, '"');
	assert_non_null(strstr(esc, "\\u0001\\u0002"));
	assert_non_null(strstr(esc, "\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e"));
	assert_non_null(strstr(esc, "\\u001f !\\\"#"));
	assert_non_null(strstr(esc, "Z[\\\\]"));
	assert_non_null(strstr(esc, "~\x7f\x80\x81"));
	assert_non_null(strstr(esc, "\xfe\xff\""));
	for (const char *p = json; *p; p++)       /* no raw control character but the end */
		assert_true((unsigned char)*p >= 0x20 || (*p == '\n' && !p[1]));
	assert_int_equal(jsonr_walk(json, strlen(json), on_string, &g, err, sizeof(err)), 0);
	assert_int_equal(g.strings, 2);
	assert_string_equal(g.value, every_byte);
	free(json);

	/* UTF-8 as written, in text too. */
	struct qp_out o;
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	qp_out_init(&o, f, QP_OUT_TEXT);
	qp_out_str(&o, "algo", "d\xc3\xa9j\xc3\xa0 \xe2\x82\xac");
	fclose(f);
	assert_string_equal(text, "algo               d\xc3\xa9j\xc3\xa0 \xe2\x82\xac\n");
	free(text);
}

static void too_deep(struct qp_out *o)
{
	for (int i = 0; i < QP_OUT_DEPTH + 2; i++)
		qp_out_arr(o, NULL);
	for (int i = 0; i < QP_OUT_DEPTH + 2; i++)
		qp_out_end(o);
}

static void lines(struct qp_out *o)
{
	for (int i = 0; i < 3; i++) {
		qp_out_obj(o, NULL);
		qp_out_u64(o, "run", (uint64_t)i);
		qp_out_arr(o, "empty");
		qp_out_end(o);
		qp_out_end(o);
	}
	qp_out_u64(o, NULL, 7);
}

static void empty(struct qp_out *o)
{
	qp_out_arr(o, NULL);
	qp_out_obj(o, NULL);
	qp_out_end(o);
	qp_out_end(o);
}

/* Nesting: bounded (refused and counted, the output stays balanced); each top-level value
 * is a line of its own (JSON lines), with no comma between them; empty containers. */
static void test_nesting(void **state)
{
	unsigned errors;
	char *text, want[128] = "";
	(void)state;

	text = capture(QP_OUT_JSON, too_deep, &errors);
	for (int i = 0; i < QP_OUT_DEPTH - 1; i++)
		strcat(want, "[");
	for (int i = 0; i < QP_OUT_DEPTH - 1; i++)
		strcat(want, "]");
	strcat(want, "\n");
	assert_string_equal(text, want);
	assert_int_equal(errors, 6);              /* 3 opens refused, so 3 closes too many */
	free(text);
	text = capture(QP_OUT_JSON, lines, &errors);
	assert_string_equal(text, "{\"run\":0,\"empty\":[]}\n{\"run\":1,\"empty\":[]}\n"
				  "{\"run\":2,\"empty\":[]}\n7\n");
	assert_int_equal(errors, 0);
	free(text);
	text = capture(QP_OUT_JSON_PRETTY, empty, &errors);
	assert_string_equal(text, "[\n  {}\n]\n");
	free(text);
	text = capture(QP_OUT_TEXT, lines, &errors);
	assert_string_equal(text, "run                0\nempty:\n\nrun                1\nempty:\n\n"
				  "run                2\nempty:\n\n7\n");
	free(text);
}

static void numbers(struct qp_out *o)
{
	qp_out_arr(o, NULL);
	qp_out_u64(o, NULL, UINT64_MAX);
	qp_out_i64(o, NULL, INT64_MIN);
	qp_out_i64(o, NULL, INT64_MAX);
	qp_out_double(o, NULL, 1.0 / 3, "%.6f");
	qp_out_double(o, NULL, 2.5e-9, "%.6g");
	qp_out_double(o, NULL, INFINITY, "%.2f");
	qp_out_double(o, NULL, -INFINITY, "%.2f");
	qp_out_double2(o, NULL, 0.123456789, "%.6g", "%.2f");
	qp_out_rate(o, NULL, 100 * QP_GBPS);
	qp_out_time(o, NULL, 0);
	qp_out_bytes(o, NULL, 1536);
	qp_out_bytes(o, NULL, 1023);
	qp_out_end(o);
}

struct nums {
	double d[16];
	uint64_t u[16];
	bool is_u64[16];
	int n, nulls;
};

static void on_num(void *arg, const char *path, const struct jsonr_val *v)
{
	struct nums *n = arg;
	(void)path;

	if (v->type == JSONR_NULL) {
		n->nulls++;
		return;
	}
	assert_int_equal(v->type, JSONR_NUM);
	n->d[n->n] = v->num;
	n->u[n->n] = v->u64;
	n->is_u64[n->n++] = v->is_u64;
}

/* Numbers: the exact extremes, each double in its format, non-finite as null (n/a in
 * text), quantities as numbers in JSON and their short forms in text. */
static void test_numbers(void **state)
{
	struct nums n = { .n = 0 };
	char *text, err[128];
	(void)state;

	text = capture(QP_OUT_JSON, numbers, NULL);
	assert_string_equal(text, "[18446744073709551615,-9223372036854775808,"
				  "9223372036854775807,0.333333,2.5e-09,null,null,0.123457,"
				  "100000000000,0,1536,1023]\n");
	assert_int_equal(jsonr_walk(text, strlen(text), on_num, &n, err, sizeof(err)), 0);
	assert_int_equal(n.nulls, 2);
	assert_true(n.is_u64[0] && n.u[0] == UINT64_MAX);
	assert_false(n.is_u64[1]);
	assert_true(n.is_u64[6] && n.u[6] == 100 * QP_GBPS);
	free(text);
	text = capture(QP_OUT_TEXT, numbers, NULL);
	assert_string_equal(text, "18446744073709551615\n-9223372036854775808\n"
				  "9223372036854775807\n0.333333\n2.5e-09\nn/a\nn/a\n0.12\n"
				  "100G\n0ns\n1.5K\n1023\n\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_text_and_json),
		cmocka_unit_test(test_same_keys),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
