/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workloads: flow groups read from a text file, and the flows they generate from a seed
 * on a given set of hosts — a list of {src, dst, bytes, start} sorted by start time, the
 * same list for the same seed on every machine (docs/workloads.md).
 *
 * File format, one flow group a line, KIND then KEY=VALUE words; '#' starts a comment:
 *
 *   poisson   cdf=websearch load=0.5 duration=50ms [hosts=all] [start=0]
 *   intersite cdf=websearch load=0.3 duration=50ms cross=0.2 [hosts=all] [start=0]
 *   incast    bytes=500K [senders=1-60] [receiver=0] [rounds=1] [gap=0 | every=TIME] [start=0]
 *   long      [senders=1-7] [receiver=0] [bytes=forever] [start=0]
 *   staged    step=10ms [senders=1-4] [receiver=0] [bytes=forever] [start=0]
 *
 * poisson    every host of `hosts` starts flows as a Poisson process; sizes from the CDF;
 *            each to a host drawn uniformly from the others of `hosts`. The arrival rate per
 *            host is load x host link rate / (8 x mean flow size), HPCC's traffic_gen.py
 *            (avg_inter_arrival = 1 / (bandwidth x load / 8 / avg)), so `load` is the
 *            fraction of each host's link that its own flows offer. Arrivals fall in
 *            [start, start + duration).
 * intersite  poisson on a two-site topology, each flow's destination in the other site
 *            with probability `cross` (uniform among that site's hosts of `hosts`), else
 *            in its own site.
 * incast     `rounds` rounds of every sender sending `bytes` to the receiver. With `gap`
 *            (the default, 0) a round starts that long after the last flow of the round
 *            before completes (the bench's incast: closed loop); with `every` rounds start
 *            at that period whatever happened (open loop).
 * long       one flow per sender, all at `start`; `forever` never completes (the run's
 *            time limit ends it).
 * staged     sender k (in list order) starts at start + k x step: flows joining one by
 *            one.
 * Hosts are numbered from 0 as the topology numbers them (qpace/topogen.h); a list is
 * `all` or numbers and ranges, "0-15,20,22-23". senders defaults to every host but the
 * receiver. Sizes take binary units (500K = 512000 bytes), times ns/us/ms/s.
 *
 * Each group draws from its own stream of the seed (qpace/rng.h: stream = its index), so
 * adding a group leaves the flows of the others unchanged.
 *
 * The parser is fed lines (wl_init / wl_line / wl_finish) and opens no files; the CDFs a
 * spec names are attached afterwards (wl_attach_cdf, or wl_resolve_cdfs with a loader).
 * Errors are "FILE:LINE: what, the value, the accepted range" and -EINVAL.
 */
#ifndef QPACE_WORKLOAD_H
#define QPACE_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/cdf.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define WL_MAX_GROUPS 256
#define WL_MAX_RANGES 32          /* items in a host list */
#define WL_MAX_HOST 65535         /* largest host number in a list */
#define WL_CDF_NAME 128
#define WL_BYTES_FOREVER UINT64_MAX

enum wl_kind { WL_POISSON, WL_INTERSITE, WL_INCAST, WL_LONG, WL_STAGED, WL_NKINDS };

/* A host list: ranges [lo, hi]; none means all hosts. */
struct wl_hosts {
	unsigned n;
	struct { uint32_t lo, hi; } r[WL_MAX_RANGES];
};

struct wl_group {
	enum wl_kind kind;
	int line;                     /* its line in the workload file */
	uint32_t seen;                /* keys given, one bit each (workload.c's table) */
	qp_time_ns start_ns;
	/* poisson, intersite */
	char cdf_name[WL_CDF_NAME];
	const struct cdf *cdf;        /* attached after parsing; not owned */
	double load;                  /* (0, 1] of each host's link */
	qp_time_ns duration_ns;
	double cross;                 /* intersite: [0, 1] */
	struct wl_hosts hosts;
	/* incast, long, staged */
	struct wl_hosts senders;
	uint32_t receiver;
	uint64_t bytes;               /* WL_BYTES_FOREVER: never completes */
	uint32_t rounds;
	qp_time_ns gap_ns;            /* incast, closed loop */
	qp_time_ns every_ns;          /* incast, open loop (0: closed) */
	qp_time_ns step_ns;           /* staged */
};

struct wl_spec {
	unsigned ngroups;
	struct wl_group g[WL_MAX_GROUPS];
	/* parse state */
	const char *file;             /* for messages; not copied */
	int lineno;
};

/* Where the flows go: the topology's hosts. */
struct wl_env {
	uint32_t hosts;
	qp_rate_bps host_bps;         /* every host's link rate: poisson's load is of it */
	const uint8_t *site;          /* [hosts]: 0 or 1 (intersite); NULL: one site */
	uint64_t seed;
	size_t max_flows;             /* more is an error (0: WL_DEFAULT_MAX_FLOWS) */
};
#define WL_DEFAULT_MAX_FLOWS 4000000u

struct wl_flow {
	qp_time_ns start_ns;          /* chained: the wait after the previous round ended */
	uint32_t src, dst;
	uint64_t bytes;               /* WL_BYTES_FOREVER: never completes */
	uint32_t group;               /* index of its group (its line: spec->g[group].line) */
	uint32_t round;               /* incast round, else 0 */
	bool chained;                 /* starts start_ns after every flow of (group, round - 1)
					 * has completed */
	uint32_t id;                  /* the order of generation, unique in a list */
};

/* Sorted: flows that are not chained by (start_ns, group, id), then the chained ones by
 * (group, round, id). */
struct wl_flows {
	size_t n, cap;
	struct wl_flow *f;
};

void wl_init(struct wl_spec *s, const char *file);
int wl_line(struct wl_spec *s, const char *line, size_t len, char *err, size_t errlen);
int wl_finish(struct wl_spec *s, char *err, size_t errlen);
int wl_parse(struct wl_spec *s, const char *text, size_t len, const char *file, char *err,
	     size_t errlen);
const char *wl_kind_name(enum wl_kind k);

/* The CDF for every group that names @name. */
void wl_attach_cdf(struct wl_spec *s, const char *name, const struct cdf *c);
/* Load each CDF the spec names with @load (once per distinct name) into @store, which
 * holds @nstore CDFs, and attach them. 0, or the loader's error. */
int wl_resolve_cdfs(struct wl_spec *s, struct cdf *store, size_t nstore,
		    int (*load)(void *ctx, const char *name, struct cdf *out, char *err,
				size_t errlen),
		    void *ctx, char *err, size_t errlen);

/* The flows of every group on @env (the spec's CDFs attached). 0, or -EINVAL with
 * "FILE:LINE: ..." (a host the topology does not have, too many flows...) or -ENOMEM. */
int wl_generate(const struct wl_spec *s, const struct wl_env *env, struct wl_flows *out,
		char *err, size_t errlen);
void wl_flows_free(struct wl_flows *f);

/* Files: a workload file (wl_parse on its text), and its CDFs: a name with a '/' or ending
 * in ".cdf" is a path (relative to the workload file's folder), any other NAME is
 * NAME.cdf in one of the @ndirs folders of @dirs, the first that has it. */
int wl_load(struct wl_spec *s, const char *path, char *err, size_t errlen);
int wl_load_cdfs(struct wl_spec *s, struct cdf *store, size_t nstore, const char *const *dirs,
		 size_t ndirs, char *err, size_t errlen);

#endif
