/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The JSON reader (qpace/jsonr.h): untrusted input fails cleanly, every escape is decoded,
 * long strings are cut whole characters at a time, files are read whole. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "tmpdir.h"

static void nop(void *arg, const char *path, const struct jsonr_val *v)
{
	(void)arg, (void)path, (void)v;
}

static void test_jsonr_untrusted(void **state)
{
	const char *good = "{\"time_ns\": 12, \"switches\": [{\"name\": \"s1\", \"ports\": "
			   "[{\"name\": \"p0\", \"drop_tail\": 3}]}], \"x\": [true, false, null, -1.5e3]}";
	char err[128], deep[200];
	(void)state;

	assert_int_equal(jsonr_walk(good, strlen(good), nop, NULL, err, sizeof(err)), 0);
	/* Every truncation fails cleanly (ASan checks no byte past the end is read). */
	for (size_t len = 0; len < strlen(good); len++) {
		char *copy = malloc(len ? len : 1);
		memcpy(copy, good, len);
		assert_int_equal(jsonr_walk(copy, len, nop, NULL, err, sizeof(err)), -EINVAL);
		free(copy);
	}
	memset(deep, '[', sizeof(deep));
	assert_int_equal(jsonr_walk(deep, sizeof(deep), nop, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nested too deep"));
	assert_int_equal(jsonr_walk("{\"a\" 1}", 7, nop, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "byte"));
	assert_int_equal(jsonr_walk("[1] x", 5, nop, NULL, err, sizeof(err)), -EINVAL);
}


struct str {
	char s[JSONR_MAX_PATH];
	int n;
};

static void on_str(void *arg, const char *path, const struct jsonr_val *v)
{
	struct str *g = arg;
	(void)path;

	assert_int_equal(v->type, JSONR_STR);
	snprintf(g->s, sizeof(g->s), "%s", v->str);
	g->n++;
}

/* The string @json decodes to @want. */
static void decodes(const char *json, const char *want)
{
	struct str g = { .n = 0 };
	char err[128];

	if (jsonr_walk(json, strlen(json), on_str, &g, err, sizeof(err)))
		fail_msg("%s: %s", json, err);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.s, want);
}

/* @json is refused, naming @why. */
static void refused(const char *json, const char *why)
{
	struct str g = { .n = 0 };
	char err[128];

	assert_int_equal(jsonr_walk(json, strlen(json), on_str, &g, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why))
		fail_msg("%s: \"%s\" does not say %s", json, err, why);
}

static void test_jsonr_strings(void **state)
{
	char long_json[400], want[JSONR_MAX_PATH];
	(void)state;

	decodes("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t");
	decodes("\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac");
	decodes("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80");                  /* U+1F600 */
	decodes("\"d\xc3\xa9j\xc3\xa0\"", "d\xc3\xa9j\xc3\xa0");               /* UTF-8 as is */
	refused("\"\\q\"", "bad escape");
	refused("\"\\u12\"", "\\u escape");
	refused("\"\\u12g4\"", "bad \\u escape");
	refused("\"\\ud800x\"", "low half");
	refused("\"\\ud800\\u0041\"", "low half");
	refused("\"\\udc00\"", "lone low surrogate");
	refused("\"\\u0000\"", "\\u0000");

	/* Cut to JSONR_MAX_PATH - 1 bytes, never inside an escaped character; the rest of the
	 * string is still consumed. */
	memset(want, 'a', sizeof(want) - 1);
	want[sizeof(want) - 1] = 0;
	snprintf(long_json, sizeof(long_json), "\"%s%s\"", want, "bbbb");
	decodes(long_json, want);
	want[sizeof(want) - 2] = 0;                      /* 254 bytes, then a 2-byte char */
	snprintf(long_json, sizeof(long_json), "[\"%s\\u00e9\"]", want);
	decodes(long_json, want);
}

struct port {
	uint64_t drops;
	char name[16];
};

static void on_port(void *arg, const char *path, const struct jsonr_val *v)
{
	struct port *p = arg;

	if (!strcmp(path, "ports.1.name"))
		snprintf(p->name, sizeof(p->name), "%s", v->str);
	if (!strcmp(path, "ports.1.drop_tail"))
		p->drops = v->u64;
}

static void test_jsonr_walk_file(void **state)
{
	char dir[128], path[192], err[256];
	struct port p = { 0 };
	FILE *f;
	(void)state;

	assert_int_equal(tmpdir_make(dir, sizeof(dir), "jsonr"), 0);
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	assert_int_equal(jsonr_walk_file(path, on_port, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));

	snprintf(path, sizeof(path), "%s/s.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	/* larger than one read, so the buffer grows */
	fputs("{\"pad\": \"", f);
	for (int i = 0; i < 20000; i++)
		fputc('x', f);
	fputs("\", \"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\", \"drop_tail\": 42}]}\n", f);
	fclose(f);
	assert_int_equal(jsonr_walk_file(path, on_port, &p, err, sizeof(err)), 0);
	assert_string_equal(p.name, "p1");
	assert_int_equal(p.drops, 42);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"ports\": [", f);
	fclose(f);
	assert_int_equal(jsonr_walk_file(path, on_port, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "at byte"));
	assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonr_untrusted),
		cmocka_unit_test(test_jsonr_strings),
		cmocka_unit_test(test_jsonr_walk_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
