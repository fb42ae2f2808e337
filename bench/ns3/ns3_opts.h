/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ns3-incast's command line: qpace-bench incast's flags, names, defaults and value syntax,
 * read by qpace's option engine (include/qpace/opt.h). C, so the table is the same kind
 * of table as every other qpace program's; incast.cc (C++) calls it. */
#ifndef BENCH_NS3_OPTS_H
#define BENCH_NS3_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#define NS3_VERSION_STR "3.37"   /* the packaged library this is built against */

enum ns3_transport { NS3_TCP, NS3_UDP };

struct ns3_conf {
	uint64_t senders, size, rounds, buffer, mtu, window, seed;
	uint64_t rate;               /* bit/s */
	uint64_t delay, timeout;     /* ns */
	unsigned transport;          /* enum ns3_transport */
	bool json;
};

/* Defaults, then argv. 0: run; 1: --help was printed; negative: the error was printed
 * (`ns3-incast: --flag 'value': why, range` and `try: ns3-incast --help`). */
int ns3_conf_parse(struct ns3_conf *c, int argc, char **argv);

#endif
