/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workload generation: the flows of each group on a set of hosts, from a seed (see
 * qpace/workload.h for what each kind means). Pure: no I/O, no clock, the draws of a
 * group come from its own stream of the seed in a fixed order (per flow: the gap, then
 * for intersite the site draw, then the destination, then the size). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/rng.h"
#include "qpace/workload.h"

struct gen {
	const struct wl_spec *s;
	const struct wl_group *g;
	const struct wl_env *env;
	struct wl_flows *out;
	size_t max;
	uint8_t *mark;                /* [hosts]: listed already */
	char *err;
	size_t errlen;
};

static int gen_fail(struct gen *x, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int gen_fail(struct gen *x, int rc, const char *fmt, ...)
{
	char msg[500];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_errmsg(rc, x->err, x->errlen, "%s:%d: %s: %s", x->s->file, x->g->line,
			 wl_kind_name(x->g->kind), msg);
}

static int too_many(struct gen *x, double expected)
{
	return gen_fail(x, -EINVAL, "%.0f flows, accepted at most %zu (a shorter duration=, a "
			"lower load=, fewer rounds= or senders=)", expected, x->max);
}

static int push(struct gen *x, uint32_t src, uint32_t dst, uint64_t bytes, qp_time_ns start,
		uint32_t round, bool chained)
{
	struct wl_flows *o = x->out;

	if (o->n == x->max)
		return too_many(x, (double)x->max + 1);
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct wl_flow *grown = realloc(o->f, cap * sizeof(*grown));
		if (!grown)
			return gen_fail(x, -ENOMEM, "out of memory at %zu flows", o->n);
		o->f = grown;
		o->cap = cap;
	}
	struct wl_flow *f = &o->f[o->n];
	memset(f, 0, sizeof(*f));     /* padding too: lists compare and hash byte for byte */
	f->start_ns = start;
	f->src = src;
	f->dst = dst;
	f->bytes = bytes;
	f->group = (uint32_t)(x->g - x->s->g);
	f->round = round;
	f->chained = chained;
	f->id = (uint32_t)o->n++;
	return 0;
}

/* The hosts of a list in list order (all: 0..hosts-1, without @skip when it is one). */
static int expand(struct gen *x, const struct wl_hosts *h, const char *what, int64_t skip,
		  uint32_t **list, uint32_t *n)
{
	uint32_t hosts = x->env->hosts, k = 0;
	uint64_t total = 0;

	for (unsigned i = 0; i < h->n; i++)
		total += h->r[i].hi - h->r[i].lo + 1;
	*list = malloc(((h->n ? total : hosts) + 1) * sizeof(**list));
	if (!*list)
		return gen_fail(x, -ENOMEM, "out of memory");
	memset(x->mark, 0, hosts);
	if (!h->n) {
		for (uint32_t i = 0; i < hosts; i++)
			if ((int64_t)i != skip)
				(*list)[k++] = i;
		*n = k;
		return 0;
	}
	for (unsigned i = 0; i < h->n; i++)
		for (uint64_t v = h->r[i].lo; v <= h->r[i].hi; v++) {
			if (v >= hosts)
				return gen_fail(x, -EINVAL, "%s: host %llu is not in the topology "
						"(hosts 0..%u)", what, (unsigned long long)v,
						hosts - 1);
			if (x->mark[v])
				return gen_fail(x, -EINVAL, "%s: host %llu listed twice", what,
						(unsigned long long)v);
			x->mark[v] = 1;
			(*list)[k++] = (uint32_t)v;
		}
	*n = k;
	return 0;
}

/* Whole ns of an exponential gap, or QP_TIME_NEVER when it reaches past @left. */
static qp_time_ns draw_gap(struct qp_rng *r, double mean_ns, qp_time_ns left)
{
	double gap = qp_rng_exp(r, mean_ns) + 0.5;
	return gap < (double)left ? (qp_time_ns)gap : QP_TIME_NEVER;
}

/* One index of [0, n) other than @own (n >= 2). */
static uint32_t draw_other(struct qp_rng *r, uint32_t n, uint32_t own)
{
	uint32_t d = (uint32_t)qp_rng_below(r, n - 1);
	return d >= own ? d + 1 : d;
}

struct sites {
	uint32_t *of[2];      /* the list's hosts of each site */
	uint32_t n[2];
	uint32_t *pos;        /* [list index]: position in its site's list */
};

static int split_sites(struct gen *x, const uint32_t *list, uint32_t n, struct sites *st)
{
	const double cross = x->g->cross;

	if (!x->env->site)
		return gen_fail(x, -EINVAL, "the topology has one site (intersite needs two: "
				"qpace-bench topo two-site)");
	st->of[0] = malloc(n * sizeof(uint32_t));
	st->of[1] = malloc(n * sizeof(uint32_t));
	st->pos = malloc(n * sizeof(uint32_t));
	if (!st->of[0] || !st->of[1] || !st->pos)
		return gen_fail(x, -ENOMEM, "out of memory");
	st->n[0] = st->n[1] = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t s = x->env->site[list[i]];
		if (s > 1)
			return gen_fail(x, -EINVAL, "host %u is in site %u, accepted 0 or 1", list[i], s);
		st->pos[i] = st->n[s];
		st->of[s][st->n[s]++] = list[i];
	}
	for (int s = 0; s < 2; s++) {
		if (cross > 0 && st->n[1 - s] == 0 && st->n[s])
			return gen_fail(x, -EINVAL, "hosts has none in site %d: cross=%g needs both "
					"sites", 1 - s, cross);
		if (cross < 1 && st->n[s] == 1)
			return gen_fail(x, -EINVAL, "hosts has one host in site %d: its flows within "
					"the site have nowhere to go (cross=1, or more hosts)", s);
	}
	return 0;
}

static int gen_poisson(struct gen *x, struct qp_rng *r)
{
	const struct wl_group *g = x->g;
	const qp_time_ns end = g->start_ns + g->duration_ns;
	struct sites st = { { NULL, NULL }, { 0, 0 }, NULL };
	uint32_t *list = NULL, n;
	double mean, gap_ns;
	int rc;

	if (!g->cdf)
		return gen_fail(x, -EINVAL, "cdf '%s' is not loaded", g->cdf_name);
	if (!x->env->host_bps)
		return gen_fail(x, -EINVAL, "the topology's host link rate is 0");
	if ((rc = expand(x, &g->hosts, "hosts", -1, &list, &n)))
		goto out;
	if (n < 2) {
		rc = gen_fail(x, -EINVAL, "hosts has %u host%s, accepted at least 2", n,
			      n == 1 ? "" : "s");
		goto out;
	}
	if (g->kind == WL_INTERSITE && (rc = split_sites(x, list, n, &st)))
		goto out;
	/* HPCC: avg_inter_arrival = 1 / (bandwidth * load / 8 / avg) per host */
	mean = cdf_mean(g->cdf) < 1 ? 1 : cdf_mean(g->cdf);
	gap_ns = 8.0 * mean * 1e9 / (g->load * (double)x->env->host_bps);
	if ((double)n * (double)g->duration_ns / gap_ns > (double)x->max) {
		rc = too_many(x, (double)n * (double)g->duration_ns / gap_ns);
		goto out;
	}
	for (uint32_t i = 0; i < n && !rc; i++) {
		qp_time_ns t = g->start_ns, d;
		while ((d = draw_gap(r, gap_ns, end - t)) != QP_TIME_NEVER) {
			uint32_t dst;
			t += d;
			if (g->kind == WL_INTERSITE) {
				uint8_t s = x->env->site[list[i]];
				bool away = qp_rng_unit(r) < g->cross;
				dst = away ? st.of[1 - s][qp_rng_below(r, st.n[1 - s])] :
				      st.of[s][draw_other(r, st.n[s], st.pos[i])];
			} else {
				dst = list[draw_other(r, n, i)];
			}
			if ((rc = push(x, list[i], dst, cdf_sample(g->cdf, r), t, 0, false)))
				break;
		}
	}
out:
	free(list);
	free(st.of[0]);
	free(st.of[1]);
	free(st.pos);
	return rc;
}

/* incast, long, staged: every sender to the receiver. */
static int gen_to_one(struct gen *x)
{
	const struct wl_group *g = x->g;
	uint32_t *list = NULL, n;
	int rc;

	if (g->receiver >= x->env->hosts)
		return gen_fail(x, -EINVAL, "receiver %u is not in the topology (hosts 0..%u)",
				g->receiver, x->env->hosts - 1);
	if ((rc = expand(x, &g->senders, "senders", g->receiver, &list, &n)))
		goto out;
	if (!n) {
		rc = gen_fail(x, -EINVAL, "no senders (the topology has %u host%s)",
			      x->env->hosts, x->env->hosts == 1 ? "" : "s");
		goto out;
	}
	if ((double)n * g->rounds > (double)x->max) {
		rc = too_many(x, (double)n * g->rounds);
		goto out;
	}
	for (uint32_t r = 0; r < g->rounds && !rc; r++)
		for (uint32_t i = 0; i < n && !rc; i++) {
			qp_time_ns t = g->start_ns;
			bool chained = false;
			if (g->kind == WL_STAGED)
				t += i * g->step_ns;
			else if (r && g->every_ns)
				t += r * g->every_ns;
			else if (r)
				t = g->gap_ns, chained = true;
			rc = push(x, list[i], g->receiver, g->bytes, t, r, chained);
		}
out:
	free(list);
	return rc;
}

static int cmp_flow(const void *pa, const void *pb)
{
	const struct wl_flow *a = pa, *b = pb;

	if (a->chained != b->chained)
		return a->chained ? 1 : -1;
	if (!a->chained && a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->chained && a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int wl_generate(const struct wl_spec *s, const struct wl_env *env, struct wl_flows *out,
		char *err, size_t errlen)
{
	struct gen x = { .s = s, .env = env, .out = out, .err = err, .errlen = errlen,
			 .max = env->max_flows ? env->max_flows : WL_DEFAULT_MAX_FLOWS };
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!env->hosts)
		return qp_errmsg(-EINVAL, err, errlen, "%s: the topology has no hosts", s->file);
	x.mark = malloc(env->hosts);
	if (!x.mark)
		return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", s->file);
	for (unsigned i = 0; i < s->ngroups && !rc; i++) {
		struct qp_rng r;
		x.g = &s->g[i];
		qp_rng_seed_stream(&r, env->seed, i);
		rc = (x.g->kind == WL_POISSON || x.g->kind == WL_INTERSITE) ? gen_poisson(&x, &r) :
		     gen_to_one(&x);
	}
	free(x.mark);
	if (rc) {
		wl_flows_free(out);
		return rc;
	}
	if (out->n)
		qsort(out->f, out->n, sizeof(*out->f), cmp_flow);
	return 0;
}

void wl_flows_free(struct wl_flows *f)
{
	free(f->f);
	memset(f, 0, sizeof(*f));
}
