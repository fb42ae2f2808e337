/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A run's memory, estimated before it starts (netrun_mem.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netrun_mem.h"

struct edge {
	uint64_t t;
	int d;                        /* +1 a start, -1 an end */
};

static int by_time(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d;           /* ends before starts at one instant */
}

size_t nr_mem_running(const struct wl_flow *flows, size_t n, uint64_t host_bps,
		      uint64_t rtt_ns)
{
	struct edge *e = calloc(2 * n + 1, sizeof(*e));
	size_t ne = 0, held = 0, now = 0, most = 0;

	if (!e)
		return n;                 /* no room to look: every flow */
	for (size_t k = 0; k < n; k++) {
		const struct wl_flow *f = &flows[k];
		if (f->chained) {
			held++;
			continue;
		}
		e[ne++] = (struct edge){ f->start_ns, 1 };
		if (f->bytes != WL_BYTES_FOREVER) {
			long double tx = (long double)f->bytes * 8e9L / (long double)host_bps;
			e[ne++] = (struct edge){ f->start_ns + 4 * ((uint64_t)tx + rtt_ns), -1 };
		}
	}
	qsort(e, ne, sizeof(*e), by_time);
	for (size_t i = 0; i < ne; i++) {
		now = e[i].d > 0 ? now + 1 : now - 1;
		if (now > most)
			most = now;
	}
	free(e);
	return most + held;
}

void nr_mem_estimate(struct nr_mem *m)
{
	m->bytes = NR_MEM_BASE + (uint64_t)m->hosts * NR_MEM_HOST +
		   (uint64_t)m->ports * NR_MEM_PORT +
		   (uint64_t)m->switches * m->fwd_slots * NR_MEM_FWD_SLOT + m->routes_bytes +
		   (uint64_t)m->flows * NR_MEM_FLOW + (uint64_t)m->running * NR_MEM_RUNNING;
}

const char *nr_mem_fmt(uint64_t b, char *buf, size_t len)
{
	if (b >= (10ull << 30))
		snprintf(buf, len, "%.1f GB", (double)b / (1 << 30));
	else
		snprintf(buf, len, "%.0f MB", (double)b / (1 << 20));
	return buf;
}

void nr_mem_describe(const struct nr_mem *m, char *buf, size_t len)
{
	char a[24], b[24], c[24];

	snprintf(buf, len, "%s: %zu hosts x %u KB, %zu switch ports x %u KB, %zu switches' "
		 "learned tables %s, routes %s, %zu flows x %u B, up to %zu running x %u KB",
		 nr_mem_fmt(m->bytes, a, sizeof(a)), m->hosts, NR_MEM_HOST >> 10, m->ports,
		 NR_MEM_PORT >> 10, m->switches,
		 nr_mem_fmt((uint64_t)m->switches * m->fwd_slots * NR_MEM_FWD_SLOT, b, sizeof(b)),
		 nr_mem_fmt(m->routes_bytes, c, sizeof(c)), m->flows, NR_MEM_FLOW, m->running,
		 NR_MEM_RUNNING >> 10);
}

uint64_t nr_mem_available(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}
