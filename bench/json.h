/* A small streaming JSON writer for qpace-bench's reports (-j, --out_json, summary.json).
 *
 *     struct json j; json_init(&j, stdout, true);
 *     json_obj(&j, NULL); json_u64(&j, "senders", 16); json_end(&j); json_finish(&j);
 *
 * Keys are given inside objects and NULL inside arrays. Non-finite doubles are written as
 * null (JSON has no NaN). Nesting deeper than JSON_MAX_DEPTH is refused (counted in
 * j->errors, nothing written), so a bug cannot write past the state array.
 */
#ifndef BENCH_JSON_H
#define BENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *out;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH];
	char close[JSON_MAX_DEPTH];   /* '}' or ']' for each open level */
	unsigned errors;
};

void json_init(struct json *j, FILE *out, bool pretty);
void json_obj(struct json *j, const char *key);
void json_arr(struct json *j, const char *key);
void json_end(struct json *j);            /* closes the innermost object or array */
void json_finish(struct json *j);         /* newline after the top-level value */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v, int decimals);
void json_str(struct json *j, const char *key, const char *s);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* A JSON string literal of @s (quotes and escapes) to @out. */
void json_write_string(FILE *out, const char *s);

#endif
