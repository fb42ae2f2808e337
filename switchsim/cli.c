/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-switch's command line: one option table (qpace/opt.h) drives parsing, the checks
 * and --help. The per-port settings (rate, buffer, ecn, ...) go through sw_conf_setting,
 * the parser topology files use too, so a flag and its topology key read alike. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/keyfile.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "conf.h"

/* What the command line sets: the star's shape, the topology file, and the run fields of
 * struct sw_conf (copied in and out, RUN_FIELDS). */
struct cli {
	struct sw_conf *c;
	uint64_t star, base_port, switch_id;
	const char *config, *shm;
	unsigned learn;              /* index in on_off: 0 = on */
	unsigned shm_offer;          /* index in on_off: 0 = offer the star's rings */
	unsigned gso;                /* index in off_on: 1 = UDP GSO */
	const char *pcap_path, *pcap_port, *stats_path, *stats_json_path;
	qp_time_ns stats_interval_ns, duration_ns, spin_ns, tx_early_ns;
	uint32_t icrc_every;
	bool quiet;
};

#define RUN_FIELDS(X)                                                                      \
	X(pcap_path) X(pcap_port) X(stats_path) X(stats_json_path) X(stats_interval_ns)    \
	X(duration_ns) X(spin_ns) X(tx_early_ns) X(icrc_every) X(quiet)

/* A per-port setting: sw_conf_setting's message is "KEY 'VALUE': accepted ...". */
static int setting(const struct qp_opt *o, void *conf, const char *arg, char *err, size_t len)
{
	struct cli *s = conf;
	char msg[400];

	if (sw_conf_setting(&s->c->def, o->name, arg, msg, sizeof(msg)))
		return qp_errmsg(-EINVAL, err, len, "--%s", msg);
	return 0;
}

static const char *const on_off[] = { "on", "off", NULL };
static const char *const off_on[] = { "off", "on", NULL };

static void key_warning(const char *line)
{
	fprintf(stderr, "qpace-switch: warning: %s\n", line);
}

/* --key FILE|none: the key every switch signs with unless its topology line says key=. */
static int opt_key(const struct qp_opt *o, void *conf, const char *arg, char *err, size_t len)
{
	struct cli *s = conf;

	(void)o;
	s->c->have_key = strcmp(arg, "none") != 0;
	return s->c->have_key ? qp_keyfile_read(arg, s->c->key, key_warning, err, len) : 0;
}

#define AT(field) QP_OPT_AT(struct cli, field)
#define NUM(lo, hi) .min = (lo), .max = (hi)
#define SETTING .fn = setting, .flags = QP_OPT_F_OWN_MSG

static const struct qp_opt opts[] = {
	{ "star", 0, QP_OPT_UINT, "N", AT(star), NUM(1, SW_MAX_PORTS),
	  .help = "one switch with N udp ports on 127.0.0.1 (1..128)" },
	{ "base-port", 0, QP_OPT_UINT, "P", AT(base_port), NUM(1, 65535 - 2 * SW_MAX_PORTS),
	  .help = "with --star: port i receives on P+2i, sends to P+2i+1 until it hears from\n"
		  "another address, then to the last sender (default 7000)" },
	{ "config", 'c', QP_OPT_STR, "FILE", AT(config),
	  .help = "topology file: switches, ports (udp, vxlan, packet) and links between\n"
		  "switches; see switchsim/examples/*.topo" },
	{ "shm", 0, QP_OPT_STR, "PREFIX", AT(shm),
	  .help = "with --star: shm ports instead of udp, for soft hosts on this machine:\n"
		  "port i's frames in shared memory at PREFIX.pI (a link to a sealed memfd),\n"
		  "its doorbells on the udp addresses; a host gives shm=PREFIX.pI beside\n"
		  "attach= (e.g. --shm /dev/shm/qs: /dev/shm/qs.p0, ...)" },
	{ "shm-offer", 0, QP_OPT_CHOICE, "on|off", AT(shm_offer), .choices = on_off,
	  .help = "with --star, without --shm: on = each udp port also offers shared-\n"
		  "memory rings, which a soft host on this machine whose attach= names the\n"
		  "port takes by itself (a frame by datagram turns the port back to\n"
		  "datagrams); off = datagrams only", .def = "on" },
	{ "gso", 0, QP_OPT_CHOICE, "on|off", AT(gso), .choices = off_on,
	  .help = "on = udp ports send each run of frames of one length as one UDP GSO\n"
		  "send, cut into a datagram per frame below the socket (fewer system\n"
		  "calls a frame); off = a datagram per send (why off by default:\n"
		  "docs/performance.md, UDP GSO in the switch)",
	  .def = "off" },
	{ "switch-id", 0, QP_OPT_UINT, "ID", AT(switch_id), NUM(1, UINT32_MAX),
	  .help = "with --star: the switch id in telemetry (default 1)" },
	{ "learn", 0, QP_OPT_CHOICE, "on|off", AT(learn), .choices = on_off,
	  .help = "with --star: on = a port follows a new peer on a well-formed frame from\n"
		  "it; off = it talks to P+2i+1 only (topology files: learn=off)", .def = "on" },
	{ "key", 'k', QP_OPT_FN, "FILE|none", .fn = opt_key,
	  .help = "shared key (32 hex digits, as qpaced --key): sign every telemetry message\n"
		  "and take only signed, new level acks (default none; topology: key=)" },
	{ "rate", 0, QP_OPT_FN, "RATE", SETTING,
	  .help = "link rate of each port, bits/s (default 1G; 1K..10T)" },
	{ "buffer", 0, QP_OPT_FN, "BYTES", SETTING,
	  .help = "egress buffer per port, drop-tail (default 128K)" },
	{ "delay", 0, QP_OPT_FN, "TIME", SETTING,
	  .help = "propagation delay of each link (default 5us)" },
	{ "ecn", 0, QP_OPT_FN, "KMIN,KMAX,PMAX", SETTING,
	  .help = "RED marking of ECN-capable frames on the instantaneous queue (default off)" },
	{ "int", 0, QP_OPT_FN, "MODE", SETTING,
	  .help = "INT reports for RoCEv2 data frames: direct (to the sender, default),\n"
		  "echo (to the receiver, whose agent forwards it), off" },
	{ "int-sample", 0, QP_OPT_FN, "SPEC", SETTING,
	  .help = "every=K (every K-th frame of a QP) and/or interval=TIME (at most one\n"
		  "per QP per TIME); default every frame; a flow may ask for sparser" },
	{ "int-flows", 0, QP_OPT_FN, "WHICH", SETTING,
	  .help = "whose data gets INT reports: wanted (flows whose sender's agent asked,\n"
		  "default), all" },
	{ "early", 0, QP_OPT_FN, "BYTES", SETTING,
	  .help = "early congestion notice when the queue a frame joins is at least BYTES;\n"
		  "bdp = rate x 2 x delay, at least 1500 (default), off" },
	{ "notice-interval", 0, QP_OPT_FN, "TIME", SETTING,
	  .help = "at most one early notice per flow per TIME (default 10us)" },
	{ "cnp", 0, QP_OPT_FN, "on|off", SETTING,
	  .help = "with each early notice also a RoCEv2 CNP (opcode 0x81) to the sender's\n"
		  "QP, learned from the receiver's ACKs (default off)" },
	{ "levels", 0, QP_OPT_FN, "MIN,MID,MAX", SETTING,
	  .help = "congestion levels 0..3 (FFD) at these RED average queue bytes (default off)" },
	{ "level-weight", 0, QP_OPT_FN, "W", SETTING,
	  .help = "the levels' RED average: avg = (1-W) avg + W q per arrival, W in (0,1];\n"
		  "1 = the instantaneous queue (default 0.002, RED's)" },
	{ "level-repeat", 0, QP_OPT_FN, "TIME", SETTING,
	  .help = "repeat an unacknowledged level every TIME (default 100us)" },
	{ "flow-idle", 0, QP_OPT_FN, "TIME", SETTING,
	  .help = "a flow counts as active in notices until TIME after its last frame\n"
		  "(0 = while it has bytes queued; default 0); with TIME a notice also goes\n"
		  "out when the count falls below the one a flow was last told" },
	{ "flows", 0, QP_OPT_FN, "N", SETTING,
	  .help = "per-port flow table slots, power of two (default 1024)" },
	{ "seed", 0, QP_OPT_FN, "N", SETTING, .help = "seed of RED's random numbers (default 1)" },
	{ "pfc", 0, QP_OPT_FN, "SPEC", SETTING,
	  .help = "PFC (802.1Qbb) per port: xoff=BYTES[,xon=BYTES (xoff/2)][,headroom=BYTES|\n"
		  "auto][,class=0..7 (3)][,quanta=N (65535)][,lossless]; PAUSE upstream when a\n"
		  "port's class bytes in the queues reach xoff, XON at xon; lossless: those\n"
		  "frames drop only past xoff + headroom (default off)" },
	{ "impair", 0, QP_OPT_FN, "SPEC", SETTING,
	  .help = "impair the link out of every port, comma-separated: loss=P%,\n"
		  "ge=P%:R%[:H%[:K%]] (Gilbert-Elliott), corrupt=P%, dup=P%, jitter=TIME,\n"
		  "reorder=P%[:TIME], seed=N; e.g. loss=1%,reorder=1%,seed=7 (default off)" },
	{ "pcap", 0, QP_OPT_STR, "FILE", AT(pcap_path),
	  .help = "write the frames ports send to a pcap file" },
	{ "pcap-port", 0, QP_OPT_STR, "PORT", AT(pcap_port),
	  .help = "capture only PORT (name, or SWITCH:PORT)" },
	{ "stats", 0, QP_OPT_STR, "FILE", AT(stats_path),
	  .help = "CSV: queue bytes and counters per port over time" },
	{ "stats-interval", 0, QP_OPT_TIME, "TIME", AT(stats_interval_ns),
	  NUM(QP_NS_PER_MS, 100 * QP_NS_PER_S), .help = "CSV row period (default 10ms)" },
	{ "stats-json", 0, QP_OPT_STR, "FILE", AT(stats_json_path),
	  .help = "JSON counters at exit and on SIGUSR1 (default: stderr on SIGUSR1)" },
	{ "duration", 0, QP_OPT_TIME, "TIME", AT(duration_ns), NUM(1, 30ULL * 86400 * QP_NS_PER_S),
	  .help = "stop after TIME (default: at SIGINT/SIGTERM)" },
	{ "spin", 0, QP_OPT_TIME, "TIME", AT(spin_ns), NUM(0, 10 * QP_NS_PER_MS),
	  .help = "busy-poll when the next departure is within TIME, sleep otherwise\n"
		  "(default 50us; 0 = always sleep: ~50us late at best)" },
	{ "tx-early", 0, QP_OPT_TIME, "TIME", AT(tx_early_ns), NUM(0, QP_NS_PER_MS),
	  .help = "hand frames to the OS up to TIME before their model departure, so they\n"
		  "leave in batches (default 10us; the model and telemetry are unaffected)" },
	{ "icrc-check", 0, QP_OPT_UINT, "N", AT(icrc_every), NUM(0, 1000000),
	  .help = "check the ICRC of every N-th RoCEv2 frame a port receives, count\n"
		  "the ones that fail (icrc_bad; forwarded all the same); 1 = all, 0 = none\n"
		  "(default 16: a sample, as a check costs CPU on every frame it is made\n"
		  "for; docs/switch.md, What the switch checks)" },
	{ "quiet", 0, QP_OPT_FLAG, NULL, AT(quiet), .old_short = 'q',
	  .help = "no start-up summary" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "qpace-switch",
	.head = "usage: qpace-switch --star N [--base-port P] [options]\n"
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
		"Options:\n",
	.tail = "\nSignals: SIGINT/SIGTERM stop cleanly (captures flushed, --stats-json written);\n"
		"SIGUSR1 writes the JSON counters now.\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
	.purpose = "a userspace Ethernet switch for RoCEv2 congestion-control experiments",
	.files = "switchsim/examples/*.topo\ttopology files (-c) in the source tree",
	.see_also = "qpaced(1), qpace-bench(1)",
};

int sw_cli_parse(struct sw_conf *c, int argc, char **argv)
{
	struct cli s = { .c = c, .base_port = 7000, .switch_id = 1 };
	char err[512];
	int rc;

	sw_conf_defaults(c);
#define TO_CLI(f) s.f = c->f;
	RUN_FIELDS(TO_CLI)
	rc = qp_opt_main(&prog, argc, argv, &s, NULL);
	if (rc)
		return rc > 0 ? 1 : -1;
#define TO_CONF(f) c->f = s.f;
	RUN_FIELDS(TO_CONF)
	c->gso = s.gso == 1;
	if (!!s.star == !!s.config) {
		qp_opt_fail(prog.name, "give exactly one of --star N or -c FILE");
		return -1;
	}
	if (s.shm && !s.star) {
		qp_opt_fail(prog.name, "--shm is for --star; in a topology file, a port line of "
			    "kind shm with path=");
		return -1;
	}
	if (s.learn && !s.star) {
		qp_opt_fail(prog.name, "--learn off is for --star; in a topology file, learn=off "
			    "on a udp port's line");
		return -1;
	}
	rc = s.star ? sw_conf_star(c, (int)s.star, (unsigned)s.base_port, err, sizeof(err))
		    : sw_topo_load(c, s.config, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "qpace-switch: %s\n", err);
		return -1;
	}
	if (s.star) {
		c->sw[0].id = (uint32_t)s.switch_id;
		for (int i = 0; i < c->sw[0].nports; i++)
			c->sw[0].ports[i].no_learn = s.learn == 1;
		rc = s.shm ? sw_conf_star_shm(c, s.shm, err, sizeof(err))
			   : s.shm_offer == 0 ? sw_conf_star_offer(c, err, sizeof(err)) : 0;
		if (rc) {
			fprintf(stderr, "qpace-switch: %s\n", err);
			return -1;
		}
	}
	sw_conf_finish(c);
	return 0;
}
