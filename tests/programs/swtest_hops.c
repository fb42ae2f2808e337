/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-swtest hops --base-port P N [echo]: RoCEv2 data across several switches of one
 * process; every INT report must carry N hops, one per switch crossed, in path order,
 * with dequeue times that grow along the path. Host a is on the port at P (bound P+1),
 * host b at P+2 (P+3). Reports go to a (the sender, --int direct), or with `echo` to b
 * (the receiver, --int echo) flagged for its agent to forward. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "qpace/units.h"
#include "swtest.h"

#define FRAMES 20

static const struct frame_addr host_a = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ip = 0x0a000001, .port = 0xc002 };
static const struct frame_addr host_b = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0b }, .ip = 0x0a000002, .port = 9000 };

/* True when @r has @want hops of distinct switches with dequeue times in path order. */
static int check_report(const struct fb_int *r, unsigned want, int print)
{
	int ok = r->nhops == want;

	for (unsigned h = 1; ok && h < r->nhops; h++)
		ok = r->hops[h].switch_id != r->hops[h - 1].switch_id &&
		     r->hops[h].ts_ns > r->hops[h - 1].ts_ns;
	if (print) {
		printf("first report, %u hops:", r->nhops);
		for (unsigned h = 0; h < r->nhops; h++)
			printf(" [switch %u port %u t+%" PRIu64 " ns tx %" PRIu64 " q %u]",
			       r->hops[h].switch_id, r->hops[h].port,
			       r->hops[h].ts_ns - r->hops[0].ts_ns, r->hops[h].tx_bytes,
			       r->hops[h].qlen_bytes);
		printf("\n");
	}
	return ok;
}

int swt_cmd_hops(int argc, char **argv)
{
	struct swt_args a;
	struct swt_pair p;
	struct frame_roce_spec s = {
		.src = host_a, .dst = host_b,
		.bth = { .opcode = FRAME_OP_RC_SEND_MIDDLE, .dest_qp = 0x22 }, .payload_len = 1024,
	};
	uint8_t f[2048], buf[SW_TEST_FRAME];
	int reports = 0, delivered = 0, good = 0, echo = 0;
	unsigned want = 0;
	qp_time_ns end;

	if (!swt_parse(&a, argc, argv) && optind < argc) {
		want = (unsigned)atoi(argv[optind]);
		echo = optind + 1 < argc && !strcmp(argv[optind + 1], "echo");
	}
	if (!a.base_port || want < 1 || want > QP_INT_MAX_HOPS || swt_pair_open(&p, a.base_port)) {
		fprintf(stderr, "qpace-swtest hops --base-port P NHOPS [echo]\n");
		return 2;
	}
	swt_learn(&p, &host_a, &host_b);
	for (int k = 0; k < FRAMES; k++) {
		s.bth.psn = (uint32_t)k;
		int len = frame_build_roce(f, sizeof(f), &s);
		sendto(p.a, f, (size_t)len, 0, (struct sockaddr *)&p.to_a, sizeof(p.to_a));
	}
	end = qp_now_ns() + 2 * QP_NS_PER_S;
	while (qp_now_ns() < end && (reports < FRAMES || delivered < FRAMES)) {
		struct frame_parsed fp;
		struct fb_msg m;
		ssize_t n;
		while ((n = recv(echo ? p.a : p.b, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			delivered += !echo && !frame_parse(&fp, buf, (size_t)n) &&
				     (fp.layers & FRAME_L_ROCE);
		while ((n = recv(echo ? p.b : p.a, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			if (frame_parse(&fp, buf, (size_t)n))
				continue;
			if (echo && (fp.layers & FRAME_L_ROCE)) {
				delivered++;
				continue;
			}
			if (!(fp.layers & FRAME_L_UDP) || fp.udp.dport != FB_PORT ||
			    fp.ip.dst != (echo ? host_b.ip : host_a.ip))
				continue;
			/* one or more messages back to back */
			for (size_t off = 0; off < fp.payload_len; off += m.length) {
				if (fb_decode(&m, buf + fp.payload_off + off, fp.payload_len - off))
					break;
				if (m.type != FB_T_INT || !!(m.flags & FB_F_TO_RECEIVER) != echo)
					continue;
				good += check_report(&m.u.int_report, want, reports++ == 0);
			}
		}
	}
	printf("%d frames delivered, %d INT reports %s, %d with %u hops in path order\n",
	       delivered, reports, echo ? "at the receiver (echo)" : "at the sender (direct)", good,
	       want);
	return delivered == FRAMES && reports == FRAMES && good == FRAMES ? 0 : 1;
}
