/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The algorithms' parameter tables as text and Markdown, and the command line every
 * program shares to print them (qpace/cc_help.h). Everything is read from the registry
 * and the ops: nothing here names an algorithm. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "qpace/cc_help.h"
#include "qpace/units.h"

#define HELP_USAGE "--help-params ALGO|all|list [--format text|md]"

/* Appends to a caller's buffer; remembers when it ran out of room. */
struct out {
	char *buf;
	size_t len, off;
	bool full;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->off, o->len - o->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->off) {
		o->full = true;
		return;
	}
	o->off += (size_t)n;
}

static int done(const struct out *o)
{
	return o->full ? -ENOSPC : 0;
}

static const char *const type_name[] = {
	[CC_P_DOUBLE] = "number",
	[CC_P_RATE] = "rate",
	[CC_P_TIME] = "time",
	[CC_P_U32] = "count",
	[CC_P_BYTES] = "bytes",
};

static const char *param_type(const struct cc_param *p)
{
	return p->type == CC_P_U32 && p->min == 0 && p->max == 1 ? "0/1" : type_name[p->type];
}

/* A value as a command line gives it: "0.95", "10us", "25G", "16K"; 0 is "0". */
static const char *fmt_value(const struct cc_param *p, double v, char *buf, size_t len)
{
	if (v == 0)
		snprintf(buf, len, "0");
	else if (p->type == CC_P_RATE)
		qp_fmt_rate((qp_rate_bps)v, buf, len);
	else if (p->type == CC_P_TIME)
		qp_fmt_time((qp_time_ns)v, buf, len);
	else if (p->type == CC_P_BYTES)
		qp_fmt_bytes((uint64_t)v, buf, len);
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.10g", v);
	return buf;
}

/* "[0, 1]", "(0, 1)", "[1ns, 1s]": the accepted range with its open ends. */
static const char *fmt_range(const struct cc_param *p, char *buf, size_t len)
{
	char lo[32], hi[32];

	snprintf(buf, len, "%s%s, %s%s", (p->flags & CC_P_MIN_OPEN) ? "(" : "[",
		 fmt_value(p, p->min, lo, sizeof(lo)), fmt_value(p, p->max, hi, sizeof(hi)),
		 (p->flags & CC_P_MAX_OPEN) ? ")" : "]");
	return buf;
}

int cc_params_help(const struct cc_ops *ops, char *buf, size_t len)
{
	struct out o = { buf, len, 0, false };

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	put(&o, "%s: %s\n", ops->name, ops->summary);
	for (const struct cc_param *p = ops->params; p && p->name; p++) {
		char def[32], range[72];
		put(&o, "  %-13s %-6s default %-8s range %-15s %s\n", p->name, param_type(p),
		    fmt_value(p, p->def, def, sizeof(def)), fmt_range(p, range, sizeof(range)),
		    p->doc);
	}
	return done(&o);
}

int cc_params_help_md(const struct cc_ops *ops, char *buf, size_t len)
{
	struct out o = { buf, len, 0, false };

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	put(&o, "| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n");
	for (const struct cc_param *p = ops->params; p && p->name; p++) {
		char def[32], range[72];
		put(&o, "| `%s` | %s | %s | %s | ", p->name, param_type(p),
		    fmt_value(p, p->def, def, sizeof(def)), fmt_range(p, range, sizeof(range)));
		for (const char *d = p->doc; *d; d++) {   /* a '|' in the meaning ends no cell */
			if (*d == '|')
				put(&o, "\\|");
			else
				put(&o, "%c", *d);
		}
		put(&o, " |\n");
	}
	return done(&o);
}

int cc_feedback_describe(const struct cc_ops *ops, char *buf, size_t len)
{
	const struct cc_feedback *f = &ops->feedback;
	unsigned needs = cc_needs(ops);
	struct out o = { buf, len, 0, false };
	const char *sep = "";
	char a[32], b[32], c[32];

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	if (needs & CC_NEED_INT) {
		put(&o, "%sINT reports", sep);
		sep = ", ";
	}
	if ((needs & (CC_NEED_CNP | CC_NEED_ECN)) && f->ecn_kmax_bytes && f->ecn_at_bps) {
		put(&o, "%s%s from ECN marks at dequeue, Kmin %s, Kmax %s, Pmax %g at %s "
		    "(scaled with the rate)", sep,
		    needs & CC_NEED_ECN ? "the ACKs' ECN echo" : "CNPs",
		    qp_fmt_bytes(f->ecn_kmin_bytes, a, sizeof(a)),
		    qp_fmt_bytes(f->ecn_kmax_bytes, b, sizeof(b)), f->ecn_pmax,
		    qp_fmt_rate(f->ecn_at_bps, c, sizeof(c)));
		sep = ", ";
	} else if (needs & (CC_NEED_NOTICE | CC_NEED_CNP)) {
		put(&o, "%s%s at a queue of %s", sep,
		    needs & CC_NEED_NOTICE ? "early notices" : "CNPs (an early notice stands in)",
		    f->notice_bytes ? qp_fmt_bytes(f->notice_bytes, a, sizeof(a)) : "one BDP");
		if (f->notice_interval_ns)
			put(&o, ", one per flow per %s",
			    qp_fmt_time(f->notice_interval_ns, b, sizeof(b)));
		sep = ", ";
	}
	if (needs & CC_NEED_LEVEL) {
		put(&o, "%scongestion levels at a queue of %s, %s, %s", sep,
		    qp_fmt_bytes(f->level_bytes[0], a, sizeof(a)),
		    qp_fmt_bytes(f->level_bytes[1], b, sizeof(b)),
		    qp_fmt_bytes(f->level_bytes[2], c, sizeof(c)));
		sep = ", ";
	}
	/* the transport's events, in the order a source hands them */
	static const struct {
		unsigned need;
		const char *what;
	} tp[] = {
		{ CC_NEED_ACK, "ACKs" }, { CC_NEED_RTT, "RTT samples" },
		{ CC_NEED_LOSS, "NAKs and timeouts" }, { CC_NEED_FLOW, "message sizes" },
	};
	for (size_t i = 0; i < sizeof(tp) / sizeof(tp[0]); i++) {
		if (!(needs & tp[i].need))
			continue;
		put(&o, "%s%s", sep, tp[i].what);
		sep = ", ";
	}
	if (!needs)
		put(&o, "none");
	if (f->params)
		put(&o, "; run with %s", f->params);
	return done(&o);
}

void cc_help_algorithms(FILE *out, const char *prog)
{
	char names[256];

	cc_names(names, sizeof(names), ", ");
	fprintf(out, "\nAlgorithms: %s.\n`%s --help-params ALGO|all` lists their parameters "
		"(--format md: as the docs' tables).\n", names, prog);
}

/* One algorithm: its table (text: with the feedback it needs). */
static int print_one(const struct cc_ops *ops, bool md, FILE *out, const char *prog,
		     FILE *err)
{
	char buf[CC_HELP_MAX], fb[512];
	int rc = md ? cc_params_help_md(ops, buf, sizeof(buf))
		    : cc_params_help(ops, buf, sizeof(buf));

	if (rc == 0 && !md)
		rc = cc_feedback_describe(ops, fb, sizeof(fb));
	if (rc) {
		fprintf(err, "%s: --help-params %s: the table does not fit %zu bytes\n", prog,
			ops->name, sizeof(buf));
		return 1;
	}
	fputs(buf, out);
	if (!md)
		fprintf(out, "  feedback it needs: %s\n", fb);
	return 0;
}

int cc_help_params_main(const char *prog, int argc, char **argv, FILE *out, FILE *err)
{
	const char *algo, *format = "text";
	char names[256];
	bool md;
	int i;

	if (argc < 2)
		return -1;
	if (strcmp(argv[1], "--help-params") == 0) {
		algo = argc > 2 ? argv[2] : NULL;
		i = 3;
	} else if (strncmp(argv[1], "--help-params=", 14) == 0) {
		algo = argv[1] + 14;
		i = 2;
	} else {
		return -1;
	}
	cc_names(names, sizeof(names), ", ");
	if (!algo || !*algo) {
		fprintf(err, "%s: --help-params: needs ALGO, all or list (algorithms: %s)\n", prog,
			names);
		return 1;
	}
	for (; i < argc; i++) {
		if (strncmp(argv[i], "--format=", 9) == 0) {
			format = argv[i] + 9;
		} else if (strcmp(argv[i], "--format") == 0) {
			if (i + 1 == argc) {
				fprintf(err, "%s: --format: needs text or md\n", prog);
				return 1;
			}
			format = argv[++i];
		} else {
			fprintf(err, "%s: '%s': --help-params takes only --format (%s %s)\n", prog,
				argv[i], prog, HELP_USAGE);
			return 1;
		}
	}
	md = strcmp(format, "md") == 0;
	if (!md && strcmp(format, "text") != 0) {
		fprintf(err, "%s: --format '%s': one of text, md\n", prog, format);
		return 1;
	}
	if (strcmp(algo, "list") == 0) {
		for (const struct cc_ops *const *o = cc_all(); *o; o++)
			fprintf(out, "%s\n", (*o)->name);
		return 0;
	}
	if (strcmp(algo, "all") == 0) {
		for (const struct cc_ops *const *o = cc_all(); *o; o++) {
			if (o != cc_all())
				fputc('\n', out);
			if (md)
				fprintf(out, "### %s\n\n%s.\n\n", (*o)->name, (*o)->summary);
			if (print_one(*o, md, out, prog, err))
				return 1;
		}
		return 0;
	}
	if (!cc_find(algo)) {
		fprintf(err, "%s: --help-params '%s': not an algorithm; one of %s, all, list\n",
			prog, algo, names);
		return 1;
	}
	return print_one(cc_find(algo), md, out, prog, err);
}
