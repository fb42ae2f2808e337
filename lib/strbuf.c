/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "qpace/strbuf.h"

static bool grow(struct qp_strbuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void qp_strbuf_printf(struct qp_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom || (!b->p && !grow(b, 1)))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!grow(b, b->len + (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void qp_strbuf_reset(struct qp_strbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

void qp_strbuf_free(struct qp_strbuf *b)
{
	free(b->p);
	*b = (struct qp_strbuf){ 0 };
}
