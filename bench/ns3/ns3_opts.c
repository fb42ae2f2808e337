/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ns3-incast's option table: see ns3_opts.h. The rows mirror bench/cli.c's incast rows
 * (names, short keys, defaults); the ranges are the ns-3 program's own, wider where
 * qpace-bench's reflect the real-time shell's limits (63 senders, 10 Gb/s). */
#include <stddef.h>

#include "qpace/opt.h"
#include "qpace/time.h"
#include "qpace/rate.h"
#include "ns3_opts.h"

#define AT(field) QP_OPT_AT(struct ns3_conf, field)

static const char *const transports[] = { "tcp", "udp", NULL };

static const struct qp_opt rows[] = {
	{ "senders", 'N', QP_OPT_UINT, "N", AT(senders), .min = 1, .max = 4096,
	  .help = "senders", .def = "16" },
	{ "size", 's', QP_OPT_BYTES, "SIZE", AT(size), .min = 1, .max = 1ULL << 30,
	  .help = "bytes each sender sends per round", .def = "256K" },
	{ "rounds", 'R', QP_OPT_UINT, "ROUNDS", AT(rounds), .min = 1, .max = 10000,
	  .help = "each round starts 2 ms after the last one's flows finished", .def = "5" },
	{ "rate", 0, QP_OPT_RATE, "RATE", AT(rate), .min = QP_MBPS, .max = 400 * QP_GBPS,
	  .help = "rate of every link, both ways", .def = "250M" },
	{ "buffer", 0, QP_OPT_BYTES, "BYTES", AT(buffer), .min = 4096, .max = 1ULL << 30,
	  .help = "drop-tail queue of each switch egress (the receiver's is the bottleneck)",
	  .def = "512K" },
	{ "delay", 0, QP_OPT_TIME, "TIME", AT(delay), .min = 0, .max = 10 * QP_NS_PER_MS,
	  .help = "propagation delay of each link", .def = "100us" },
	{ "mtu", 0, QP_OPT_UINT, "BYTES", AT(mtu), .min = 256, .max = 4096,
	  .help = "payload bytes per packet (RoCE's path MTU; TCP's segment, UDP's datagram)",
	  .def = "1024" },
	{ "window", 0, QP_OPT_UINT, "PKTS", AT(window), .min = 1, .max = 4096,
	  .help = "tcp: send and receive buffers of PKTS x MTU (rxe's window)", .def = "128" },
	{ "transport", 0, QP_OPT_CHOICE, "NAME", AT(transport), .choices = transports,
	  .help = "tcp: BulkSend over TCP NewReno; udp: OnOff at line rate", .def = "tcp" },
	{ "timeout", 0, QP_OPT_TIME, "TIME", AT(timeout), .min = QP_NS_PER_MS,
	  .max = 3600 * QP_NS_PER_S, .help = "give up on a round after TIME of simulated time",
	  .def = "20s" },
	{ "seed", 0, QP_OPT_UINT, "N", AT(seed), .min = 1, .max = UINT32_MAX,
	  .help = "ns-3's RNG seed", .def = "1" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON line instead of text" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "ns3-incast",
	.head = "usage: ns3-incast [options]\n"
		"qpace-bench incast's N -> 1 incast in ns-3 " NS3_VERSION_STR " (point-to-point links,\n"
		"one router, drop-tail queues), timed around Simulator::Run: packet-hops per\n"
		"wall-clock second. The flags are qpace-bench incast's.\n\n",
	.tail = "\nbench/ns3/compare.sh runs it beside qpace-bench incast --clock virtual.\n",
	.t = rows,
	.n = sizeof(rows) / sizeof(rows[0]),
	.max_args = 0,
};

int ns3_conf_parse(struct ns3_conf *c, int argc, char **argv)
{
	*c = (struct ns3_conf){ 0 };
	return qp_opt_main(&prog, argc, argv, c, NULL);
}
