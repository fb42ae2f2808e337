/* qpace-switch's command line: one table drives getopt, the checks and --help. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/units.h"
#include "conf.h"

struct cli_state {
	int star;
	unsigned base_port;
	const char *config;
	uint32_t switch_id;
};

typedef int (*opt_fn)(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		      size_t len);

struct opt {
	const char *name;
	int short_name;
	const char *arg;    /* metavar, NULL for a flag */
	opt_fn fn;
	const char *help;
};

#define ERR(...) (snprintf(err, len, __VA_ARGS__), -1)

static int parse_u64_range(const char *flag, const char *arg, uint64_t lo, uint64_t hi,
			   uint64_t *out, char *err, size_t len)
{
	if (qp_parse_u64(arg, out) || *out < lo || *out > hi)
		return ERR("--%s '%s': not a whole number in %" PRIu64 "..%" PRIu64, flag, arg,
			   lo, hi);
	return 0;
}

static int opt_star(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		    size_t len)
{
	uint64_t v;
	(void)c;
	if (parse_u64_range("star", arg, 1, SW_MAX_PORTS, &v, err, len))
		return -1;
	s->star = (int)v;
	return 0;
}

static int opt_base_port(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
			 size_t len)
{
	uint64_t v;
	(void)c;
	if (parse_u64_range("base-port", arg, 1, 65535 - 2 * SW_MAX_PORTS, &v, err, len))
		return -1;
	s->base_port = (unsigned)v;
	return 0;
}

static int opt_config(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		      size_t len)
{
	(void)c, (void)err, (void)len;
	s->config = arg;
	return 0;
}

static int opt_switch_id(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
			 size_t len)
{
	uint64_t v;
	(void)c;
	if (parse_u64_range("switch-id", arg, 1, UINT32_MAX, &v, err, len))
		return -1;
	s->switch_id = (uint32_t)v;
	return 0;
}

#define PATH_OPT(fn, field)                                                                \
	static int fn(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,   \
		      size_t len)                                                          \
	{                                                                                  \
		(void)s, (void)err, (void)len;                                             \
		c->field = arg;                                                            \
		return 0;                                                                  \
	}
PATH_OPT(opt_pcap, pcap_path)
PATH_OPT(opt_pcap_port, pcap_port)
PATH_OPT(opt_stats, stats_path)
PATH_OPT(opt_stats_json, stats_json_path)

static int time_opt(const char *flag, const char *arg, qp_time_ns *out, char *err, size_t len)
{
	if (qp_parse_time(arg, out) || *out > 100 * QP_NS_PER_S)
		return ERR("--%s '%s': not a time in 0..100s (e.g. 10us, 1ms)", flag, arg);
	return 0;
}

static int opt_stats_interval(struct sw_conf *c, struct cli_state *s, const char *arg,
			      char *err, size_t len)
{
	(void)s;
	if (time_opt("stats-interval", arg, &c->stats_interval_ns, err, len))
		return -1;
	if (c->stats_interval_ns < QP_NS_PER_MS)
		return ERR("--stats-interval '%s': at least 1ms", arg);
	return 0;
}

static int opt_duration(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
			size_t len)
{
	(void)s;
	if (qp_parse_time(arg, &c->duration_ns) || c->duration_ns == 0 ||
	    c->duration_ns > 30ULL * 86400 * QP_NS_PER_S)
		return ERR("--duration '%s': a time in (0, 30 days] (e.g. 10s, 500ms)", arg);
	return 0;
}

static int opt_spin(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		    size_t len)
{
	(void)s;
	if (qp_parse_time(arg, &c->spin_ns) || c->spin_ns > 10 * QP_NS_PER_MS)
		return ERR("--spin '%s': a time in 0..10ms (0: never busy-poll)", arg);
	return 0;
}

static int opt_tx_early(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
			size_t len)
{
	(void)s;
	if (qp_parse_time(arg, &c->tx_early_ns) || c->tx_early_ns > QP_NS_PER_MS)
		return ERR("--tx-early '%s': a time in 0..1ms", arg);
	return 0;
}

static int opt_quiet(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		     size_t len)
{
	(void)s, (void)arg, (void)err, (void)len;
	c->quiet = true;
	return 0;
}

static int opt_help(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		    size_t len);

static const struct opt opts[] = {
	{ "star", 0, "N", opt_star, "one switch with N udp ports on 127.0.0.1 (1..64)" },
	{ "base-port", 0, "P", opt_base_port,
	  "with --star: port i receives on P+2i, sends to P+2i+1 until it hears from\n"
	  "another address, then to the last sender (default 7000)" },
	{ "config", 'c', "FILE", opt_config,
	  "topology file: switches, ports (udp, vxlan, packet) and links between\n"
	  "switches; see switchsim/examples/*.topo" },
	{ "switch-id", 0, "ID", opt_switch_id, "with --star: the switch id in telemetry (default 1)" },
	{ "rate", 0, "RATE", NULL, "link rate of each port, bits/s (default 1G; 1K..10T)" },
	{ "buffer", 0, "BYTES", NULL, "egress buffer per port, drop-tail (default 128K)" },
	{ "delay", 0, "TIME", NULL, "propagation delay of each link (default 5us)" },
	{ "ecn", 0, "KMIN,KMAX,PMAX", NULL,
	  "RED marking of ECN-capable frames on the instantaneous queue (default off)" },
	{ "int", 0, "MODE", NULL,
	  "INT reports for RoCEv2 data frames: direct (to the sender, default),\n"
	  "echo (to the receiver, whose agent forwards it), off" },
	{ "int-sample", 0, "SPEC", NULL,
	  "every=K (every K-th frame of a QP) and/or interval=TIME (at most one\n"
	  "per QP per TIME); default every frame" },
	{ "early", 0, "BYTES", NULL,
	  "early congestion notice when the queue a frame joins is at least BYTES;\n"
	  "bdp = rate x 2 x delay, at least 1500 (default), off" },
	{ "notice-interval", 0, "TIME", NULL,
	  "at most one early notice per flow per TIME (default 10us)" },
	{ "cnp", 0, "on|off", NULL,
	  "with each early notice also a RoCEv2 CNP (opcode 0x81) to the sender's\n"
	  "QP, learned from the receiver's ACKs (default off)" },
	{ "levels", 0, "MIN,MID,MAX", NULL,
	  "congestion levels 0..3 (FFD) at these queue bytes (default off)" },
	{ "level-repeat", 0, "TIME", NULL,
	  "repeat an unacknowledged level every TIME (default 100us)" },
	{ "flows", 0, "N", NULL, "per-port flow table slots, power of two (default 1024)" },
	{ "seed", 0, "N", NULL, "seed of RED's random numbers (default 1)" },
	{ "pcap", 0, "FILE", opt_pcap, "write the frames ports send to a pcap file" },
	{ "pcap-port", 0, "PORT", opt_pcap_port, "capture only PORT (name, or SWITCH:PORT)" },
	{ "stats", 0, "FILE", opt_stats, "CSV: queue bytes and counters per port over time" },
	{ "stats-interval", 0, "TIME", opt_stats_interval, "CSV row period (default 10ms)" },
	{ "stats-json", 0, "FILE", opt_stats_json,
	  "JSON counters at exit and on SIGUSR1 (default: stderr on SIGUSR1)" },
	{ "duration", 0, "TIME", opt_duration, "stop after TIME (default: at SIGINT/SIGTERM)" },
	{ "spin", 0, "TIME", opt_spin,
	  "busy-poll when the next departure is within TIME, sleep otherwise\n"
	  "(default 50us; 0 = always sleep: ~50us late at best)" },
	{ "tx-early", 0, "TIME", opt_tx_early,
	  "hand frames to the OS up to TIME before their model departure, so they\n"
	  "leave in batches (default 10us; the model and telemetry are unaffected)" },
	{ "quiet", 'q', NULL, opt_quiet, "no start-up summary" },
	{ "help", 'h', NULL, opt_help, "this text" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *out)
{
	fputs("usage: qpace-switch --star N [--base-port P] [options]\n"
	      "       qpace-switch -c FILE [options]\n\n"
	      "A userspace Ethernet switch for RoCEv2 experiments: each egress port is a queue\n"
	      "modelled in nanoseconds (rate, delay, buffer); RoCEv2 senders get INT reports,\n"
	      "early congestion notices and congestion levels over UDP 4792.\n\n"
	      "Example: 4 hosts (QEMU -netdev dgram) on a 1 Gb/s switch with ECN:\n"
	      "  qpace-switch --star 4 --rate 1G --buffer 128K --delay 5us --base-port 7000 \\\n"
	      "               --ecn 20K,80K,0.2 --stats q.csv\n"
	      "  guest i: -netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,\n"
	      "           local.port=7001+2i,remote.type=inet,remote.host=127.0.0.1,\n"
	      "           remote.port=7000+2i\n\n"
	      "Options:\n", out);
	for (size_t i = 0; i < NOPTS; i++) {
		char head[64];
		const char *h = opts[i].help, *nl;
		snprintf(head, sizeof(head), "%s%c%s--%s%s%s", opts[i].short_name ? "-" : "",
			 opts[i].short_name ? opts[i].short_name : ' ',
			 opts[i].short_name ? ", " : " ", opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		fprintf(out, "  %-24s%s", opts[i].short_name ? head : head + 2,
			strlen(head) > 24 ? "\n                          " : "");
		while ((nl = strchr(h, '\n'))) {
			fprintf(out, "%.*s\n%26s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(out, "%s\n", h);
	}
	fputs("\nSignals: SIGINT/SIGTERM stop cleanly (captures flushed, --stats-json written);\n"
	      "SIGUSR1 writes the JSON counters now.\n", out);
}

static int opt_help(struct sw_conf *c, struct cli_state *s, const char *arg, char *err,
		    size_t len)
{
	(void)c, (void)s, (void)arg, (void)err, (void)len;
	usage(stdout);
	return 1;
}

int sw_cli_parse(struct sw_conf *c, int argc, char **argv)
{
	struct option lopts[NOPTS + 1];
	char shorts[2 * NOPTS + 1], err[512];
	struct cli_state s = { .base_port = 7000, .switch_id = 1 };
	size_t ns = 0;
	int ch, idx, rc;

	sw_conf_defaults(c);
	memset(lopts, 0, sizeof(lopts));
	for (size_t i = 0; i < NOPTS; i++) {
		lopts[i] = (struct option){ opts[i].name, opts[i].arg ? required_argument : no_argument,
					    NULL, 256 + (int)i };
		if (opts[i].short_name) {
			shorts[ns++] = (char)opts[i].short_name;
			if (opts[i].arg)
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = 0;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, shorts, lopts, &idx)) != -1) {
		const struct opt *o = NULL;
		if (ch >= 256)
			o = &opts[ch - 256];
		for (size_t i = 0; !o && i < NOPTS; i++)
			if (ch == opts[i].short_name)
				o = &opts[i];
		if (!o) {
			fprintf(stderr, "qpace-switch: %s '%s'\n",
				ch == ':' || (optopt && ch == '?' && strchr(shorts, optopt)) ?
				"missing value for" : "unknown option", argv[optind - 1]);
			fputs("try: qpace-switch --help\n", stderr);
			return -1;
		}
		if (o->fn) {
			rc = o->fn(c, &s, optarg, err, sizeof(err));
		} else if ((rc = sw_conf_setting(&c->def, o->name, optarg, err, sizeof(err)))) {
			fprintf(stderr, "qpace-switch: --%s\n", err);
			return -1;
		}
		if (rc) {
			if (rc < 0)
				fprintf(stderr, "qpace-switch: %s\n", err);
			return rc;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "qpace-switch: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!!s.star == !!s.config) {
		fprintf(stderr, "qpace-switch: give exactly one of --star N or -c FILE\n"
			"try: qpace-switch --help\n");
		return -1;
	}
	rc = s.star ? sw_conf_star(c, s.star, s.base_port, err, sizeof(err))
		    : sw_topo_load(c, s.config, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qpace-switch: %s\n", err);
		return -1;
	}
	if (s.star)
		c->sw[0].id = s.switch_id;
	sw_conf_finish(c);
	return 0;
}
