/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-swtest: small test hosts for qpace-switch's integration tests.
 *
 *   qpace-swtest int  --base-port P             RoCEv2 data through a --star 2 switch at
 *                                               100M: checks INT, notices and levels
 *   qpace-swtest hops --base-port P N           INT reports with N hops across switches
 *   qpace-swtest rate --base-port P --rate R --size S --duration D
 *                                               Ethernet/IPv4/UDP frames in udp ports at R;
 *                                               prints sent, received, received rate
 *   qpace-swtest send --to IP:PORT --rate R --size S --duration D [--qp N]
 *                                               plain UDP socket (--qp: RoCEv2 data)
 *   qpace-swtest recv --bind IP:PORT --duration D                     plain UDP socket
 *   qpace-swtest json FILE SWITCH PORT KEY      one counter from --stats-json output
 *
 * Frame rates count whole frames (Ethernet header, no FCS), like the switch's model.
 * Every loop is bounded in time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "swtest.h"

static const struct frame_addr host_a = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ip = 0x0a000001, .port = 0xc001 };
static const struct frame_addr host_b = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0b }, .ip = 0x0a000002, .port = 9000 };

/* ---- plain UDP sockets, for namespace hosts ---- */
static int cmd_send(int argc, char **argv)
{
	struct swt_args a;
	struct sockaddr_in to;
	int fd;

	if (swt_parse(&a, argc, argv) || !a.to ||
	    qp_sockaddr_parse(a.to, 0, 65535, 0, &to, NULL, 0)) {
		fprintf(stderr, "qpace-swtest send: --to IP:PORT --rate R --size S --duration D\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("qpace-swtest send: socket");
		return 1;
	}
	struct swt_counts c = swt_paced_send(fd, a.rate_bps, a.size, a.size + 42, a.duration_ns,
					     (uint32_t)a.qp);
	printf("sent %" PRIu64 " frames of %zu B (%zu B on the wire) in %.3f s\n", c.frames,
	       a.size, a.size + 42, (double)c.ns / 1e9);
	close(fd);
	return 0;
}

static int cmd_recv(int argc, char **argv)
{
	struct swt_args a;
	struct sockaddr_in at;
	int fd;

	if (swt_parse(&a, argc, argv) || !a.bind ||
	    qp_sockaddr_parse(a.bind, 0, 65535, 0, &at, NULL, 0)) {
		fprintf(stderr, "qpace-swtest recv: --bind IP:PORT --duration D\n");
		return 2;
	}
	fd = swt_udp(&at);
	if (fd < 0)
		return 1;
	struct swt_rx r = swt_count_rx(fd, a.duration_ns, 42, NULL);
	swt_print_rx("received", &r);
	free(r.arrivals);
	close(fd);
	return 0;
}

/* ---- Ethernet frames in udp ports ---- */
static int cmd_rate(int argc, char **argv)
{
	struct swt_args a;
	struct swt_pair p;
	uint8_t frame[SW_TEST_FRAME];
	int len;

	if (swt_parse(&a, argc, argv) || !a.base_port) {
		fprintf(stderr, "qpace-swtest rate: --base-port P --rate R --size S --duration D\n");
		return 2;
	}
	if (swt_pair_open(&p, a.base_port))
		return 1;
	len = frame_build_udp(frame, sizeof(frame), &host_a, &host_b, NULL, NULL, a.size);
	if (len < 0) {
		fprintf(stderr, "qpace-swtest rate: --size %zu too large\n", a.size);
		return 2;
	}
	swt_learn(&p, &host_a, &host_b);
	struct swt_rx r = { 0 };
	struct swt_counts c = swt_paced_frames(&p, frame, (size_t)len, a.rate_bps, a.duration_ns,
					       &r);
	r = swt_count_rx(p.b, 300 * QP_NS_PER_MS, 0, &r);
	printf("sent %" PRIu64 " frames of %d B\n", c.frames, len);
	swt_print_rx("received", &r);
	free(r.arrivals);
	return 0;
}

static int cmd_json(int argc, char **argv)
{
	uint64_t v;

	if (argc != 6) {
		fprintf(stderr, "qpace-swtest json FILE SWITCH PORT KEY\n");
		return 2;
	}
	if (swt_json_get(argv[2], argv[3], argv[4], argv[5], &v)) {
		fprintf(stderr, "qpace-swtest json: %s not found for %s:%s in %s\n", argv[5],
			argv[3], argv[4], argv[2]);
		return 1;
	}
	printf("%" PRIu64 "\n", v);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "int", swt_cmd_int, "--base-port P: INT, notices and levels through --star 2 at 100M" },
	{ "hops", swt_cmd_hops, "--base-port P N: INT reports carry N hops across switches" },
	{ "rate", cmd_rate, "--base-port P --rate R --size S --duration D: frames in udp ports" },
	{ "send", cmd_send, "--to IP:PORT --rate R --size S --duration D: plain UDP" },
	{ "recv", cmd_recv, "--bind IP:PORT --duration D: count plain UDP" },
	{ "json", cmd_json, "FILE SWITCH PORT KEY: a counter from qpace-switch --stats-json" },
};

int main(int argc, char **argv)
{
	bool help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
	FILE *f = help ? stdout : stderr;

	if (argc == 2 && !strcmp(argv[1], "--version")) {
		qp_opt_version(stdout, "qpace-swtest");
		return QP_EXIT_OK;
	}
	for (size_t i = 0; !help && argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc, argv);
	fprintf(f, "usage: qpace-swtest COMMAND ...\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		fprintf(f, "  %-5s %s\n", cmds[i].name, cmds[i].help);
		if (help)
			swt_usage(f, cmds[i].name);
	}
	return help ? 0 : 2;
}
