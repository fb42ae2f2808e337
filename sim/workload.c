/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workload files: the line parser, one table of keys (workload.h has the grammar). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "qpace/workload.h"
#include "textfile.h"

#define MAX_WORDS 24
#define KIND(k) (1u << (k))
#define POISSONS (KIND(WL_POISSON) | KIND(WL_INTERSITE))
#define TO_ONE (KIND(WL_INCAST) | KIND(WL_LONG) | KIND(WL_STAGED))
#define ALL_KINDS (POISSONS | TO_ONE)
#define MAX_TIME (1000 * QP_NS_PER_S)
#define MAX_BYTES (1ULL << 40)

static const char *const kind_names[WL_NKINDS] = {
	[WL_POISSON] = "poisson", [WL_INTERSITE] = "intersite", [WL_INCAST] = "incast",
	[WL_LONG] = "long", [WL_STAGED] = "staged",
};

enum key_type { K_TIME, K_LOAD, K_FRACTION, K_BYTES, K_HOSTS, K_HOST, K_COUNT, K_NAME };

/* A key: where its value goes, who takes it, who must give it, and what it accepts (the
 * error message quotes `accepted`). */
struct key {
	const char *name;
	enum key_type type;
	size_t off;
	unsigned kinds, required;
	uint64_t min, max;
	const char *accepted;
};

#define AT(field) offsetof(struct wl_group, field)

static const struct key keys[] = {
	{ "cdf", K_NAME, AT(cdf_name), POISSONS, POISSONS, 1, WL_CDF_NAME - 1,
	  "a CDF name (websearch, fb_hadoop) or a path, 1..127 characters" },
	{ "load", K_LOAD, AT(load), POISSONS, POISSONS, 0, 0, "a fraction in (0, 1]" },
	{ "duration", K_TIME, AT(duration_ns), POISSONS, POISSONS, 1, MAX_TIME,
	  "a time in 1ns..1000s (e.g. 50ms)" },
	{ "cross", K_FRACTION, AT(cross), KIND(WL_INTERSITE), KIND(WL_INTERSITE), 0, 0,
	  "a fraction in [0, 1]" },
	{ "hosts", K_HOSTS, AT(hosts), POISSONS, 0, 0, 0, "" },
	{ "senders", K_HOSTS, AT(senders), TO_ONE, 0, 0, 0, "" },
	{ "receiver", K_HOST, AT(receiver), TO_ONE, 0, 0, WL_MAX_HOST,
	  "a host number in 0..65535" },
	{ "bytes", K_BYTES, AT(bytes), TO_ONE, KIND(WL_INCAST), 1, MAX_BYTES,
	  "a size in 1..1024G bytes (e.g. 500K, 1M)" },
	{ "rounds", K_COUNT, AT(rounds), KIND(WL_INCAST), 0, 1, 1000000,
	  "a whole number in 1..1000000" },
	{ "gap", K_TIME, AT(gap_ns), KIND(WL_INCAST), 0, 0, MAX_TIME,
	  "a time in 0..1000s (e.g. 10us)" },
	{ "every", K_TIME, AT(every_ns), KIND(WL_INCAST), 0, 1, MAX_TIME,
	  "a time in 1ns..1000s (e.g. 1ms)" },
	{ "step", K_TIME, AT(step_ns), KIND(WL_STAGED), KIND(WL_STAGED), 0, MAX_TIME,
	  "a time in 0..1000s (e.g. 10ms)" },
	{ "start", K_TIME, AT(start_ns), ALL_KINDS, 0, 0, MAX_TIME,
	  "a time in 0..1000s (e.g. 10ms)" },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
_Static_assert(NKEYS <= 32, "key bits fit wl_group.seen");

static const char hosts_accepted[] =
	"all, or host numbers and ranges like 0-15,20 (hosts 0..65535, at most 32 items)";

static int wl_fail(const struct wl_spec *s, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int wl_fail(const struct wl_spec *s, char *err, size_t errlen, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_errmsg(-EINVAL, err, errlen, "%s:%d: %s", s->file, s->lineno, msg);
}

#define FAIL(...) wl_fail(s, err, errlen, __VA_ARGS__)

const char *wl_kind_name(enum wl_kind k)
{
	return (unsigned)k < WL_NKINDS ? kind_names[k] : "?";
}

void wl_init(struct wl_spec *s, const char *file)
{
	memset(s, 0, sizeof(*s));
	s->file = file ? file : "workload";
}

/* "all" or "N", "N-M" items separated by commas. */
static int parse_hosts(const char *v, struct wl_hosts *h)
{
	char buf[512], *save = NULL;

	h->n = 0;
	if (!strcmp(v, "all"))
		return 0;
	if (!*v || strlen(v) >= sizeof(buf) || v[0] == ',' || v[strlen(v) - 1] == ',' ||
	    strstr(v, ",,"))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(item, '-');
		uint64_t lo, hi;

		if (h->n == WL_MAX_RANGES)
			return -EINVAL;
		if (dash)
			*dash = 0;
		if (qp_parse_u64(item, &lo) || (dash && qp_parse_u64(dash + 1, &hi)))
			return -EINVAL;
		if (!dash)
			hi = lo;
		if (lo > hi || hi > WL_MAX_HOST)
			return -EINVAL;
		h->r[h->n].lo = (uint32_t)lo;
		h->r[h->n].hi = (uint32_t)hi;
		h->n++;
	}
	return h->n ? 0 : -EINVAL;
}

static bool hosts_have(const struct wl_hosts *h, uint32_t host)
{
	for (unsigned i = 0; i < h->n; i++)
		if (host >= h->r[i].lo && host <= h->r[i].hi)
			return true;
	return false;
}

/* One value into its field; 0 or -EINVAL (the caller writes the message). */
static int parse_value(const struct key *k, enum wl_kind kind, const char *v, void *field)
{
	uint64_t u;
	double d;

	switch (k->type) {
	case K_TIME:
		if (qp_parse_time(v, &u) || u < k->min || u > k->max)
			return -EINVAL;
		*(qp_time_ns *)field = u;
		return 0;
	case K_LOAD:
	case K_FRACTION:
		if (qp_parse_double(v, &d) || d > 1 || d < 0 || (k->type == K_LOAD && d == 0))
			return -EINVAL;
		*(double *)field = d;
		return 0;
	case K_BYTES:
		if (kind != WL_INCAST && !strcmp(v, "forever")) {
			*(uint64_t *)field = WL_BYTES_FOREVER;
			return 0;
		}
		if (qp_parse_bytes(v, &u) || u < k->min || u > k->max)
			return -EINVAL;
		*(uint64_t *)field = u;
		return 0;
	case K_HOSTS:
		return parse_hosts(v, field);
	case K_HOST:
	case K_COUNT:
		if (qp_parse_u64(v, &u) || u < k->min || u > k->max)
			return -EINVAL;
		*(uint32_t *)field = (uint32_t)u;
		return 0;
	case K_NAME:
		if (strlen(v) < k->min || strlen(v) > k->max)
			return -EINVAL;
		snprintf(field, WL_CDF_NAME, "%s", v);
		return 0;
	}
	return -EINVAL;
}

static void key_list(enum wl_kind kind, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NKEYS && n < len; i++)
		if (keys[i].kinds & KIND(kind))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys[i].name);
}

static int group_key(struct wl_spec *s, struct wl_group *g, const char *kv, char *err,
		     size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char name[32], list[200];
	size_t i;

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(name))
		return FAIL("%s: expected KEY=VALUE, got '%s'", kind_names[g->kind], kv);
	memcpy(name, kv, (size_t)(eq - kv));
	name[eq - kv] = 0;
	for (i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name) && (keys[i].kinds & KIND(g->kind)))
			break;
	if (i == NKEYS) {
		key_list(g->kind, list, sizeof(list));
		return FAIL("%s: unknown key '%s' (accepted: %s)", kind_names[g->kind], name, list);
	}
	if (g->seen & (1u << i))
		return FAIL("%s: %s given twice", kind_names[g->kind], name);
	if (parse_value(&keys[i], g->kind, eq + 1, (char *)g + keys[i].off))
		return FAIL("%s '%s': not %s%s", name, eq + 1,
			    keys[i].type == K_HOSTS ? hosts_accepted : keys[i].accepted,
			    keys[i].type == K_BYTES && g->kind != WL_INCAST ? ", or forever" : "");
	g->seen |= 1u << i;
	return 0;
}

static bool given(const struct wl_group *g, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return g->seen & (1u << i);
	return false;
}

/* Rules between a group's keys, once its line is read. */
static int group_check(struct wl_spec *s, struct wl_group *g, char *err, size_t errlen)
{
	for (size_t i = 0; i < NKEYS; i++)
		if ((keys[i].required & KIND(g->kind)) && !(g->seen & (1u << i)))
			return FAIL("%s: %s= is required (%s)", kind_names[g->kind], keys[i].name,
				    keys[i].accepted);
	if (given(g, "gap") && given(g, "every"))
		return FAIL("incast: gap= and every= exclude each other (gap: each round that long "
			    "after the last one completed; every: rounds at a fixed period)");
	if ((KIND(g->kind) & TO_ONE) && hosts_have(&g->senders, g->receiver))
		return FAIL("%s: senders include the receiver %u", kind_names[g->kind], g->receiver);
	return 0;
}

int wl_line(struct wl_spec *s, const char *line, size_t len, char *err, size_t errlen)
{
	char buf[SIM_LINE_MAX + 1], *w[MAX_WORDS];
	struct wl_group *g;
	int n, k;

	s->lineno++;
	if ((n = sim_line_words(line, len, buf, w, MAX_WORDS)) == SIM_LINE_LONG)
		return FAIL("line of %zu characters, accepted at most %u", len, SIM_LINE_MAX);
	if (n == 0)
		return 0;
	if (n < 0)
		return FAIL("more than %d words on a line", MAX_WORDS);
	for (k = 0; k < WL_NKINDS && strcmp(w[0], kind_names[k]); k++)
		;
	if (k == WL_NKINDS)
		return FAIL("kind '%s': accepted poisson, intersite, incast, long, staged", w[0]);
	if (s->ngroups == WL_MAX_GROUPS)
		return FAIL("more than %d flow groups", WL_MAX_GROUPS);
	g = &s->g[s->ngroups];
	memset(g, 0, sizeof(*g));
	g->kind = (enum wl_kind)k;
	g->line = s->lineno;
	g->rounds = 1;
	g->bytes = g->kind == WL_INCAST ? 0 : WL_BYTES_FOREVER;
	for (int i = 1; i < n; i++)
		if (group_key(s, g, w[i], err, errlen))
			return -EINVAL;
	if (group_check(s, g, err, errlen))
		return -EINVAL;
	s->ngroups++;
	return 0;
}

int wl_finish(struct wl_spec *s, char *err, size_t errlen)
{
	if (!s->ngroups)
		return FAIL("no flow groups: expected lines 'KIND KEY=VALUE...' (KIND: poisson, "
			    "intersite, incast, long, staged)");
	return 0;
}

static int line_step(void *s, const char *line, size_t len, char *err, size_t errlen)
{
	return wl_line(s, line, len, err, errlen);
}

int wl_parse(struct wl_spec *s, const char *text, size_t len, const char *file, char *err,
	     size_t errlen)
{
	int rc;

	wl_init(s, file);
	rc = sim_each_line(text, len, line_step, s, err, errlen);
	return rc ? rc : wl_finish(s, err, errlen);
}

void wl_attach_cdf(struct wl_spec *s, const char *name, const struct cdf *c)
{
	for (unsigned i = 0; i < s->ngroups; i++)
		if ((KIND(s->g[i].kind) & POISSONS) && !strcmp(s->g[i].cdf_name, name))
			s->g[i].cdf = c;
}

int wl_resolve_cdfs(struct wl_spec *s, struct cdf *store, size_t nstore,
		    int (*load)(void *ctx, const char *name, struct cdf *out, char *err,
				size_t errlen),
		    void *ctx, char *err, size_t errlen)
{
	size_t used = 0;
	char msg[512];

	for (unsigned i = 0; i < s->ngroups; i++) {
		struct wl_group *g = &s->g[i];
		int rc;

		if (!(KIND(g->kind) & POISSONS) || g->cdf)
			continue;
		if (used == nstore) {
			s->lineno = g->line;
			return FAIL("cdf '%s': more than %zu distinct CDFs", g->cdf_name, nstore);
		}
		rc = load(ctx, g->cdf_name, &store[used], msg, sizeof(msg));
		if (rc) {
			s->lineno = g->line;
			return qp_errmsg(rc, err, errlen, "%s:%d: cdf '%s': %s", s->file, g->line,
					 g->cdf_name, msg);
		}
		wl_attach_cdf(s, g->cdf_name, &store[used++]);
	}
	return 0;
}
