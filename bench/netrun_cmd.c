/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench run: a topology + workload run in virtual time (netrun.h), from its own
 * option table. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qpace/cc_help.h"
#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "bench.h"
#include "netrun.h"

struct netrun_cli {
	struct netrun_conf c;
	struct topogen_params gen;
	char gen_buf[512];
	const char *cdf_dir;
	uint64_t mtu, bins, lanes, threads;
	unsigned clock, icrc, huge;
	bool json, no_progress, help;
};

static const char *const clock_names[] = { "virtual", "real", NULL };
static const char *const icrc_names[] = { "on", "off", NULL };
static const char *const huge_names[] = { "off", "on", NULL };

static int opt_gen(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	struct netrun_cli *c = conf;

	(void)o;
	if (bench_topo_gen_parse(v, &c->gen, c->gen_buf, sizeof(c->gen_buf), err, len))
		return -EINVAL;
	c->c.gen = &c->gen;
	return 0;
}

#define AT(field) QP_OPT_AT(struct netrun_cli, field)
#define NUM(lo, hi) .min = (lo), .max = (hi)

static const struct qp_opt run_opts[] = {
	{ "topo", 0, QP_OPT_STR, "FILE", AT(c.topo_file),
	  .old_short = 't',
	  .help = "a topology file, as qpace-switch -c FILE loads it; a host on\n"
		  "every udp/vxlan/packet port, numbered in file order" },
	{ "gen", 'g', QP_OPT_FN, "KIND:K=V,..", .fn = opt_gen,
	  .help = "or generate one, with `topo KIND`'s options as K=V:\n"
		  "leaf-spine:leaves=8,spines=4,hosts-per-leaf=16,rate=100G" },
	{ "workload", 'w', QP_OPT_STR, "FILE", AT(c.workload_file),
	  .help = "flow groups, one a line (docs/workloads.md): poisson,\n"
		  "intersite, incast, long, staged" },
	{ "cdf-dir", 0, QP_OPT_STR, "DIR", AT(cdf_dir),
	  .help = "where cdf=NAME is looked up first (then sim/cdf beside\n"
		  "this program's source tree, then " QPACE_CDF_DIR ",\n"
		  "then ./sim/cdf)" },
	{ "cc", 0, QP_OPT_STR, "ALGO[+ia]", AT(c.algo),
	  .help = "the senders' congestion control; +ia adds IA credits", .def = "hpcc" },
	{ "cc-params", 0, QP_OPT_STR, "K=V,..", AT(c.cc_params),
	  .help = "the algorithm's parameters (qpace-bench --help-params ALGO)" },
	{ "pfc", 0, QP_OPT_STR, "SPEC", AT(c.pfc),
	  .help = "PFC on every port, as qpace-switch --pfc takes it\n"
		  "(e.g. xoff=32K,headroom=auto,class=0,lossless)" },
	{ "clock", 0, QP_OPT_CHOICE, "virtual", AT(clock), .choices = clock_names,
	  .help = "virtual only: a real-time switch process runs one star; a\n"
		  "fabric of many switches and hosts runs here", .def = "virtual" },
	{ "icrc", 0, QP_OPT_CHOICE, "on|off", AT(icrc), .choices = icrc_names,
	  .help = "off: no frame's ICRC computed or checked, hosts or switches\n"
		  "(it guards a real wire; the report says so; refused where a\n"
		  "link corrupts frames)", .def = "on" },
	{ "huge-pages", 0, QP_OPT_CHOICE, "on|off", AT(huge), .choices = huge_names,
	  .help = "on: malloc's heap on transparent huge pages (glibc's\n"
		  "hugetlb tunable; the process runs itself again with it):\n"
		  "less CPU on large fabrics for more memory, nothing on small\n"
		  "ones (docs/figures.md); the outputs the same to the byte",
	  .def = "off" },
	{ "lanes", 0, QP_OPT_UINT, "1|2", AT(lanes), NUM(1, 2),
	  .help = "2: the hosts in one lane, the switches in another, meeting\n"
		  "every lookahead (the smallest host-link delay), each lane on\n"
		  "a thread of its own, so a large run uses two cores.\n"
		  "Another order of the same events than one lane's, so its own\n"
		  "bytes, the same for any machine and --threads",
	  .def = "1" },
	{ "threads", 0, QP_OPT_UINT, "1|2", AT(threads), NUM(1, 2),
	  .help = "threads the lanes run on, at most one a lane (1 with\n"
		  "--lanes 2: one lane after the other, the same bytes)", .def = "2" },
	{ "until", 0, QP_OPT_TIME, "TIME", AT(c.until_ns), NUM(QP_NS_PER_US, 3600 * QP_NS_PER_S),
	  .help = "stop at TIME of simulated time, naming the flows that had\n"
		  "not finished (bytes=forever flows end here)", .def = "10s" },
	{ "sample", 0, QP_OPT_TIME, "TIME", AT(c.sample_ns), NUM(QP_NS_PER_US, QP_NS_PER_S),
	  .help = "rates.csv, queue.csv, switch.csv period", .def = "1ms" },
	{ "seed", 0, QP_OPT_UINT, "N", AT(c.seed), NUM(0, UINT64_MAX),
	  .help = "flows, PSNs, agents, switch RED", .def = "1" },
	{ "mtu", 0, QP_OPT_UINT, "BYTES", AT(mtu), NUM(256, 4096),
	  .help = "RoCE path MTU", .def = "1024" },
	{ "window", 0, QP_OPT_UINT, "PKTS", AT(c.window_pkts), NUM(1, 4096),
	  .help = "unacknowledged packets per QP (the NIC's window)", .def = "128" },
	{ "bins", 0, QP_OPT_UINT, "PCT", AT(bins), NUM(1, 100),
	  .help = "FCT bins of PCT% of the flows each (HPCC's: 5)", .def = "5" },
	{ "out", 'o', QP_OPT_STR, "DIR", AT(c.out_dir),
	  .help = "write flows.csv, fct_bins.csv, links.csv, pfc.csv, rates.csv,\n"
		  "queue.csv, switch.csv, switch.json, report.json, plots" },
	{ "no-plots", 0, QP_OPT_FLAG, NULL, AT(c.no_plots), .help = "CSVs only, no gnuplot" },
	{ "no-progress", 0, QP_OPT_FLAG, NULL, AT(no_progress),
	  .help = "no progress line (otherwise on stderr once a run passes 2 s)" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "the report as JSON" },
	{ "verbose", 'v', QP_OPT_FLAG, NULL, AT(c.verbose), .help = "the hosts' log lines" },
	{ "help", 'h', QP_OPT_HELP, NULL, AT(help), .help = "this text" },
};
#define NOPTS (sizeof(run_opts) / sizeof(run_opts[0]))
_Static_assert(NOPTS <= QP_OPT_MAX, "option table fits the seen mask");

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s run (--topo FILE | --gen KIND:K=V,..) --workload FILE [options]\n"
		"A topology and a workload in virtual time: qpace-switch's fabric and the soft\n"
		"RoCEv2 hosts with their agents on a discrete-event clock, every flow a QP pair\n"
		"made at its start. Reports FCT slowdown by flow size (HPCC's definition: FCT /\n"
		"(base RTT + wire bytes / bottleneck), at least 1), link utilisation, PFC pauses,\n"
		"drops, the engine's speed; the same inputs and --seed give the same bytes.\n\n",
		prog);
	qp_opt_usage(f, run_opts, NOPTS, 0);
	fprintf(f, "\nExample: a 128-host leaf-spine at 100 Gb/s, WebSearch at 0.5 load for 50 ms:\n"
		"  printf 'poisson cdf=websearch load=0.5 duration=50ms\\n' > ws.wl\n"
		"  %s run --gen leaf-spine:leaves=8,spines=4,hosts-per-leaf=16,rate=100G \\\n"
		"      --workload ws.wl --cc hpcc --lanes 2 -o results/ws\n"
		"(--lanes 2: the hosts on one core, the switches on the other.)\n"
		"The generated topology is written to results/ws/topology.topo: qpace-switch -c\n"
		"loads it as it is (real time runs it with hosts of your own).\n\n", prog);
	cc_help_algorithms(f, prog);
}

const struct qp_opt *bench_netrun_opts(size_t *n)
{
	*n = NOPTS;
	return run_opts;
}

/* sim/cdf of the source tree this program was built in (build/bin/PROG -> ../../sim/cdf),
 * then the installed data, then ./sim/cdf. */
static void default_cdf_dirs(struct netrun_cli *cl, char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 32);
	struct stat st;

	if (cl->cdf_dir)
		cl->c.cdf_dirs[cl->c.ncdf_dirs++] = cl->cdf_dir;
	if (n > 0) {
		buf[n] = '\0';
		char *slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash, "/../../sim/cdf");
			if (stat(buf, &st) == 0)
				cl->c.cdf_dirs[cl->c.ncdf_dirs++] = buf;
		}
	}
	cl->c.cdf_dirs[cl->c.ncdf_dirs++] = QPACE_CDF_DIR;
	cl->c.cdf_dirs[cl->c.ncdf_dirs++] = "sim/cdf";
}

int bench_netrun(const char *prog, int argc, char **argv)
{
	static struct netrun_cli cl;   /* gen_buf and the paths outlive the parse */
	char where[64], err[1024], exe[PATH_MAX];
	struct netrun_result r;
	uint64_t seen;
	int first;

	snprintf(where, sizeof(where), "%s run", prog);
	memset(&cl, 0, sizeof(cl));
	netrun_conf_defaults(&cl.c);
	if (qp_opt_defaults(run_opts, NOPTS, 0, &cl, err, sizeof(err)))
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	const struct qp_opt_spec spec = { run_opts, NOPTS, 0, false };
	first = qp_opt_parse(&spec, argc, argv, &cl, &seen, err, sizeof(err));
	if (first < 0)
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	if (cl.help) {
		usage(stdout, prog);
		return QP_EXIT_OK;
	}
	if (first < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[first]);
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	}
	if (cl.clock != 0)
		return qp_opt_fail(where, "--clock 'real': runs on topologies are virtual time "
				   "only (a real-time switch process with emulated hosts is one "
				   "star: qpace-bench incast); accepted: virtual"), QP_EXIT_USAGE;
	if (!cl.c.topo_file == !cl.c.gen)
		return qp_opt_fail(where, "give one topology: --topo FILE or --gen KIND:K=V,.."),
		       QP_EXIT_USAGE;
	if (!cl.c.workload_file)
		return qp_opt_fail(where, "--workload FILE is needed (docs/workloads.md)"),
		       QP_EXIT_USAGE;
	if (cl.threads > cl.lanes && qp_opt_seen(run_opts, NOPTS, seen, "threads")) {
		snprintf(err, sizeof(err), "--threads '%llu': at most one a lane (--lanes %llu)",
			 (unsigned long long)cl.threads, (unsigned long long)cl.lanes);
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	}
	if (cl.huge) {
		const char *why = bench_thp_reexec(prog, argc, argv);   /* returns when not done */
		if (why)
			fprintf(stderr, "%s: --huge-pages on: not had (%s); the run goes on "
				"without them\n", where, why);
	}
	cl.c.mtu_bytes = (uint32_t)cl.mtu;
	cl.c.bin_step_pct = (unsigned)cl.bins;
	cl.c.progress = !cl.no_progress;
	cl.c.icrc_skip = cl.icrc == 1;
	cl.c.lanes = (unsigned)cl.lanes;
	/* the default (2) is one a lane: one with --lanes 1 */
	cl.c.threads = (unsigned)(cl.threads < cl.lanes ? cl.threads : cl.lanes);
	default_cdf_dirs(&cl, exe, sizeof(exe));
	if (cl.c.out_dir && mkdir(cl.c.out_dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "%s: -o '%s': %s\n", where, cl.c.out_dir, strerror(errno));
		return 1;
	}
	if (netrun_run(&cl.c, &r, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", where, err);
		return 1;
	}
	netrun_print(stdout, &r, cl.json);
	/* flows that could finish but did not: the run did not do what it was asked */
	size_t stuck = 0;
	for (size_t k = 0; k < r.nflows; k++)
		stuck += !r.flow[k].done && r.flow[k].bytes != WL_BYTES_FOREVER;
	if (!r.all_finished)
		fprintf(stderr, "%s: %s\n", where, r.end_reason);
	if (r.lost)
		fprintf(stderr, "%s: %zu flow%s lost (a QP failed, or a host had all %u of its "
			"agent's QPs in use)\n", where, r.lost, r.lost == 1 ? "" : "s", HOST_MAX_QPS);
	netrun_result_free(&r);
	return stuck ? 1 : 0;
}
