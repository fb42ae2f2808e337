/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Incast reports: text, JSON, the comparison table, summary.json and per-flow CSV.
 * One table of fields drives the text summary and the JSON object (iproute2's
 * print_uint(PRINT_ANY, ...) habit), so a key cannot be in one and missing in the other. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "qpace/out.h"
#include "endpoint.h"
#include "incast.h"

enum field_type { FT_U64, FT_DBL, FT_STR, FT_BOOL };

struct incast_field {
	const char *group;           /* JSON: nested in an object of this name; NULL = top */
	const char *key;             /* JSON key */
	const char *label;           /* text label; NULL = JSON only */
	enum field_type type;
	size_t off;
	int decimals;
	double text_scale;           /* text shows value * scale ... */
	const char *text_unit;       /* ... in this unit */
	bool needs_switch;           /* null in JSON, "n/a" in text without switch figures */
	bool virtual_only;           /* only in a virtual-time result (text: one line) */
};

#define R(f) offsetof(struct incast_result, f)
static const struct incast_field incast_fields[] = {
	{ NULL, "algorithm", "algorithm", FT_STR, R(algorithm), 0, 1, "", false, false },
	{ NULL, "cc", NULL, FT_STR, R(cc), 0, 1, "", false, false },
	{ NULL, "op", "operation", FT_STR, R(op), 0, 1, "", false, false },
	{ NULL, "credits", NULL, FT_BOOL, R(credits), 0, 1, "", false, false },
	{ NULL, "senders", "senders", FT_U64, R(senders), 0, 1, "", false, false },
	{ NULL, "bytes_per_sender", "bytes per sender", FT_U64, R(bytes_per_sender), 0, 1, "B", false, false },
	{ NULL, "rounds", "rounds", FT_U64, R(rounds), 0, 1, "", false, false },
	{ NULL, "link_bps", "link", FT_U64, R(link_bps), 1, 1e-6, "Mb/s", false, false },
	{ NULL, "mtu_bytes", NULL, FT_U64, R(mtu_bytes), 0, 1, "", false, false },
	{ NULL, "buffer_bytes", NULL, FT_U64, R(buffer_bytes), 0, 1, "", false, false },
	{ NULL, "qp_timeout", NULL, FT_U64, R(qp_timeout), 0, 1, "", false, false },
	{ NULL, "base_rtt_ns", "base RTT (measured)", FT_U64, R(base_rtt_ns), 1, 1e-3, "us", false, false },
	{ NULL, "payload_bps", "bottleneck payload rate", FT_DBL, R(payload_bps), 0, 1e-6, "Mb/s", false, false },
	{ NULL, "goodput_bps", "goodput", FT_DBL, R(goodput_bps), 0, 1e-6, "Mb/s", false, false },
	{ NULL, "goodput_ratio", "goodput / payload rate", FT_DBL, R(goodput_ratio), 4, 100, "%", false, false },
	{ NULL, "jain", "Jain's fairness index", FT_DBL, R(jain), 4, 1, "", false, false },
	{ "fct_us", "p50", "FCT p50", FT_DBL, R(fct.p50_us), 1, 1, "us", false, false },
	{ "fct_us", "p99", "FCT p99", FT_DBL, R(fct.p99_us), 1, 1, "us", false, false },
	{ "fct_us", "max", "FCT max", FT_DBL, R(fct.max_us), 1, 1, "us", false, false },
	{ "slowdown", "p50", "FCT slowdown p50", FT_DBL, R(fct.slowdown_p50), 2, 1, "", false, false },
	{ "slowdown", "p99", "FCT slowdown p99", FT_DBL, R(fct.slowdown_p99), 2, 1, "", false, false },
	{ NULL, "flows", NULL, FT_U64, R(flows), 0, 1, "", false, false },
	{ NULL, "flows_done", "flows completed", FT_U64, R(flows_done), 0, 1, "", false, false },
	{ NULL, "retransmits", "retransmitted packets", FT_U64, R(retransmits), 0, 1, "", false, false },
	{ NULL, "timeouts", "retransmission timeouts", FT_U64, R(timeouts), 0, 1, "", false, false },
	{ NULL, "rounds_with_timeout", "rounds with a timeout", FT_U64, R(rounds_with_timeout), 0, 1, "", false, false },
	{ NULL, "drops", "switch drops", FT_U64, R(drops), 0, 1, "", true, false },
	{ NULL, "ecn_marks", "ECN marks", FT_U64, R(ecn_marks), 0, 1, "", true, false },
	{ NULL, "impair_lost", "lost by --impair", FT_U64, R(impair_lost), 0, 1, "", true, false },
	{ NULL, "max_queue_bytes", "peak queue", FT_U64, R(max_queue_bytes), 1, 1.0 / 1024, "KiB", true, false },
	{ NULL, "avg_queue_bytes", "mean queue", FT_DBL, R(avg_queue_bytes), 0, 1.0 / 1024, "KiB", true, false },
	{ NULL, "loop_late_max_ns", "loop late by at most", FT_U64, R(loop_late_max_ns), 1, 1e-6, "ms", false, false },
	{ NULL, "loop_late_total_ns", "loop late in all", FT_U64, R(loop_late_total_ns), 1, 1e-6, "ms", false, false },
	{ NULL, "switch_late_max_ns", "switch late by at most", FT_U64, R(switch_late_max_ns), 1, 1e-6, "ms", true, false },
	{ NULL, "switch_late_total_ns", "switch late in all", FT_U64, R(switch_late_total_ns), 1, 1e-6, "ms", true, false },
	{ NULL, "elapsed_s", NULL, FT_DBL, R(elapsed_s), 6, 1, "", false, false },
	{ NULL, "clock", NULL, FT_STR, R(clock), 0, 1, "", false, false },
	{ NULL, "events", NULL, FT_U64, R(events), 0, 1, "", false, true },
	{ NULL, "packet_hops", NULL, FT_U64, R(packet_hops), 0, 1, "", false, true },
	{ NULL, "sim_s", NULL, FT_DBL, R(sim_s), 6, 1, "", false, true },
	{ NULL, "wall_s", NULL, FT_DBL, R(wall_s), 3, 1, "", false, true },
};
#undef R
#define NFIELDS (sizeof(incast_fields) / sizeof(incast_fields[0]))

static const void *field_ptr(const struct incast_result *r, const struct incast_field *f)
{
	return (const char *)r + f->off;
}

static void field_json(struct qp_out *o, const struct incast_result *r,
		       const struct incast_field *f)
{
	const void *p = field_ptr(r, f);
	char fmt[8];

	if (f->needs_switch && !r->have_switch) {
		qp_out_null(o, f->key);
		return;
	}
	switch (f->type) {
	case FT_U64: qp_out_u64(o, f->key, *(const uint64_t *)p); break;
	case FT_DBL:
		snprintf(fmt, sizeof(fmt), "%%.%df", f->decimals);
		qp_out_double(o, f->key, *(const double *)p, fmt);
		break;
	case FT_STR: qp_out_str(o, f->key, (const char *)p); break;
	case FT_BOOL: qp_out_bool(o, f->key, *(const bool *)p); break;
	}
}

static void incast_json_obj(struct qp_out *o, const struct incast_result *r)
{
	const char *group = NULL;

	qp_out_obj(o, NULL);
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct incast_field *f = &incast_fields[i];
		if (f->virtual_only && strcmp(r->clock, "virtual") != 0)
			continue;
		if (group && (!f->group || strcmp(group, f->group) != 0)) {
			qp_out_end(o);
			group = NULL;
		}
		if (f->group && !group) {
			qp_out_obj(o, f->group);
			group = f->group;
		}
		field_json(o, r, f);
	}
	if (group)
		qp_out_end(o);
	qp_out_end(o);
}

void incast_print_json(FILE *out, const struct incast_result *r, bool pretty)
{
	struct qp_out o;

	qp_out_init(&o, out, pretty ? QP_OUT_JSON_PRETTY : QP_OUT_JSON);
	incast_json_obj(&o, r);
}

int incast_write_summary(const char *path, const struct incast_result *r, size_t n)
{
	FILE *f = fopen(path, "w");
	struct qp_out o;

	if (!f)
		return -errno;
	qp_out_init(&o, f, QP_OUT_JSON_PRETTY);
	qp_out_arr(&o, NULL);
	for (size_t i = 0; i < n; i++)
		incast_json_obj(&o, &r[i]);
	qp_out_end(&o);
	return fclose(f) ? -errno : 0;
}

static double field_value(const struct incast_result *r, const struct incast_field *f)
{
	const void *p = field_ptr(r, f);

	return f->type == FT_U64 ? (double)*(const uint64_t *)p : *(const double *)p;
}

static void incast_print_totals(FILE *out, const struct incast_result *r)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct incast_field *f = &incast_fields[i];
		if (!f->label)
			continue;
		fprintf(out, " %-26s: ", f->label);
		if (f->needs_switch && !r->have_switch)
			fputs("n/a (switch not started by this run)\n", out);
		else if (f->type == FT_STR)
			fprintf(out, "%s\n", (const char *)field_ptr(r, f));
		else if (f->type == FT_BOOL)
			fprintf(out, "%s\n", *(const bool *)field_ptr(r, f) ? "yes" : "no");
		else if (f->type == FT_U64 && f->text_scale == 1)
			fprintf(out, "%" PRIu64 "%s%s\n", *(const uint64_t *)field_ptr(r, f),
				*f->text_unit ? " " : "", f->text_unit);
		else
			fprintf(out, "%.*f%s%s\n", f->decimals > 2 ? 2 : (f->decimals ? f->decimals : 1),
				field_value(r, f) * f->text_scale, *f->text_unit ? " " : "",
				f->text_unit);
	}
}

/* Flows that waited out their local ACK timeout while a shorter one would still outlast
 * every RTT of this fabric (twice a full buffer's drain, ep_timeout_for_drain): say which
 * -u that is. One NAK per gap (rxe's) leaves a flow whose resent tail is dropped again to
 * its timer, and perftest's 14 (67 ms) is longer than a 1 Gb/s round. */
static void print_timeout_hint(FILE *out, const struct incast_result *r)
{
	uint8_t t;

	if (!r->timeouts || !r->qp_timeout || !r->link_bps || !r->buffer_bytes)
		return;
	t = ep_timeout_for_drain(r->buffer_bytes, r->link_bps, 1);
	if (t >= r->qp_timeout)
		return;
	fprintf(out, " note: %" PRIu64 " timeout%s of %.1f ms (-u %" PRIu64 "); a full %" PRIu64
		"-byte buffer drains in %.1f ms here, so -u %u (%.1f ms) still outlasts every "
		"round trip and a lost resent tail costs less\n", r->timeouts,
		r->timeouts == 1 ? "" : "s", (double)qp_ack_timeout_ns((uint8_t)r->qp_timeout) / 1e6,
		r->qp_timeout, r->buffer_bytes,
		qp_tx_time_ns(r->buffer_bytes, r->link_bps) / 1e6, t,
		(double)qp_ack_timeout_ns(t) / 1e6);
}

void incast_print_text(FILE *out, const struct incast_result *r, const struct incast_flow *f,
		       size_t nflows)
{
	fputs("---------------------------------------------------------------------------------------\n", out);
	fprintf(out, "                    Incast %" PRIu32 " -> 1, %s\n", (uint32_t)r->senders, r->algorithm);
	fputs("---------------------------------------------------------------------------------------\n", out);
	fputs(" round  sender  bytes        fct[usec]     retrans  timeouts\n", out);
	for (size_t i = 0; i < nflows; i++) {
		if (!f[i].done) {
			fprintf(out, " %-6" PRIu32 " %-7" PRIu32 " %-12" PRIu64 " %-13s %-8" PRIu64
				" %" PRIu64 "\n", f[i].round, f[i].sender, f[i].bytes, "unfinished",
				f[i].retransmits, f[i].timeouts);
			continue;
		}
		fprintf(out, " %-6" PRIu32 " %-7" PRIu32 " %-12" PRIu64 " %-13.1f %-8" PRIu64
			" %" PRIu64 "\n", f[i].round, f[i].sender, f[i].bytes,
			(double)f[i].fct_ns / 1e3, f[i].retransmits, f[i].timeouts);
	}
	fputs("---------------------------------------------------------------------------------------\n", out);
	incast_print_totals(out, r);
	print_timeout_hint(out, r);
	if (!strcmp(r->clock, "virtual"))
		fprintf(out, " %-26s: %.6f s simulated in %.3f s wall, %" PRIu64 " events, %" PRIu64
			" packet-hops (%.0f per wall second)\n", "virtual time", r->sim_s, r->wall_s,
			r->events, r->packet_hops,
			r->wall_s > 0 ? (double)r->packet_hops / r->wall_s : 0.0);
	fputs("---------------------------------------------------------------------------------------\n", out);
}

/* The comparison table: the figures the demo must show, one row per algorithm. */

static int field_index(const char *group, const char *key)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (strcmp(incast_fields[i].key, key) == 0 &&
		    (group ? incast_fields[i].group && !strcmp(incast_fields[i].group, group)
			   : !incast_fields[i].group))
			return (int)i;
	return -1;
}

static const struct {
	const char *head, *group, *key;
	int width;
} compare_cols[] = {
	{ "algorithm", NULL, "algorithm", 10 },
	{ "goodput[Mb/s]", NULL, "goodput_bps", 13 },
	{ "of-payload[%]", NULL, "goodput_ratio", 13 },
	{ "jain", NULL, "jain", 6 },
	{ "fct_p50[us]", "fct_us", "p50", 11 },
	{ "fct_p99[us]", "fct_us", "p99", 11 },
	{ "fct_max[us]", "fct_us", "max", 11 },
	{ "retrans", NULL, "retransmits", 8 },
	{ "timeouts", NULL, "timeouts", 8 },
	{ "drops", NULL, "drops", 7 },
	{ "ecn", NULL, "ecn_marks", 7 },
	{ "peak_q[KiB]", NULL, "max_queue_bytes", 11 },
	{ "mean_q[KiB]", NULL, "avg_queue_bytes", 11 },
	{ "late[ms]", NULL, "loop_late_max_ns", 8 },
};
#define NCOLS (sizeof(compare_cols) / sizeof(compare_cols[0]))

void incast_print_compare(FILE *out, const struct incast_result *r, size_t n)
{
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(out, "%s%-*s", c ? " " : " ", compare_cols[c].width, compare_cols[c].head);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		for (size_t c = 0; c < NCOLS; c++) {
			int fi = field_index(compare_cols[c].group, compare_cols[c].key);
			const struct incast_field *f = &incast_fields[fi];
			int w = compare_cols[c].width;
			fputc(' ', out);
			if (f->needs_switch && !r[i].have_switch)
				fprintf(out, "%-*s", w, "n/a");
			else if (f->type == FT_STR)
				fprintf(out, "%-*s", w, (const char *)field_ptr(&r[i], f));
			else if (f->type == FT_U64 && f->text_scale == 1)
				fprintf(out, "%-*" PRIu64, w, *(const uint64_t *)field_ptr(&r[i], f));
			else
				fprintf(out, "%-*.*f", w, f->decimals > 3 ? 3 : (f->decimals ? f->decimals : 1),
					field_value(&r[i], f) * f->text_scale);
		}
		fputc('\n', out);
	}
	fflush(out);
}

int incast_write_flows_csv(const char *path, const struct incast_run *run,
			   qp_time_ns standalone_ns)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs("algorithm,round,sender,bytes,fct_us,slowdown,retransmits,timeouts,done\n", f);
	for (size_t i = 0; i < run->nflows; i++) {
		const struct incast_flow *fl = &run->flows[i];
		fprintf(f, "%s,%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%.3f,%.3f,%" PRIu64 ",%" PRIu64
			",%d\n", run->res.algorithm, fl->round, fl->sender, fl->bytes,
			(double)fl->fct_ns / 1e3,
			fl->done ? stats_slowdown(fl->fct_ns, standalone_ns) : NAN, fl->retransmits,
			fl->timeouts, fl->done);
	}
	return fclose(f) ? -errno : 0;
}
