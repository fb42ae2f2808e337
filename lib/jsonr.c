/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A small JSON reader: see qpace/jsonr.h. Recursive descent, depth-bounded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/jsonr.h"

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

/* Four hex digits of a \u escape. */
static int hex4(struct jsonr *r, unsigned *out)
{
	unsigned v = 0;

	if (r->end - r->p < 4)
		return fail(r, "unfinished \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = *r->p++;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return fail(r, "bad \\u escape");
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

/* The code point of a \u escape (the 'u' consumed), a surrogate pair joined. */
static int code_point(struct jsonr *r, unsigned *cp)
{
	unsigned lo;

	if (hex4(r, cp))
		return -1;
	if (*cp == 0)
		return fail(r, "\\u0000 in a string");
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return fail(r, "lone low surrogate");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
		return fail(r, "high surrogate without its low half");
	r->p += 2;
	if (hex4(r, &lo))
		return -1;
	if (lo < 0xdc00 || lo > 0xdfff)
		return fail(r, "high surrogate without its low half");
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* @cp as UTF-8 into @b; returns its length. */
static size_t utf8(unsigned cp, char *b)
{
	if (cp < 0x80) {
		b[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | cp >> 18);
	b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One character of a string (escapes decoded) into @b; returns its length, or -1. */
static int string_char(struct jsonr *r, char *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	unsigned cp;
	char c = *r->p++;

	if (c != '\\') {
		b[0] = c;
		return 1;
	}
	if (r->p >= r->end)
		return fail(r, "unfinished escape");
	c = *r->p++;
	if (c == 'u')
		return code_point(r, &cp) ? -1 : (int)utf8(cp, b);
	if (!c || !(e = strchr(from, c)))
		return fail(r, "bad escape");
	b[0] = to[e - from];
	return 1;
}

/* A string into r->str: truncated to fit (an escaped character whole or not at all), still
 * consumed whole. */
static int string(struct jsonr *r)
{
	size_t n = 0;
	bool full = false;

	if (r->p >= r->end || *r->p != '"')
		return fail(r, "expected a string");
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		char b[4];
		int len = string_char(r, b);

		if (len < 0)
			return -1;
		full = full || n + (size_t)len >= sizeof(r->str);
		if (!full) {
			memcpy(r->str + n, b, (size_t)len);
			n += (size_t)len;
		}
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
	return qp_errmsg(-EINVAL, err, errlen, "JSON: %s at byte %td", r.why, r.p - r.start);
}

int jsonr_walk_file(const char *path, jsonr_fn fn, void *arg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, why[160];
	size_t cap = 0, n = 0, got;
	int rc = 0;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	while (rc == 0) {
		if (n == cap) {
			char *nb = NULL;

			if (cap >= JSONR_MAX_FILE)
				rc = qp_errmsg(-EFBIG, err, errlen, "%s: over %d bytes, more than the "
					       "reader takes", path, JSONR_MAX_FILE);
			else if (!(nb = realloc(buf, cap = cap ? 2 * cap : 8192)))
				rc = qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", path);
			if (rc)
				break;
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = qp_errmsg(-EIO, err, errlen, "%s: read error", path);
			break;
		}
	}
	fclose(f);
	if (!rc && (rc = jsonr_walk(buf, n, fn, arg, why, sizeof(why))))
		qp_errmsg(rc, err, errlen, "%s: %s", path, why);
	free(buf);
	return rc;
}
