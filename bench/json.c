/* Streaming JSON writer: see json.h. */
#include <inttypes.h>
#include <math.h>

#include "json.h"

void json_init(struct json *j, FILE *out, bool pretty)
{
	j->out = out;
	j->pretty = pretty;
	j->depth = 0;
	j->first[0] = true;
	j->errors = 0;
}

void json_write_string(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p, out);
		} else if (*p == '\n') {
			fputs("\\n", out);
		} else if (*p < 0x20) {
			fputs("\\u00", out);
			fputc(hex[*p >> 4], out);
			fputc(hex[*p & 15], out);
		} else {
			fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void json_indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Separator, indentation and key before a value at the current depth. */
static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	j->first[j->depth] = false;
	if (j->depth > 0)
		json_indent(j);
	if (key && j->depth > 0 && j->close[j->depth] == '}') {
		json_write_string(j->out, key);
		fputs(j->pretty ? ": " : ":", j->out);
	}
}

static void json_open(struct json *j, const char *key, char open, char close)
{
	if (j->depth + 1 >= JSON_MAX_DEPTH) {
		j->errors++;
		return;
	}
	json_key(j, key);
	fputc(open, j->out);
	j->depth++;
	j->first[j->depth] = true;
	j->close[j->depth] = close;
}

void json_obj(struct json *j, const char *key)
{
	json_open(j, key, '{', '}');
}

void json_arr(struct json *j, const char *key)
{
	json_open(j, key, '[', ']');
}

void json_end(struct json *j)
{
	if (j->depth == 0) {
		j->errors++;
		return;
	}
	bool empty = j->first[j->depth];
	char close = j->close[j->depth];

	j->depth--;
	if (!empty)
		json_indent(j);
	fputc(close, j->out);
}

void json_finish(struct json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void json_double(struct json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	if (isfinite(v))
		fprintf(j->out, "%.*f", decimals, v);
	else
		fputs("null", j->out);
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_write_string(j->out, s);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->out);
}
