/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bench-gaps: how long this machine takes the CPU away from a loop that never sleeps.
 *
 * One thread per CPU (pinned), each reading CLOCK_MONOTONIC in a tight loop for TIME and
 * recording every gap between two consecutive reads longer than 0.1 ms: its largest, and
 * how many were over 0.5, 1 and 2 ms. Nothing else is done in the loop, so a gap is time
 * the thread did not run: the kernel's interrupts and softirqs on that CPU, another task,
 * or (in a VM) the hypervisor not running the virtual CPU, which the guest's steal counter
 * does not always show. A real-time loop (qpace-bench incast's, the switch's) can be no
 * less late than this; bench/rt_incast.sh prints it beside the incast's lateness.
 *
 *   bench-gaps [-t TIME] [-j]
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/time.h"

#define MAX_CPUS 64
static const qp_time_ns bounds[] = { 500 * QP_NS_PER_US, QP_NS_PER_MS, 2 * QP_NS_PER_MS };
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))

struct spinner {
	pthread_t th;
	int cpu;
	qp_time_ns for_ns, max_gap_ns, lost_ns;   /* lost: the sum of gaps over 0.1 ms */
	uint64_t over[NBOUNDS];
	bool pinned;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;
	cpu_set_t set;
	qp_time_ns start, end, last;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	s->pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
	start = last = qp_now_ns();
	end = start + s->for_ns;
	for (;;) {
		qp_time_ns t = qp_now_ns(), gap = t - last;

		if (gap > 100 * QP_NS_PER_US) {
			s->lost_ns += gap;
			if (gap > s->max_gap_ns)
				s->max_gap_ns = gap;
			for (size_t b = 0; b < NBOUNDS; b++)
				s->over[b] += gap > bounds[b];
		}
		last = t;
		if (t >= end)
			break;
	}
	return NULL;
}

struct opts {
	qp_time_ns time_ns;
	bool json;
};
#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "time", 0, QP_OPT_TIME, "TIME", AT(time_ns), .min = QP_NS_PER_MS,
	  .max = 600 * QP_NS_PER_S, .unit_ns = QP_NS_PER_S,
	  .old_short = 't',
	  .help = "how long each CPU's loop runs, 1ms..600s (a bare number: seconds)",
	  .def = "2s" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object instead of the table" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "bench-gaps",
	.head = "usage: bench-gaps [-t TIME] [-j]\n"
		"  The longest times this machine takes each CPU from a loop that never sleeps.\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

int main(int argc, char **argv)
{
	static struct spinner s[MAX_CPUS];
	struct opts a = { 0 };
	struct qp_out o;
	cpu_set_t set;
	int rc = qp_opt_main(&prog, argc, argv, &a, NULL), n = 0;

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("bench-gaps: sched_getaffinity");
		return 1;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE && n < MAX_CPUS; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		s[n] = (struct spinner){ .cpu = cpu, .for_ns = a.time_ns };
		if ((rc = pthread_create(&s[n].th, NULL, spin, &s[n]))) {
			fprintf(stderr, "bench-gaps: thread for CPU %d: %s\n", cpu, strerror(rc));
			return 1;
		}
		n++;
	}
	for (int i = 0; i < n; i++)
		pthread_join(s[i].th, NULL);
	qp_out_init(&o, stdout, QP_OUT_JSON);
	if (a.json) {
		qp_out_obj(&o, NULL);
		qp_out_double(&o, "seconds", (double)a.time_ns / 1e9, "%.3f");
		qp_out_arr(&o, "cpus");
	} else {
		printf("each CPU spun %.3f s without sleeping; the times it did not run:\n",
		       (double)a.time_ns / 1e9);
		printf("%4s %12s %10s %8s %8s %8s\n", "cpu", "max_gap[ms]", "lost[ms]", ">0.5ms",
		       ">1ms", ">2ms");
	}
	for (int i = 0; i < n; i++) {
		if (!a.json) {
			printf("%4d %12.3f %10.3f %8llu %8llu %8llu%s\n", s[i].cpu,
			       (double)s[i].max_gap_ns / 1e6, (double)s[i].lost_ns / 1e6,
			       (unsigned long long)s[i].over[0], (unsigned long long)s[i].over[1],
			       (unsigned long long)s[i].over[2], s[i].pinned ? "" : "  (not pinned)");
			continue;
		}
		qp_out_obj(&o, NULL);
		qp_out_u64(&o, "cpu", (uint64_t)s[i].cpu);
		qp_out_bool(&o, "pinned", s[i].pinned);
		qp_out_double(&o, "max_gap_ms", (double)s[i].max_gap_ns / 1e6, "%.3f");
		qp_out_double(&o, "lost_ms", (double)s[i].lost_ns / 1e6, "%.3f");
		qp_out_u64(&o, "gaps_over_0_5ms", s[i].over[0]);
		qp_out_u64(&o, "gaps_over_1ms", s[i].over[1]);
		qp_out_u64(&o, "gaps_over_2ms", s[i].over[2]);
		qp_out_end(&o);
	}
	if (a.json) {
		qp_out_end(&o);
		qp_out_end(&o);
	}
	return 0;
}
