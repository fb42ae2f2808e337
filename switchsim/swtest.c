/* Helpers of qpace-swtest (see swtest.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qpace/units.h"
#include "swtest.h"

int swt_parse(struct swt_args *a, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "to", required_argument, NULL, 't' }, { "bind", required_argument, NULL, 'b' },
		{ "rate", required_argument, NULL, 'r' }, { "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "base-port", required_argument, NULL, 'p' }, { NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int ch;

	memset(a, 0, sizeof(*a));
	a->size = 1000;
	a->duration_ns = QP_NS_PER_S;
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			a->to = optarg;
			break;
		case 'b':
			a->bind = optarg;
			break;
		case 'r':
			if (qp_parse_rate(optarg, &a->rate_bps) || !a->rate_bps)
				return -1;
			break;
		case 's':
			if (qp_parse_bytes(optarg, &v) || v > 8000)
				return -1;
			a->size = v;
			break;
		case 'd':
			if (qp_parse_time(optarg, &a->duration_ns) || a->duration_ns > 60 * QP_NS_PER_S)
				return -1;
			break;
		case 'p':
			if (qp_parse_u64(optarg, &v) || v < 1 || v > 65000)
				return -1;
			a->base_port = (unsigned)v;
			break;
		default: return -1;
		}
	}
	return 0;
}

int swt_addr(const char *s, struct sockaddr_in *out)
{
	char ip[64];
	const char *colon = s ? strrchr(s, ':') : NULL;

	if (!colon || (size_t)(colon - s) >= sizeof(ip))
		return -1;
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = 0;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, ip, &out->sin_addr) == 1 ? 0 : -1;
}

int swt_udp(const struct sockaddr_in *at)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), sz = 8 << 20;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (const struct sockaddr *)at, sizeof(*at)) < 0) {
		fprintf(stderr, "qpace-swtest: bind %s:%u: %s\n", inet_ntoa(at->sin_addr),
			ntohs(at->sin_port), strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Frame k is due at start + k * wire * 8 / rate; sleeps when more than 200 us early. */
static void wait_until(qp_time_ns t)
{
	qp_time_ns now = qp_now_ns();
	if (t > now + 200 * QP_NS_PER_US) {
		struct timespec ts = { 0, (long)(t - now - 150 * QP_NS_PER_US) };
		nanosleep(&ts, NULL);
	}
	while (qp_now_ns() < t)
		;
}

struct swt_counts swt_paced_send(int fd, qp_rate_bps rate, size_t payload, size_t wire,
				 qp_time_ns duration)
{
	static uint8_t buf[SW_TEST_FRAME];
	struct swt_counts c = { 0 };
	qp_time_ns start = qp_now_ns(), gap = qp_tx_time_ns(wire, rate ? rate : QP_GBPS);

	for (uint64_t k = 0; start + k * gap < start + duration; k++) {
		wait_until(start + k * gap);
		memcpy(buf, &k, sizeof(k));
		if (send(fd, buf, payload, 0) == (ssize_t)payload) {
			c.frames++;
			c.bytes += wire;
		}
	}
	c.ns = qp_now_ns() - start;
	return c;
}

/* Take what waits on @fd without blocking. */
static int rx_drain(int fd, struct swt_rx *r, size_t overhead)
{
	static uint8_t buf[SW_TEST_FRAME];
	int got = 0;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		qp_time_ns now = qp_now_ns();
		if (!r->frames) {
			r->first_ns = now;
			r->first_bytes = (uint64_t)n + overhead;
		}
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

	for (uint64_t k = 0; k * gap < duration; k++) {
		while (qp_now_ns() < start + k * gap)
			rx_drain(p->b, rx, 0);
		if (sendto(p->a, frame, len, 0, (struct sockaddr *)&p->to_a, sizeof(p->to_a)) ==
		    (ssize_t)len) {
			c.frames++;
			c.bytes += len;
		}
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

void swt_print_rx(const char *what, const struct swt_rx *r)
{
	double secs = (double)(r->last_ns - r->first_ns) / 1e9;
	double bps = secs > 0 ? (double)(r->bytes - r->first_bytes) * 8 / secs : 0;

	printf("%s %" PRIu64 " frames, %" PRIu64 " B in %.3f s: rate %.0f b/s\n", what, r->frames,
	       r->bytes, secs, bps);
}

int swt_pair_open(struct swt_pair *p, unsigned base)
{
	struct sockaddr_in at = { .sin_family = AF_INET };

	at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->to_a = p->to_b = at;
	p->to_a.sin_port = htons((uint16_t)base);
	p->to_b.sin_port = htons((uint16_t)(base + 2));
	at.sin_port = htons((uint16_t)(base + 1));
	p->a = swt_udp(&at);
	at.sin_port = htons((uint16_t)(base + 3));
	p->b = swt_udp(&at);
	return p->a < 0 || p->b < 0 ? -1 : 0;
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

/* The value of "KEY": N in the block of port PORT of switch SW (qpace-switch's JSON). */
int swt_json_get(const char *path, const char *sw, const char *port, const char *key,
		 uint64_t *out)
{
	static char text[1 << 20];
	char pat[128];
	FILE *f = fopen(path, "r");
	size_t n;
	const char *s, *p, *end;

	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	snprintf(pat, sizeof(pat), "{\"name\": \"%s\", \"id\"", sw);
	s = strstr(text, pat);
	snprintf(pat, sizeof(pat), "{\"name\": \"%s\", \"kind\"", port);
	p = s ? strstr(s, pat) : NULL;
	end = p ? strchr(p, '}') : NULL;
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	s = p ? strstr(p, pat) : NULL;
	if (!s || s > end)
		return -1;
	*out = strtoull(s + strlen(pat), NULL, 10);
	return 0;
}
