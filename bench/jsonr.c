/* A small JSON reader: see jsonr.h. Recursive descent, depth-bounded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

struct jsonr {
	const char *p, *end, *start;
	jsonr_fn fn;
	void *arg;
	char path[JSONR_MAX_PATH];
	char str[JSONR_MAX_PATH];
	int depth;
	const char *why;
};

static void ws(struct jsonr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static int fail(struct jsonr *r, const char *why)
{
	r->why = why;
	return -1;
}

/* A string into r->str (truncated to fit, still consumed whole). */
static int string(struct jsonr *r)
{
	size_t n = 0;

	if (r->p >= r->end || *r->p != '"')
		return fail(r, "expected a string");
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		char c = *r->p++;
		if (c == '\\') {
			if (r->p >= r->end)
				return fail(r, "unfinished escape");
			c = *r->p++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		if (n + 1 < sizeof(r->str))
			r->str[n++] = c;
	}
	if (r->p >= r->end)
		return fail(r, "unfinished string");
	r->p++;
	r->str[n] = '\0';
	return 0;
}

static int value(struct jsonr *r);

/* Append ".key" to the path; returns the old length to restore. */
static size_t path_push(struct jsonr *r, const char *key)
{
	size_t old = strlen(r->path);
	snprintf(r->path + old, sizeof(r->path) - old, "%s%s", old ? "." : "", key);
	return old;
}

static int container(struct jsonr *r, char close)
{
	bool obj = close == '}';
	unsigned idx = 0;

	if (++r->depth > JSONR_MAX_DEPTH)
		return fail(r, "nested too deep");
	r->p++;
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 0;
	}
	for (;;) {
		char key[JSONR_MAX_PATH];
		ws(r);
		if (obj) {
			if (string(r))
				return -1;
			snprintf(key, sizeof(key), "%s", r->str);
			ws(r);
			if (r->p >= r->end || *r->p++ != ':')
				return fail(r, "expected ':'");
		} else {
			snprintf(key, sizeof(key), "%u", idx++);
		}
		size_t old = path_push(r, key);
		if (value(r))
			return -1;
		r->path[old] = '\0';
		ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			r->depth--;
			return 0;
		}
		return fail(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int literal(struct jsonr *r, const char *word, struct jsonr_val *v)
{
	size_t n = strlen(word);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return fail(r, "unexpected character");
	r->p += n;
	r->fn(r->arg, r->path, v);
	return 0;
}

static int number(struct jsonr *r)
{
	char buf[64];
	size_t n = 0;

	while (r->p < r->end && strchr("+-0123456789.eE", *r->p) && n + 1 < sizeof(buf))
		buf[n++] = *r->p++;
	buf[n] = '\0';
	char *e;
	errno = 0;
	double d = strtod(buf, &e);
	if (n == 0 || *e || errno)
		return fail(r, "bad number");
	struct jsonr_val v = { .type = JSONR_NUM, .num = d };
	if (!strpbrk(buf, "-.eE")) {
		errno = 0;
		unsigned long long u = strtoull(buf, &e, 10);
		v.is_u64 = !*e && !errno;
		v.u64 = u;
	}
	r->fn(r->arg, r->path, &v);
	return 0;
}

static int value(struct jsonr *r)
{
	ws(r);
	if (r->p >= r->end)
		return fail(r, "unexpected end");
	switch (*r->p) {
	case '{': return container(r, '}');
	case '[': return container(r, ']');
	case '"': {
		if (string(r))
			return -1;
		struct jsonr_val v = { .type = JSONR_STR, .str = r->str };
		r->fn(r->arg, r->path, &v);
		return 0;
	}
	case 't': return literal(r, "true", &(struct jsonr_val){ .type = JSONR_BOOL, .boolean = true });
	case 'f': return literal(r, "false", &(struct jsonr_val){ .type = JSONR_BOOL });
	case 'n': return literal(r, "null", &(struct jsonr_val){ .type = JSONR_NULL });
	default: return number(r);
	}
}

int jsonr_walk(const char *text, size_t len, jsonr_fn fn, void *arg, char *err, size_t errlen)
{
	struct jsonr r = { .p = text, .end = text + len, .start = text, .fn = fn, .arg = arg };

	if (value(&r) == 0) {
		ws(&r);
		if (r.p == r.end)
			return 0;
		r.why = "text after the value";
	}
	snprintf(err, errlen, "JSON: %s at byte %td", r.why, r.p - r.start);
	return -1;
}
