/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench's command line: the option table (one row per option and subcommand set),
 * defaults, cross-option rules, and the usage text generated from the table. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "qpace/cc_help.h"
#include "qpace/errmsg.h"
#include "qpace/keyfile.h"
#include "qpace/units.h"
#include "bench.h"
#include "qpace/opt.h"

static const char *const backend_names[] = { "soft", "ibv", NULL };
static const char *const credits_names[] = { "off", "ia", NULL };
static const char *const clock_names[] = { "real", "virtual", NULL };
static const char *const int_names[] = { "echo", "direct", NULL };
static const char *const rx_thread_names[] = { "on", "off", NULL };
static const char *const transport_names[] = { "udp", "shm", "auto", NULL };

/* --key FILE: read at once, so a bad file stops the command before anything starts. */
static int opt_key(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	struct bench_conf *c = conf;

	(void)o;
	c->key_file = v;
	c->have_key = true;
	return qp_keyfile_read(v, c->key, NULL, err, len);
}

#define F(field) QP_OPT_AT(struct bench_conf, field)
#define NUM(lo, hi) .min = (lo), .max = (hi)

static const struct qp_opt bench_opts[] = {
	/* perftest's, same letters and names */
	{ "ib-dev", 'd', QP_OPT_STR, "DEV", F(ib_dev), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "ibv: RDMA device (default: the first found)" },
	{ "ib-port", 'i', QP_OPT_UINT, "PORT", F(ib_port), NUM(1, 254), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "ibv: device port (default 1)" },
	{ "size", 's', QP_OPT_BYTES, "SIZE", F(size_bytes), NUM(1, BENCH_PERF_MAX_SIZE),
	  .cmds = CMD_PERF, .help = "message size (default 65536 for BW, 2 for latency)" },
	{ "size", 's', QP_OPT_BYTES, "SIZE", F(size_bytes), NUM(1, 1ULL << 30),
	  .cmds = CMD_INCAST | CMD_COMPARE, .help = "bytes each sender sends per round (default 256K)" },
	{ "iters", 'n', QP_OPT_UINT, "N", F(iters), NUM(BENCH_PERF_MIN_ITERS, 100000000),
	  .cmds = CMD_PERF, .help = "iterations (default 5000 write_bw, 1000 otherwise)" },
	{ "duration", 'D', QP_OPT_TIME, "SECS", F(duration_ns), NUM(QP_NS_PER_S, 86400 * QP_NS_PER_S),
	  .cmds = CMD_PERF, .unit_ns = QP_NS_PER_S,
	  .help = "run for SECS seconds instead of -n (a bare number is seconds)" },
	{ "spin", 0, QP_OPT_TIME, "TIME", F(spin_ns), NUM(0, 10 * QP_NS_PER_S),
	  .cmds = CMD_PERF | CMD_INCAST,
	  .help = "soft backend: poll without blocking while the next due event (a gate\n"
		  "opening, a timer) is within TIME; block otherwise (default 20us);\n"
		  "incast: the receiver's thread (--rx-thread on)" },
	{ "qp", 'q', QP_OPT_UINT, "N", F(qps), NUM(1, 64), .cmds = CMD_BW,
	  .help = "QPs, same on both sides (default 1)" },
	{ "port", 'p', QP_OPT_UINT, "PORT", F(tcp_port), NUM(1, 65535), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "TCP port of the out-of-band exchange (default 18515)" },
	{ "gid-index", 'x', QP_OPT_UINT, "N", F(gid_index), NUM(0, 255), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "ibv: GID index (default: the first RoCEv2 IPv4 GID)" },
	{ "CPU-freq", 'F', QP_OPT_FLAG, NULL, F(cpu_freq), .cmds = CMD_PERF,
	  .help = "accepted for perftest scripts (no cpufreq warning here)" },
	{ "report_gbits", 0, QP_OPT_FLAG, NULL, F(report_gbits), .cmds = CMD_PERF,
	  .help = "BW in Gb/s (10^9 bits) instead of MiB/s" },
	{ "run_infinitely", 0, QP_OPT_FLAG, NULL, F(run_infinitely), .cmds = CMD_WRITE_BW,
	  .help = "print a result line every -D seconds (default 5) until interrupted" },
	{ "out_json", 0, QP_OPT_FLAG, NULL, F(out_json), .cmds = CMD_PERF,
	  .help = "also write the report as JSON (perftest's format) to --out_json_file" },
	{ "out_json_file", 0, QP_OPT_STR, "FILE", F(out_json_file), .cmds = CMD_PERF,
	  .help = "JSON report file (default perftest_out.json)" },
	/* qpace's */
	{ "backend", 0, QP_OPT_CHOICE, "NAME", F(backend), .choices = backend_names,
	  .cmds = CMD_PERF | CMD_INCAST,
	  .help = "soft: userspace RoCEv2 hosts on qpace-switch (default);\n"
		  "ibv: rdma-core (Soft-RoCE or a NIC)" },
	{ "cc", 0, QP_OPT_STR, "ALGO", F(cc), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "congestion control: one of the algorithms below\n"
		  "(default hpcc for incast, none otherwise)" },
	{ "credits", 0, QP_OPT_CHOICE, "MODE", F(credits), .choices = credits_names,
	  .cmds = CMD_PERF | CMD_INCAST, .help = "receiver credit pacing: ia (IA-TCP) or off (default)" },
	{ "attach", 0, QP_OPT_STR, "HOST:P", F(attach), .cmds = CMD_PERF | CMD_INCAST,
	  .help = "soft: the switch port (send to P, receive on P+1)" },
	{ "ip", 0, QP_OPT_STR, "A.B.C.D", F(ip), .cmds = CMD_PERF | CMD_INCAST, .help = "soft: this host's IPv4 address" },
	/* incast and the runs built on it */
	{ "senders", 'N', QP_OPT_UINT, "N", F(senders), NUM(1, BENCH_MAX_SENDERS_VT),
	  .cmds = CMD_INCAST | CMD_COMPARE,
	  .help = "senders (default 16; 1..63 in real time, 1..127 in virtual time)" },
	{ "clock", 0, QP_OPT_CHOICE, "real|virtual", F(clock), .choices = clock_names,
	  .cmds = CMD_RUNS,
	  .help = "real: hosts and a switch process on loopback, the machine's clock\n"
		  "(default); virtual: the same switch, hosts, RC and agents in one\n"
		  "process on a discrete-event clock: deterministic, load-independent,\n"
		  "any rate (--timeout is then simulated time)" },
	{ "rx-thread", 0, QP_OPT_CHOICE, "on|off", F(rx_thread), .choices = rx_thread_names,
	  .cmds = CMD_RUNS,
	  .help = "real time: the receiving host in a thread of its own (on), or every\n"
		  "host in one loop (off, the default: on 2 cores the switch and the\n"
		  "one loop already keep both busy, and a third thread carried less of\n"
		  "the payload rate at 16 -> 1, 1G, idle or loaded: docs/performance.md);\n"
		  "virtual time: always one thread" },
	{ "transport", 0, QP_OPT_CHOICE, "udp|shm|auto", F(transport),
	  .choices = transport_names, .cmds = CMD_RUNS | CMD_PERF,
	  .help = "real time, soft hosts: udp = each frame a datagram to the switch port\n"
		  "(the incast's default); shm = through its shared-memory rings (the\n"
		  "switch this starts gets --shm; write_bw: give the port's region with\n"
		  "--shm); auto (write_bw, send_bw, write_lat; their default) = the rings a\n"
		  "qpace-switch --star port offers on this machine, else udp. The banner's\n"
		  "Backend line and the JSON's Frames say which" },
	{ "shm", 0, QP_OPT_STR, "PATH", F(shm_path), .cmds = CMD_PERF,
	  .help = "with --transport shm: the switch port's region (qpace-switch --star N\n"
		  "--shm PREFIX: port i is PREFIX.pI)" },
	{ "int", 0, QP_OPT_CHOICE, "echo|direct", F(int_mode), .choices = int_names,
	  .cmds = CMD_RUNS,
	  .help = "how INT reaches an INT algorithm's senders: echo = to the receiver,\n"
		  "whose agent returns it (HPCC's INT-on-ACK loop; default), direct = from\n"
		  "the switch straight to the sender (a shorter loop)" },
	{ "qp-timeout", 'u', QP_OPT_UINT, "EXP", F(qp_timeout), NUM(1, 31), .cmds = CMD_RUNS,
	  .help = "the QPs' local ACK timeout, 4.096us x 2^EXP (perftest's -u; default 14,\n"
		  "67 ms; --backend ibv: at least twice the buffer's drain): a flow whose\n"
		  "resent tail is dropped again waits this out (one NAK per gap); at 1G a\n"
		  "full 512K buffer drains in 4.2 ms, so -u 11 (8.4 ms) still outlasts the\n"
		  "longest RTT" },
	{ "rounds", 'R', QP_OPT_UINT, "ROUNDS", F(rounds), NUM(1, BENCH_MAX_ROUNDS), .cmds = CMD_RUNS,
	  .help = "queries: each round starts when the last one's flows finished\n(default 5)" },
	{ "switch", 0, QP_OPT_STR, "HOST:P", F(switch_addr), .cmds = CMD_INCAST,
	  .help = "a running `qpace-switch --star` with base port P (default:\nstart one)" },
	{ "rate", 0, QP_OPT_RATE, "RATE", F(link_bps), NUM(QP_MBPS, 400 * QP_GBPS),
	  .cmds = CMD_RUNS | CMD_PERF,
	  .help = "write_bw, send_bw, write_lat: the line rate of this host's QPs, their\n"
		  "agent's ceiling, as payload at the path MTU (soft: default 1G; ibv:\n"
		  "the library's, 10G); incast: the link rate of the switch this starts\n"
		  "(default 250M: the 17 emulated hosts share one core, which keeps up with 250 Mb/s of 1 KB frames\n"
		  "and their ACKs, INT and credits; at 1G it becomes the bottleneck);\n"
		  "networked (--backend ibv): the line rate the QPs register with\n"
		  "qpaced, as payload at --mtu (default: the library's, 10G); at most\n"
		  "10G in real time, 400G in virtual time" },
	{ "buffer", 0, QP_OPT_BYTES, "BYTES", F(buffer_bytes), NUM(4096, 1ULL << 30), .cmds = CMD_RUNS,
	  .help = "egress buffer per port of that switch (default 512K: N x BDP\n"
		  "fits for N = 16, N x window does not); --backend ibv: the\n"
		  "bottleneck's, the QPs' ACK timeout outlasts twice its drain time" },
	{ "delay", 0, QP_OPT_TIME, "TIME", F(delay_ns), NUM(0, 10 * QP_NS_PER_MS), .cmds = CMD_RUNS,
	  .help = "propagation delay of each link (default 100us: a base RTT of\n"
		  "~0.5 ms, so the BDP is ~15 packets, as many as the default senders)" },
	{ "mtu", 0, QP_OPT_UINT, "BYTES", F(mtu_bytes), NUM(256, 4096), .cmds = CMD_RUNS,
	  .help = "RoCE path MTU: 256, 512, 1024 (default), 2048, 4096" },
	{ "fallback-safe", 0, QP_OPT_UINT, "PERMILLE", F(fallback_safe_permille), NUM(1, 1000),
	  .cmds = CMD_PERF | CMD_INCAST,
	  .help = "ibv: with no agent (or after one is lost and its hold ends) each QP\n"
		  "paces at PERMILLE/1000 of its line rate (default: the agent's policy,\n"
		  "else 100); 1000 makes a no-agent run the uncontrolled baseline" },
	{ "window", 0, QP_OPT_UINT, "PKTS", F(window_pkts), NUM(1, 4096),
	  .cmds = CMD_RUNS | CMD_PERF,
	  .help = "unacknowledged packets per QP, the NIC's window (default 128,\n"
		  "rxe's; a window algorithm's own cap, e.g. HPCC's, comes on top;\n"
		  "write_bw and friends: the soft backend's)" },
	{ "base-port", 0, QP_OPT_UINT, "P", F(base_port), NUM(1024, 65535 - 2 * 64), .cmds = CMD_RUNS,
	  .help = "UDP base port of the switch this starts (default 17000)" },
	{ "timeout", 0, QP_OPT_TIME, "TIME", F(round_timeout_ns), NUM(QP_NS_PER_MS, 600 * QP_NS_PER_S),
	  .cmds = CMD_RUNS, .help = "give up on a round after TIME (default 20s)" },
	{ "seed", 0, QP_OPT_UINT, "N", F(seed), NUM(0, UINT64_MAX), .cmds = CMD_RUNS,
	  .help = "seed of credit phases and switch RED (default 1)" },
	{ "json", 'j', QP_OPT_FLAG, NULL, F(json), .cmds = CMD_INCAST,
	  .help = "print one JSON object instead of the text report" },
	{ "out", 'o', QP_OPT_STR, "DIR", F(out_dir), .cmds = CMD_RUNS,
	  .help = "write CSVs (flows, rates, queue) and PNG plots into DIR\n"
		  "(compare: results/demo, sweep: results/sweep)" },
	{ "algos", 'a', QP_OPT_STR, "LIST", F(algos), .cmds = CMD_COMPARE | CMD_SWEEP,
	  .help = "ALGO[+ia],... (default every algorithm below, then none+ia,\nhpcc+ia)" },
	{ "senders-list", 0, QP_OPT_STR, "LIST", F(senders_list), .cmds = CMD_SWEEP,
	  .help = "sender counts (default 1,2,4,8,16,32,63)" },
	{ "sizes", 0, QP_OPT_STR, "LIST", F(sizes), .cmds = CMD_SWEEP,
	  .help = "bytes per sender (default 64K,128K,256K)" },
	{ "pfc", 0, QP_OPT_STR, "SPEC", F(pfc), .cmds = CMD_RUNS,
	  .help = "PFC on the switch this run builds (qpace-switch --pfc: xoff=BYTES[,xon=]\n"
		  "[,headroom=BYTES|auto][,class=N][,lossless]); its hosts obey PAUSE" },
	{ "impair", 0, QP_OPT_STR, "SPEC", F(impair), .cmds = CMD_RUNS,
	  .help = "impair every link out of the switch this run builds, in either clock\n"
		  "(qpace-switch --impair: loss=P,ge=P:R,reorder=P,dup=P,corrupt=P,\n"
		  "jitter=TIME,seed=N; docs/switch.md#impairments), e.g. loss=1%,seed=3" },
	{ "pcap", 0, QP_OPT_STR, "FILE", F(pcap), .cmds = CMD_INCAST,
	  .help = "every frame the switch this run builds sends, into FILE (pcap, as\n"
		  "qpace-switch --pcap), in either clock: stamped with the wall clock in\n"
		  "real time, with simulated time from 0 in virtual time" },
	{ "key", 0, QP_OPT_FN, "FILE", .fn = opt_key, .cmds = CMD_ALL,
	  .help = "shared key (as qpaced --key): the soft hosts' agents sign what they send\n"
		  "and take only signed feedback; a switch this starts signs too" },
	{ "switch-bin", 0, QP_OPT_STR, "PATH", F(switch_bin), .cmds = CMD_RUNS,
	  .help = "qpace-switch to start (default: beside qpace-bench, then PATH)" },
	{ "monitor", 0, QP_OPT_STR, "PATH", F(monitor), .cmds = CMD_INCAST,
	  .help = "serve qpacectl on this unix socket (default: the agent's)" },
	{ "no-plots", 0, QP_OPT_FLAG, NULL, F(no_plots), .cmds = CMD_RUNS,
	  .help = "CSVs only, no gnuplot" },
	{ "verbose", 'v', QP_OPT_FLAG, NULL, F(verbose), .cmds = CMD_ALL, .help = "progress on stderr" },
	{ "help", 'h', QP_OPT_HELP, NULL, F(help), .cmds = CMD_ALL, .help = "this text" },
};
#define NOPTS (sizeof(bench_opts) / sizeof(bench_opts[0]))
_Static_assert(NOPTS <= QP_OPT_MAX, "option table fits the seen mask");

struct bench_cmd_row {
	const char *name;
	unsigned cmd;
	const char *args;
	const char *summary;
};

static const struct bench_cmd_row bench_cmds[] = {
	{ "write_bw", CMD_WRITE_BW, "[options] [server]", "RDMA WRITE bandwidth (ib_write_bw)" },
	{ "send_bw", CMD_SEND_BW, "[options] [server]", "SEND bandwidth (ib_send_bw)" },
	{ "write_lat", CMD_WRITE_LAT, "[options] [server]", "RDMA WRITE latency (ib_write_lat)" },
	{ "incast", CMD_INCAST, "[options] [server]",
	  "N senders to one receiver through a switch (all here, or one per process\n"
	  "with --backend ibv or --attach: the receiver has no address, a sender names it)" },
	{ "compare", CMD_COMPARE, "[options]", "the same incast once per algorithm (make demo)" },
	{ "sweep", CMD_SWEEP, "[options]", "incasts over sender counts and sizes, CSV and plots" },
	{ "topo", CMD_TOPO, "KIND [options] [-o FILE]",
	  "a topology file for qpace-switch -c: star, dumbbell, leaf-spine,\n"
	  "fat-tree, two-site" },
	{ "run", CMD_NETRUN, "(--topo FILE | --gen KIND:K=V,..) --workload FILE [options]",
	  "a topology + workload in virtual time: FCT slowdown by size, links, PFC" },
	{ "reproduce", CMD_REPRO, "NAME [--quick] [-o DIR]",
	  "a seed's source experiment in virtual time, and published | qpace |\n"
	  "agrees? (ia-tcp, ffdtcp, hpcc, acc, idcc; docs/reproductions.md)" },
};
#define NCMDS (sizeof(bench_cmds) / sizeof(bench_cmds[0]))

const char *bench_cmd_name(unsigned cmd)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (bench_cmds[i].cmd == cmd)
			return bench_cmds[i].name;
	return "?";
}

unsigned bench_cmd_find(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (strcmp(bench_cmds[i].name, name) == 0)
			return bench_cmds[i].cmd;
	return 0;
}

#define HEAD "usage: qpace-bench COMMAND [options] [server]\n"                               \
	"       qpace-bench --help | --version | --help-params ALGO|all|list\n\n"

#define HEAD_TEXT                                                                           \
	"perftest's rule holds: give the server and the client the same options;\n"          \
	"the client names the server last. `qpace-bench COMMAND --help` lists the options.\n" \
	"Example, 16 senders to 1 through a 250 Mb/s switch port with HPCC and IA credits:\n" \
	"  qpace-bench incast -N 16 -s 256K --cc hpcc --credits ia\n"

static const struct qp_opt global_opts[] = {
	QP_OPT_STD_ROWS,
	/* read before the table (cc_help_params_main); a row for --help and the page */
	{ "help-params", 0, QP_OPT_HELP, "ALGO|all|list [--format text|md]",
	  .help = "an algorithm's parameters (for --cc-params), every one's, or the names" },
};
#define NGLOBAL (sizeof(global_opts) / sizeof(global_opts[0]))

const struct qp_opt *bench_global_opts(size_t *n)
{
	*n = NGLOBAL;
	return global_opts;
}

void bench_man(FILE *out, const char *prog)
{
	struct qp_opt_cmd cmds[NCMDS + 16];
	size_t n = 0;

	for (size_t i = 0; i < NCMDS; i++) {
		const struct bench_cmd_row *r = &bench_cmds[i];
		struct qp_opt_cmd *c = &cmds[n++];

		*c = (struct qp_opt_cmd){ .name = r->name, .args = r->args, .summary = r->summary,
					  .t = bench_opts, .n = NOPTS, .bit = r->cmd };
		if (r->cmd == CMD_TOPO) {    /* its options: under each KIND */
			c->t = NULL;
			n += bench_topo_man_cmds(&cmds[n], sizeof(cmds) / sizeof(cmds[0]) - n);
		}
		if (r->cmd == CMD_NETRUN)
			c->t = bench_netrun_opts(&c->n), c->bit = 0;
		if (r->cmd == CMD_REPRO)
			c->t = bench_repro_opts(&c->n), c->bit = 0;
	}
	const struct qp_opt_prog p = {
		.name = prog, .purpose = "RDMA benchmarks and incasts through qpace's switch",
		.head = HEAD "Benchmarks in perftest's words (write_bw, send_bw, write_lat), incasts\n"
			"through qpace-switch in real or virtual time, topologies, workload runs\n"
			"and the source papers' experiments.\n\n" HEAD_TEXT,
		.t = global_opts, .n = NGLOBAL, .cmds = cmds, .ncmds = n, .more = cc_help_algorithms,
		.see_also = "qpace-switch(1), qpaced(1), qpacectl(1), ib_write_bw(1)",
	};
	qp_opt_man(out, &p);
}

void bench_usage(FILE *out, const char *prog)
{
	fputs(HEAD, out);
	for (size_t i = 0; i < NCMDS; i++) {
		fprintf(out, "  %-10s ", bench_cmds[i].name);
		for (const char *h = bench_cmds[i].summary; *h; h++) {
			if (*h == '\n')
				fprintf(out, "\n%13s", "");   /* continuation under the summary */
			else
				fputc(*h, out);
		}
		fputc('\n', out);
	}
	fputs("\noptions:\n", out);
	qp_opt_usage(out, global_opts, NGLOBAL, 0);
	fputs("\n" HEAD_TEXT, out);
	cc_help_algorithms(out, prog);
}

void bench_cmd_usage(FILE *out, const char *prog, unsigned cmd)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (bench_cmds[i].cmd == cmd)
			fprintf(out, "usage: %s %s %s\n%s.\n\n", prog, bench_cmds[i].name,
				bench_cmds[i].args, bench_cmds[i].summary);
	qp_opt_usage(out, bench_opts, NOPTS, cmd);
	cc_help_algorithms(out, prog);
}

/* The default --algos: every registered algorithm, then IA credits under none and hpcc. */
static const char *default_algos(void)
{
	static char algos[256];

	if (!algos[0] && cc_names(algos, sizeof(algos) - sizeof(",none+ia,hpcc+ia"), ",") == 0)
		strcat(algos, ",none+ia,hpcc+ia");
	return algos;
}

void bench_conf_defaults(struct bench_conf *c, unsigned cmd)
{
	*c = (struct bench_conf){
		.cmd = cmd,
		.ib_port = 1,
		.size_bytes = cmd & CMD_BW ? 65536 : cmd == CMD_WRITE_LAT ? 2 : 256 * 1024,
		.iters = cmd == CMD_WRITE_BW ? 5000 : 1000,
		.qps = 1,
		.tcp_port = 18515, .spin_ns = BENCH_DEF_SPIN_NS,
		.rx_thread = BENCH_RX_THREAD_OFF,
		.out_json_file = "perftest_out.json",
		.cc = cmd & CMD_RUNS ? "hpcc" : "none",
		.transport = cmd & CMD_PERF ? BENCH_TRANSPORT_AUTO : BENCH_TRANSPORT_UDP,
		.senders = 16,
		.rounds = 5,
		.link_bps = cmd & CMD_PERF ? QP_GBPS : 250 * QP_MBPS,
		.buffer_bytes = 512 * 1024,
		.delay_ns = 100 * QP_NS_PER_US,
		.mtu_bytes = 1024,
		.window_pkts = 128,
		.base_port = 17000,
		.round_timeout_ns = 20 * QP_NS_PER_S,
		.seed = 1,
		.out_dir = cmd == CMD_COMPARE ? "results/demo" : cmd == CMD_SWEEP ? "results/sweep" : NULL,
		.algos = default_algos(),
		.senders_list = "1,2,4,8,16,32,63",
		.sizes = "64K,128K,256K",
	};
}

/* Rules between options (perftest's, and the backend's needs); each names what clashes. */
static int bench_conf_check(const struct bench_conf *c, char *err, size_t errlen)
{
	bool gave_n = qp_opt_seen(bench_opts, NOPTS, c->seen, "iters");

	if (c->cc && !cc_find(c->cc)) {
		char names[256];
		cc_names(names, sizeof(names), ", ");
		return qp_errmsg(-EINVAL, err, errlen, "--cc '%s': not one of %s", c->cc, names);
	}
	if (c->mtu_bytes & (c->mtu_bytes - 1))
		return qp_errmsg(-EINVAL, err, errlen,
				 "--mtu '%llu': not one of 256, 512, 1024, 2048, 4096",
				 (unsigned long long)c->mtu_bytes);
	if ((c->cmd & CMD_PERF) && gave_n && c->duration_ns)
		return qp_errmsg(-EINVAL, err, errlen,
				 "-n/--iters and -D/--duration: give one of them, not both");
	if ((c->cmd & CMD_PERF) && c->backend == BACKEND_SOFT && (!c->attach || !c->ip))
		return qp_errmsg(-EINVAL, err, errlen,
				 "--backend soft needs --attach HOST:P and --ip A.B.C.D (the "
				 "switch port and this host's address)");
	if ((c->cmd & (CMD_PERF | CMD_INCAST)) && c->backend == BACKEND_IBV && (c->attach || c->ip))
		return qp_errmsg(-EINVAL, err, errlen,
				 "--attach/--ip belong to --backend soft");
	bool networked = c->cmd == CMD_INCAST && (c->backend == BACKEND_IBV || c->attach);
	if (c->clock == BENCH_CLOCK_VIRTUAL && networked)
		return qp_errmsg(-EINVAL, err, errlen,
				 "--clock virtual runs every host in this process: no --backend "
				 "ibv, --attach or server address");
	if (c->clock == BENCH_CLOCK_VIRTUAL && c->switch_addr)
		return qp_errmsg(-EINVAL, err, errlen,
				 "--clock virtual builds its own switch: no --switch");
	if (c->clock == BENCH_CLOCK_REAL && c->senders > BENCH_MAX_SENDERS)
		return qp_errmsg(-EINVAL, err, errlen,
				 "-N/--senders '%llu': not a whole number in 1..%u in real time "
				 "(one switch process of 64 ports; --clock virtual takes 1..%u)",
				 (unsigned long long)c->senders, BENCH_MAX_SENDERS,
				 BENCH_MAX_SENDERS_VT);
	if (c->clock == BENCH_CLOCK_REAL && c->link_bps > BENCH_MAX_RATE_REAL && !networked) {
		char r[32];
		return qp_errmsg(-EINVAL, err, errlen,
				 "--rate '%s': above 10G in real time (one core emulates every "
				 "host; --clock virtual takes up to 400G)",
				 qp_fmt_rate(c->link_bps, r, sizeof(r)));
	}
	if ((c->cmd & CMD_RUNS) && c->server && !networked)
		return qp_errmsg(-EINVAL, err, errlen,
				 "%s takes no server address ('%s'): the embedded incast runs "
				 "every host here (a networked one: --backend ibv, or --attach "
				 "and --ip)", bench_cmd_name(c->cmd), c->server);
	if (c->transport == BENCH_TRANSPORT_AUTO && !(c->cmd & CMD_PERF))
		return qp_errmsg(-EINVAL, err, errlen, "--transport auto is for write_bw, send_bw "
				 "and write_lat (a host attaching to a switch it did not start); "
				 "%s starts its own: udp or shm", bench_cmd_name(c->cmd));
	if (c->transport == BENCH_TRANSPORT_SHM &&
	    (c->backend != BACKEND_SOFT || c->clock == BENCH_CLOCK_VIRTUAL))
		return qp_errmsg(-EINVAL, err, errlen, "--transport shm is for soft hosts in real "
				 "time (--backend soft, --clock real)");
	if (c->transport == BENCH_TRANSPORT_SHM && (c->switch_addr || (networked && c->attach)))
		return qp_errmsg(-EINVAL, err, errlen, "--transport shm: the incast's own switch "
				 "only (no --switch or --attach: the region's path is its to make)");
	if ((c->cmd & CMD_PERF) && (c->transport == BENCH_TRANSPORT_SHM) != !!c->shm_path)
		return qp_errmsg(-EINVAL, err, errlen, "--transport shm and --shm PATH go together "
				 "(the switch port's region: qpace-switch --shm PREFIX makes PREFIX.pI)");
	if (networked && c->backend == BACKEND_SOFT && !c->ip)
		return qp_errmsg(-EINVAL, err, errlen,
				 "--attach needs --ip A.B.C.D (this host's address)");
	return 0;
}

int bench_conf_parse(struct bench_conf *c, unsigned cmd, int argc, char **argv, char *err,
		     size_t errlen)
{
	const struct qp_opt_spec spec = { bench_opts, NOPTS, cmd, false };
	int first = qp_opt_parse(&spec, argc, argv, c, &c->seen, err, errlen);

	if (first < 0)
		return first;
	if (c->help)
		return 0;
	if (first < argc)
		c->server = argv[first++];
	if (first < argc)
		return qp_errmsg(-EINVAL, err, errlen,
				 "unexpected argument '%s' after the server address '%s'",
				 argv[first], c->server);
	c->gid_given = qp_opt_seen(bench_opts, NOPTS, c->seen, "gid-index");
	c->cc_given = qp_opt_seen(bench_opts, NOPTS, c->seen, "cc");
	c->rate_given = qp_opt_seen(bench_opts, NOPTS, c->seen, "rate");
	if (c->run_infinitely && !qp_opt_seen(bench_opts, NOPTS, c->seen, "duration"))
		c->duration_ns = 5 * QP_NS_PER_S;
	return bench_conf_check(c, err, errlen);
}
