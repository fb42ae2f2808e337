/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bench-cc: nanoseconds per event for each congestion-control algorithm.
 *
 * Every algorithm is fed the events it reacts to, prepared in advance (so the loop times
 * only the controller): INT reports with 5 hops whose counters advance as a loaded
 * 100 Gb/s path would make them, plus the algorithm's other inputs (CNPs and timers for
 * dcqcn, levels for ffd, notices for acc, RTT samples for idcc). Each figure is the
 * median of several timed rounds; the first round warms the caches and is not counted.
 *
 *   bench-cc [-n EVENTS] [-r ROUNDS] [-j]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/cc.h"
#include "qpace/opt.h"
#include "qpace/out.h"

#define HOPS QP_INT_MAX_HOPS
#define LINE (100 * QP_GBPS)
#define RTT_NS (10 * QP_NS_PER_US)
#define GAP_NS 80 /* one 1000-byte packet at 100 Gb/s */

struct ev_slot {
	struct cc_event ev;
	struct qp_int_hop hops[HOPS];
	qp_time_ns now;
};

/* What an algorithm is fed besides INT: one in every `every` events is `extra` (every = 1:
 * only `extra`). Derived from the feedback the algorithm declares (cc_needs), so a new
 * algorithm in the registry is benchmarked with no change here. */
struct mix {
	enum cc_event_type extra;
	unsigned every;
	const char *label;
};

/* The benchmark's share of each kind, in the order one is chosen: an algorithm driven by
 * CNPs or levels gets them on every event (with its timers); one driven by INT gets 5-hop
 * INT reports with notices or RTT samples mixed in. */
static const struct {
	unsigned need;
	struct mix mix;
} kinds[] = {
	{ CC_NEED_CNP, { CC_EV_CNP, 1, "CNP + timers" } },
	{ CC_NEED_LEVEL, { CC_EV_LEVEL, 1, "level + timers" } },
	{ CC_NEED_NOTICE, { CC_EV_NOTICE, 64, "INT 5 hops + 1/64 notice" } },
	{ CC_NEED_RTT, { CC_EV_RTT, 2, "INT 5 hops + RTT" } },
};

static struct mix mix_of(const struct cc_ops *ops)
{
	unsigned needs = cc_needs(ops);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (needs & kinds[i].need)
			return kinds[i].mix;
	return (struct mix){ CC_EV_INT, 0, "INT 5 hops" };
}

static void fill(struct ev_slot *s, size_t n, const struct mix *m)
{
	for (size_t i = 0; i < n; i++) {
		struct ev_slot *e = &s[i];
		qp_time_ns now = (qp_time_ns)(i + 1) * GAP_NS;

		e->now = now;
		if (m->every && i % m->every == 0) {
			e->ev.type = m->extra;
			switch (m->extra) {
			case CC_EV_NOTICE:
				e->ev.u.notice = (struct cc_notice){ .switch_id = 3,
								     .queue_bytes = 150000,
								     .link_bps = LINE, .flows = 16,
								     .reflected_ts_ns = now };
				break;
			case CC_EV_LEVEL:
				e->ev.u.level = (uint8_t)((i / 7) % 4);
				break;
			case CC_EV_RTT:
				e->ev.u.rtt_ns = RTT_NS + (i % 13) * 500;
				break;
			default:
				break;
			}
			continue;
		}
		for (unsigned h = 0; h < HOPS; h++) {
			e->hops[h] = (struct qp_int_hop){
				.switch_id = h + 1,
				.port = (uint16_t)h,
				.ts_ns = now + h * 1000,
				/* 95% utilisation; queue swinging between 0 and ~1 BDP */
				.tx_bytes = (uint64_t)(i + 1) * 950,
				.qlen_bytes = (uint32_t)((i * 37 + h * 1000) % 125000),
				.link_bps = LINE,
			};
		}
		e->ev.type = CC_EV_INT;
		e->ev.u.int_report.seq = (uint64_t)(i + 1) * 1000;
		e->ev.u.int_report.snd_nxt = (uint64_t)(i + 1) * 1000 + 125000;
		e->ev.u.int_report.nhops = HOPS;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One round: fresh controller, every event then its timers; returns ns per event. */
static double round_ns(const struct cc_ops *ops, struct ev_slot *s, size_t n, uint64_t *sink)
{
	struct cc_path path = { .line_bps = LINE, .base_rtt_ns = RTT_NS, .mtu_bytes = 1000 };
	char err[256];
	struct cc *cc = cc_create_ops(ops, &path, NULL, 0, err, sizeof(err));
	qp_time_ns t0, t1;

	if (!cc) {
		fprintf(stderr, "bench-cc: %s\n", err);
		exit(1);
	}
	/* Point each INT event at its own hop array (slots may have moved). */
	for (size_t i = 0; i < n; i++)
		if (s[i].ev.type == CC_EV_INT)
			s[i].ev.u.int_report.hops = s[i].hops;
	t0 = qp_now_ns();
	for (size_t i = 0; i < n; i++) {
		*sink += cc_event(cc, &s[i].ev, s[i].now);
		if (cc->timer_ns <= s[i].now)
			*sink += cc_timer(cc, s[i].now);
	}
	t1 = qp_now_ns();
	*sink += cc->rate_bps;
	cc_destroy(cc);
	return (double)(t1 - t0) / (double)n;
}

struct opts {
	uint64_t n, rounds;
	bool json;
};

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "events", 'n', QP_OPT_UINT, "EVENTS", AT(n), .min = 1000, .max = 10000000,
	  .help = "events per round, 1000..10000000", .def = "200000" },
	{ "rounds", 0, QP_OPT_UINT, "ROUNDS", AT(rounds), .min = 1, .max = 100,
	  .old_short = 'r', .help = "timed rounds, 1..100; the median is printed", .def = "7" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object instead of the table" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "bench-cc",
	.head = "usage: bench-cc [-n EVENTS] [-r ROUNDS] [-j]\n"
		"  Nanoseconds per event for each congestion-control algorithm.\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

int main(int argc, char **argv)
{
	struct opts args = { 0 };
	uint64_t sink = 0;
	struct qp_out o;
	int rc = qp_opt_main(&prog, argc, argv, &args, NULL);

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	unsigned long n = (unsigned long)args.n, rounds = (unsigned long)args.rounds;
	bool json = args.json;

	struct ev_slot *slots = calloc(n, sizeof(*slots));
	double *ns = calloc(rounds, sizeof(*ns));
	if (!slots || !ns) {
		fprintf(stderr, "bench-cc: out of memory for %lu events\n", n);
		return 1;
	}
	qp_out_init(&o, stdout, QP_OUT_JSON);
	if (json) {
		qp_out_obj(&o, NULL);
		qp_out_u64(&o, "events_per_round", n);
		qp_out_u64(&o, "rounds", rounds);
		qp_out_arr(&o, "results");
	} else {
		printf("%-8s %-28s %12s %12s %12s\n", "algo", "events", "ns/event p50", "min", "max");
	}
	for (const struct cc_ops *const *all = cc_all(); *all; all++) {
		const struct cc_ops *ops = *all;
		struct mix mix = mix_of(ops);

		fill(slots, n, &mix);
		round_ns(ops, slots, n, &sink); /* warm-up */
		for (unsigned long r = 0; r < rounds; r++)
			ns[r] = round_ns(ops, slots, n, &sink);
		qsort(ns, rounds, sizeof(ns[0]), cmp_double);
		if (json) {
			qp_out_obj(&o, NULL);
			qp_out_str(&o, "algorithm", ops->name);
			qp_out_str(&o, "events", mix.label);
			qp_out_double(&o, "ns_per_event_p50", ns[rounds / 2], "%.1f");
			qp_out_double(&o, "min", ns[0], "%.1f");
			qp_out_double(&o, "max", ns[rounds - 1], "%.1f");
			qp_out_end(&o);
		} else {
			printf("%-8s %-28s %12.1f %12.1f %12.1f\n", ops->name, mix.label,
			       ns[rounds / 2], ns[0], ns[rounds - 1]);
		}
	}
	if (json) {
		qp_out_end(&o);
		qp_out_end(&o);
	}
	/* Keep the optimiser from discarding the controllers' work. */
	if (sink == 42)
		fprintf(stderr, "\n");
	free(slots);
	free(ns);
	return 0;
}
