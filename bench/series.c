/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Per-QP rate time series: see series.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"

int series_create(struct series *s, unsigned cols, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->t_ns = calloc(cap ? cap : 1, sizeof(*s->t_ns));
	s->v = calloc((cap ? cap : 1) * (cols ? cols : 1), sizeof(*s->v));
	if (!s->t_ns || !s->v) {
		series_free(s);
		return -ENOMEM;
	}
	s->cols = cols;
	s->cap = cap;
	return 0;
}

void series_free(struct series *s)
{
	free(s->t_ns);
	free(s->v);
	s->t_ns = NULL;
	s->v = NULL;
	s->n = s->cap = 0;
}

void series_add(struct series *s, qp_time_ns t_ns, const qp_rate_bps *v)
{
	if (s->n >= s->cap) {
		s->dropped++;
		return;
	}
	s->t_ns[s->n] = t_ns;
	memcpy(&s->v[s->n * s->cols], v, s->cols * sizeof(*v));
	s->n++;
}

int series_write_csv(const struct series *s, const char *path, qp_time_ns t0_ns)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs("time_s", f);
	for (unsigned c = 0; c < s->cols; c++)
		fprintf(f, ",%s%u_mbps", s->col_name ? s->col_name : "qp",
			c + (s->col_name ? 0 : 1));
	fputc('\n', f);
	for (size_t i = 0; i < s->n; i++) {
		fprintf(f, "%.6f", (double)qp_time_since(s->t_ns[i], t0_ns) / 1e9);
		for (unsigned c = 0; c < s->cols; c++)
			fprintf(f, ",%.3f", (double)s->v[i * s->cols + c] / 1e6);
		fputc('\n', f);
	}
	return fclose(f) ? -errno : 0;
}
