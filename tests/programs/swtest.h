/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers of qpace-swtest (the integration tests' host program). Not used by the switch. */
#ifndef SW_SWTEST_H
#define SW_SWTEST_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define SW_TEST_FRAME 9216

struct swt_args {
	const char *to, *bind;
	qp_rate_bps rate_bps;
	size_t size;
	qp_time_ns duration_ns;
	unsigned base_port;
	uint64_t qp;            /* send: 0, or a BTH to this dest QP begins each payload */
};

struct swt_counts {
	uint64_t frames, bytes;
	qp_time_ns ns;
};

struct swt_rx {
	uint64_t frames, bytes;
	uint64_t first_bytes;
	qp_time_ns first_ns, last_ns;
	qp_time_ns *arrivals;   /* receive time of each frame (first SWT_MAX_ARRIVALS) */
};
#define SWT_MAX_ARRIVALS (1u << 20)

/* Two hosts on a --star switch: a on port 0 (bound P+1), b on port 1 (bound P+3). */
struct swt_pair {
	int a, b;
	struct sockaddr_in to_a, to_b;  /* the switch's ports 0 and 1 */
};

/* Calls that fail return a negative errno: -EINVAL for a bad argument, -ENOENT for a key
 * not in the JSON, else the system call's. */
/* argv[1] is the subcommand; its options into @a (qpace/opt.h table). 0, with getopt's
 * optind at the first positional argument, or -EINVAL (the error printed). */
int swt_parse(struct swt_args *a, int argc, char **argv);
/* The options of subcommand @cmd, for --help. */
void swt_usage(FILE *f, const char *cmd);
int swt_udp(const struct sockaddr_in *bind_addr);
/* Datagrams of @payload bytes (@wire on the wire) at @rate for @duration; with @dest_qp,
 * each starts with a BTH (RC WRITE_MIDDLE to it, PSN counting up): RoCEv2 data to a
 * switch when sent to UDP port 4791. */
struct swt_counts swt_paced_send(int fd, qp_rate_bps rate, size_t payload, size_t wire,
				 qp_time_ns duration, uint32_t dest_qp);
struct swt_rx swt_count_rx(int fd, qp_time_ns max_ns, size_t overhead,
			   const struct swt_rx *so_far);
void swt_print_rx(const char *what, const struct swt_rx *r);
int swt_pair_open(struct swt_pair *p, unsigned base_port);
void swt_learn(struct swt_pair *p, const struct frame_addr *a, const struct frame_addr *b);
struct swt_counts swt_paced_frames(struct swt_pair *p, const uint8_t *frame, size_t len,
				   qp_rate_bps rate, qp_time_ns duration, struct swt_rx *rx);
int swt_json_get(const char *path, const char *sw, const char *port, const char *key,
		 uint64_t *out);
int swt_cmd_int(int argc, char **argv);
int swt_cmd_hops(int argc, char **argv);

#endif
