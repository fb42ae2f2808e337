/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers of qpace-swtest (see swtest.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/jsonr.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "swtest.h"

/* The subcommands that take options, and one table for all of them (qpace/opt.h). */
enum { SWT_INT = 1, SWT_HOPS = 2, SWT_RATE = 4, SWT_SEND = 8, SWT_RECV = 16 };

static const char *const swt_cmds[] = { "int", "hops", "rate", "send", "recv" };

#define AT(field) QP_OPT_AT(struct swt_args, field)

static const struct qp_opt swt_opts[] = {
	{ "to", 0, QP_OPT_STR, "IP:PORT", AT(to), .cmds = SWT_SEND, .help = "send here" },
	{ "bind", 0, QP_OPT_STR, "IP:PORT", AT(bind), .cmds = SWT_RECV, .help = "receive here" },
	{ "rate", 0, QP_OPT_RATE, "R", AT(rate_bps), .min = 1, .max = 10000 * QP_GBPS,
	  .cmds = SWT_RATE | SWT_SEND, .help = "frame rate in bits/s of whole frames" },
	{ "size", 0, QP_OPT_BYTES, "S", AT(size), .max = 8000, .cmds = SWT_RATE | SWT_SEND,
	  .help = "UDP payload bytes", .def = "1000" },
	{ "duration", 0, QP_OPT_TIME, "D", AT(duration_ns), .max = 60 * QP_NS_PER_S,
	  .cmds = SWT_RATE | SWT_SEND | SWT_RECV, .help = "how long", .def = "1s" },
	{ "base-port", 0, QP_OPT_UINT, "P", AT(base_port), .min = 1, .max = 65000,
	  .cmds = SWT_INT | SWT_HOPS | SWT_RATE, .help = "the --star switch's base port" },
	{ "qp", 0, QP_OPT_UINT, "QPN", AT(qp), .max = 0xffffff, .flags = QP_OPT_F_HEX,
	  .cmds = SWT_SEND, .help = "start each payload with a BTH to this dest QP (RoCEv2\n"
				    "data when sent to port 4791; payload >= 12 B)", .def = "0" },
};
#define SWT_NOPTS (sizeof(swt_opts) / sizeof(swt_opts[0]))

void swt_usage(FILE *f, const char *cmd)
{
	for (unsigned i = 0; i < sizeof(swt_cmds) / sizeof(swt_cmds[0]); i++)
		if (!strcmp(cmd, swt_cmds[i]))
			qp_opt_usage(f, swt_opts, SWT_NOPTS, 1u << i);
}

int swt_parse(struct swt_args *a, int argc, char **argv)
{
	struct qp_opt_spec spec = { .t = swt_opts, .n = SWT_NOPTS };
	char err[300], where[64];
	int first;

	for (unsigned i = 0; argc > 1 && i < sizeof(swt_cmds) / sizeof(swt_cmds[0]); i++)
		if (!strcmp(argv[1], swt_cmds[i]))
			spec.cmd = 1u << i;
	memset(a, 0, sizeof(*a));
	first = qp_opt_defaults(swt_opts, SWT_NOPTS, spec.cmd, a, err, sizeof(err));
	if (!first)
		first = qp_opt_parse(&spec, argc - 1, argv + 1, a, NULL, err, sizeof(err));
	if (first < 0) {
		snprintf(where, sizeof(where), "qpace-swtest %s", argc > 1 ? argv[1] : "");
		fprintf(stderr, "%s: %s\ntry: qpace-swtest --help\n", where, err);
		return first;
	}
	optind = first + 1;
	return 0;
}

int swt_udp(const struct sockaddr_in *at)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), sz = 8 << 20, one = 1;

	char a[QP_HOSTPORT_STRLEN];

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (const struct sockaddr *)at, sizeof(*at)) < 0) {
		int e = errno;

		fprintf(stderr, "qpace-swtest: bind %s: %s\n", qp_sockaddr_fmt(at, a, sizeof(a)),
			strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* Frame k is due at start + k * wire * 8 / rate. The senders wake every 500 us and send
 * what is due, so that they leave the CPU to the switch (and the machine's other work)
 * between bursts of a few frames; the average rate is exact. */
#define PACE_NS (500 * QP_NS_PER_US)

static void nap(void)
{
	struct timespec ts = { 0, (long)PACE_NS };
	nanosleep(&ts, NULL);
}

struct swt_counts swt_paced_send(int fd, qp_rate_bps rate, size_t payload, size_t wire,
				 qp_time_ns duration, uint32_t dest_qp)
{
	static uint8_t buf[SW_TEST_FRAME];
	struct swt_counts c = { 0 };
	qp_time_ns start = qp_now_ns(), gap = qp_tx_time_ns(wire, rate ? rate : QP_GBPS);
	uint64_t k = 0, total = duration / gap;
	struct frame_bth bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = dest_qp };

	while (k < total) {
		uint64_t due = (qp_now_ns() - start) / gap + 1;
		for (; k < due && k < total; k++) {
			memcpy(buf, &k, sizeof(k));
			bth.psn = (uint32_t)k & 0xffffff;
			if (dest_qp)
				frame_bth_encode(buf, payload, &bth);
			if (send(fd, buf, payload, 0) == (ssize_t)payload) {
				c.frames++;
				c.bytes += wire;
			}
		}
		nap();
	}
	c.ns = qp_now_ns() - start;
	return c;
}

/* Kernel receive time of the datagram in @m (CLOCK_MONOTONIC), else now: a receiver
 * that the machine stalls then counts each frame when it arrived, not when it was read. */
static qp_time_ns rx_time(struct msghdr *m)
{
	struct timespec rt, ts;
	qp_time_ns now = qp_now_ns(), real, t;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		clock_gettime(CLOCK_REALTIME, &rt);
		real = (qp_time_ns)rt.tv_sec * QP_NS_PER_S + (qp_time_ns)rt.tv_nsec;
		t = (qp_time_ns)ts.tv_sec * QP_NS_PER_S + (qp_time_ns)ts.tv_nsec;
		if (t <= real && real - t < now)
			return now - (real - t);
	}
	return now;
}

/* Take what waits on @fd without blocking. */
static int rx_drain(int fd, struct swt_rx *r, size_t overhead)
{
	static uint8_t buf[SW_TEST_FRAME];
	uint8_t ctl[64];
	int got = 0;
	ssize_t n;

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		qp_time_ns now;

		n = recvmsg(fd, &m, MSG_DONTWAIT);
		if (n < 0)
			break;
		now = rx_time(&m);
		if (!r->frames) {
			r->first_ns = now;
			r->first_bytes = (uint64_t)n + overhead;
		}
		if (!r->arrivals)
			r->arrivals = malloc(SWT_MAX_ARRIVALS * sizeof(*r->arrivals));
		if (r->arrivals && r->frames < SWT_MAX_ARRIVALS)
			r->arrivals[r->frames] = now;
		r->frames++;
		r->bytes += (uint64_t)n + overhead;
		r->last_ns = now;
		got++;
	}
	return got;
}

/* Frames from a to the switch at @rate for @duration, counting what b receives meanwhile. */
struct swt_counts swt_paced_frames(struct swt_pair *p, const uint8_t *frame, size_t len,
				   qp_rate_bps rate, qp_time_ns duration, struct swt_rx *rx)
{
	struct swt_counts c = { 0 };
	qp_time_ns start = qp_now_ns(), gap = qp_tx_time_ns(len, rate);
	uint64_t k = 0, total = duration / gap;

	while (k < total) {
		uint64_t due = (qp_now_ns() - start) / gap + 1;
		for (; k < due && k < total; k++) {
			if (sendto(p->a, frame, len, 0, (struct sockaddr *)&p->to_a,
				   sizeof(p->to_a)) == (ssize_t)len) {
				c.frames++;
				c.bytes += len;
			}
		}
		rx_drain(p->b, rx, 0);
		nap();
	}
	c.ns = qp_now_ns() - start;
	return c;
}

/* Count until @max_ns passed, or 300 ms without a frame after the first. */
struct swt_rx swt_count_rx(int fd, qp_time_ns max_ns, size_t overhead, const struct swt_rx *so_far)
{
	struct swt_rx r = so_far ? *so_far : (struct swt_rx){ 0 };
	qp_time_ns start = qp_now_ns(), now = start;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (r.frames)
		r.last_ns = start;
	while (now < start + max_ns && !(r.frames && now > r.last_ns + 300 * QP_NS_PER_MS)) {
		if (!rx_drain(fd, &r, overhead))
			poll(&pfd, 1, 5);
		now = qp_now_ns();
	}
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Two measures over the middle 90% of the frames (5th to 95th percentile), frames taken
 * to be of one size: the mean rate, and the median of the rates of 20 ms bins. A run on
 * a busy machine has moments where a stalled sender lets the queue run dry, or a stalled
 * switch hands on a backlog at once; they move a few bins, not the median. The median
 * is what the tests compare with the link rate. */
void swt_print_rx(const char *what, const struct swt_rx *r)
{
	double secs = (double)(r->last_ns - r->first_ns) / 1e9, bps = 0, median = 0;
	uint64_t n = r->frames < SWT_MAX_ARRIVALS ? r->frames : SWT_MAX_ARRIVALS;
	const qp_time_ns bin = 20 * QP_NS_PER_MS;

	if (n >= 20 && r->arrivals) {
		uint64_t lo = n / 20, hi = n - 1 - n / 20, nb;
		double size = (double)r->bytes / (double)r->frames;
		double s = (double)(r->arrivals[hi] - r->arrivals[lo]) / 1e9;
		double *bins;
		bps = s > 0 ? (double)(hi - lo) * size * 8 / s : 0;
		nb = (r->arrivals[hi] - r->arrivals[lo]) / bin;
		bins = nb ? calloc(nb, sizeof(*bins)) : NULL;
		for (uint64_t i = lo; bins && i < hi; i++) {
			uint64_t b = (r->arrivals[i] - r->arrivals[lo]) / bin;
			if (b < nb)
				bins[b] += size * 8 / ((double)bin / 1e9);
		}
		if (bins) {
			qsort(bins, nb, sizeof(*bins), cmp_double);
			median = bins[nb / 2];
			free(bins);
		}
	}
	printf("%s %" PRIu64 " frames, %" PRIu64 " B in %.3f s: mean rate %.0f b/s, "
	       "median 20 ms rate %.0f b/s\n", what, r->frames, r->bytes, secs, bps, median);
}

int swt_pair_open(struct swt_pair *p, unsigned base)
{
	struct sockaddr_in at = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(base + 1));

	p->to_a = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)base);
	p->to_b = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(base + 2));
	p->a = swt_udp(&at);
	at.sin_port = htons((uint16_t)(base + 3));
	p->b = swt_udp(&at);
	return p->a < 0 ? p->a : p->b < 0 ? p->b : 0;
}

/* One frame each way so the switch knows where both hosts are; then drain. */
void swt_learn(struct swt_pair *p, const struct frame_addr *a, const struct frame_addr *b)
{
	uint8_t f[128], junk[SW_TEST_FRAME];
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int n;

	n = frame_build_udp(f, sizeof(f), b, a, NULL, (const uint8_t *)"hello", 5);
	sendto(p->b, f, (size_t)n, 0, (struct sockaddr *)&p->to_b, sizeof(p->to_b));
	n = frame_build_udp(f, sizeof(f), a, b, NULL, (const uint8_t *)"hello", 5);
	sendto(p->a, f, (size_t)n, 0, (struct sockaddr *)&p->to_a, sizeof(p->to_a));
	nanosleep(&ts, NULL);
	while (recv(p->a, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	while (recv(p->b, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
}

/* swt_json_get's walks over qpace-switch's --stats-json: the first finds switch SW and the
 * index of port PORT in each switch, the second the key in that port. */
#define SWT_JSON_SWITCHES 64

struct swt_json {
	const char *sw, *port, *key;
	int sw_idx;
	int port_idx[SWT_JSON_SWITCHES];
	bool found;
	uint64_t value;
};

static void swt_json_names(void *arg, const char *path, const struct jsonr_val *v)
{
	struct swt_json *j = arg;
	const char *rest;
	unsigned s, p;
	int used = 0;

	if (v->type != JSONR_STR || sscanf(path, "switches.%u.%n", &s, &used) != 1 || !used ||
	    s >= SWT_JSON_SWITCHES)
		return;
	rest = path + used;
	used = 0;
	if (strcmp(rest, "name") == 0 && strcmp(v->str, j->sw) == 0 && j->sw_idx < 0)
		j->sw_idx = (int)s;
	else if (sscanf(rest, "ports.%u.%n", &p, &used) == 1 && used &&
		 strcmp(rest + used, "name") == 0 && strcmp(v->str, j->port) == 0 &&
		 j->port_idx[s] < 0)
		j->port_idx[s] = (int)p;
}

static void swt_json_value(void *arg, const char *path, const struct jsonr_val *v)
{
	struct swt_json *j = arg;
	char want[JSONR_MAX_PATH];

	snprintf(want, sizeof(want), "switches.%d.ports.%d.%s", j->sw_idx,
		 j->port_idx[j->sw_idx], j->key);
	if (v->is_u64 && strcmp(path, want) == 0) {
		j->value = v->u64;
		j->found = true;
	}
}

/* The value of KEY in port PORT of switch SW (qpace-switch's JSON). */
int swt_json_get(const char *path, const char *sw, const char *port, const char *key,
		 uint64_t *out)
{
	struct swt_json j = { .sw = sw, .port = port, .key = key, .sw_idx = -1 };
	char err[256];
	int rc;

	for (int i = 0; i < SWT_JSON_SWITCHES; i++)
		j.port_idx[i] = -1;
	if ((rc = jsonr_walk_file(path, swt_json_names, &j, err, sizeof(err))))
		return rc;
	if (j.sw_idx < 0 || j.port_idx[j.sw_idx] < 0)
		return -ENOENT;
	if ((rc = jsonr_walk_file(path, swt_json_value, &j, err, sizeof(err))))
		return rc;
	if (!j.found)
		return -ENOENT;
	*out = j.value;
	return 0;
}
