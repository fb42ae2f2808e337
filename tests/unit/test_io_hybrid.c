/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-switch's udp+shm port (switchsim/io_shm.c, io.h): a udp port that also offers
 * shared-memory rings at shm_offer_path(its address). Frames go by datagram until a host
 * attaches to the offered region (found from the port's address alone, as a soft host's
 * shm=auto does) or puts a frame in the ring, and by datagram again when a datagram frame
 * comes; an empty datagram is a doorbell, never a frame; bytes arrive intact either way;
 * a region that cannot be made leaves a plain udp port. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/shm_ring.h"
#include "io.h"

struct fx {
	char dir[64], path[SHM_PATH_MAX];
	struct sw_port_conf c;
	struct sw_io *io;
	int host;                     /* the soft host's datagram socket */
	struct shm_region ring;       /* its side of the offered region, once attached */
	uint64_t skipped;
};

static in_port_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return a.sin_port;
}

static int setup(void **state)
{
	static struct fx f;
	struct sockaddr_in h = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(h);
	char err[256];

	memset(&f, 0, sizeof(f));
	f.ring.fd = -1;
	snprintf(f.dir, sizeof(f.dir), "/tmp/qpace-hybrid-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	setenv("QPACE_SHM_DIR", f.dir, 1);
	f.host = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(f.host, (struct sockaddr *)&h, sizeof(h)), 0);
	assert_int_equal(getsockname(f.host, (struct sockaddr *)&h, &len), 0);
	f.c = (struct sw_port_conf){ .kind = SW_PORT_UDP, .shm_slots = 8, .remote = h };
	snprintf(f.c.name, sizeof(f.c.name), "p0");
	f.c.local = h;
	f.c.local.sin_port = free_port();
	assert_int_equal(shm_offer_path(&f.c.local, f.path, sizeof(f.path)), 0);
	assert_int_equal(strncmp(f.path, f.dir, strlen(f.dir)), 0);
	if (sw_io_open(&f.c, f.path, &f.io, err, sizeof(err)))
		fail_msg("open: %s", err);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	shm_region_close(&f->ring);
	sw_io_close(f->io);
	close(f->host);
	assert_int_equal(access(f->path, F_OK), -1);   /* the offer's link went with the port */
	rmdir(f->dir);
	unsetenv("QPACE_SHM_DIR");
	return 0;
}

/* Frame k: a unicast Ethernet frame whose length and bytes say k. */
static struct iovec frame_k(uint8_t *b, unsigned k)
{
	size_t len = 60 + (k * 53) % 1400;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(k * 11 + i);
	b[0] = 0x02;
	b[6] = 0x02;
	return (struct iovec){ b, len };
}

static void expect_k(const uint8_t *b, size_t len, unsigned k)
{
	uint8_t want[1500];
	struct iovec v = frame_k(want, k);

	assert_int_equal(len, v.iov_len);
	assert_memory_equal(b, want, v.iov_len);
}

/* What the port's loop does when the socket is readable: wake, then recv. */
static int port_recv(struct fx *f, struct sw_rx_frame *rx, bool readable)
{
	if (readable)
		f->io->ops->wake(f->io);
	usleep(2000);   /* loopback delivers at once; a margin for a loaded machine */
	return f->io->ops->recv(f->io, rx, &f->skipped);
}

static void host_sends_datagram(struct fx *f, unsigned k)
{
	uint8_t b[1500];
	struct iovec v = frame_k(b, k);

	assert_int_equal(sendto(f->host, v.iov_base, v.iov_len, 0,
				(struct sockaddr *)&f->c.local, sizeof(f->c.local)),
			 (ssize_t)v.iov_len);
}

static void switch_sends(struct fx *f, unsigned k)
{
	uint8_t b[1500];
	struct iovec v = frame_k(b, k);

	assert_int_equal(f->io->ops->send(f->io, &v, 1), 1);
}

static ssize_t host_datagram(struct fx *f, uint8_t *b, size_t cap)
{
	usleep(2000);
	return recv(f->host, b, cap, MSG_DONTWAIT);
}

static const struct sw_io_shm_stats *st(struct fx *f)
{
	return sw_io_shm_stats(f->io);
}

static void test_datagrams_until_a_host_attaches(void **state)
{
	struct fx *f = *state;
	struct sw_rx_frame rx[SW_BATCH];
	uint8_t b[2048];
	qp_time_ns ts;
	char err[256];
	int n;

	assert_string_equal(f->io->ops->name, "udp+shm");
	assert_true(st(f)->offered);
	assert_false(st(f)->ring_mode);
	/* by datagram, both ways, while nobody took the rings */
	host_sends_datagram(f, 1);
	n = port_recv(f, rx, true);
	assert_int_equal(n, 1);
	expect_k(rx[0].data, rx[0].len, 1);
	switch_sends(f, 2);
	expect_k(b, (size_t)host_datagram(f, b, sizeof(b)), 2);
	assert_false(st(f)->ring_mode);

	/* a host takes the offer: the next frame out goes into its ring, none by datagram */
	assert_int_equal(shm_region_attach_offer(&f->ring, &f->c.local, err, sizeof(err)), 0);
	switch_sends(f, 3);
	assert_true(st(f)->ring_mode);
	assert_int_equal(st(f)->attaches, 1);
	assert_int_equal(st(f)->mode_changes, 1);
	assert_int_equal(host_datagram(f, b, sizeof(b)), -1);
	n = shm_ring_pop(&f->ring.rx, b, sizeof(b), &ts);
	expect_k(b, (size_t)n, 3);
	shm_ring_release(&f->ring.rx);

	/* the host's frames through the ring: pending, read without the socket */
	for (unsigned k = 10; k < 14; k++) {
		uint8_t o[1500];
		struct iovec v = frame_k(o, k);
		assert_int_equal(shm_ring_push(&f->ring.tx, o, v.iov_len, qp_now_ns()), 0);
	}
	shm_ring_publish(&f->ring.tx);
	assert_true(f->io->ops->pending(f->io));
	n = port_recv(f, rx, false);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++)
		expect_k(rx[i].data, rx[i].len, 10 + (unsigned)i);

	/* an empty datagram is a doorbell: counted, not a frame, not skipped */
	assert_int_equal(sendto(f->host, "", 0, 0, (struct sockaddr *)&f->c.local,
				sizeof(f->c.local)), 0);
	n = port_recv(f, rx, true);
	assert_int_equal(n, 0);
	assert_int_equal(st(f)->doorbells_rx, 1);
	assert_int_equal(f->skipped, 0);
	assert_true(st(f)->ring_mode);

	/* a frame by datagram again (a udp host on the port now): back to datagrams */
	host_sends_datagram(f, 20);
	n = port_recv(f, rx, true);
	assert_int_equal(n, 1);
	expect_k(rx[0].data, rx[0].len, 20);
	assert_false(st(f)->ring_mode);
	assert_int_equal(st(f)->mode_changes, 2);
	switch_sends(f, 21);
	expect_k(b, (size_t)host_datagram(f, b, sizeof(b)), 21);
	assert_false(shm_ring_pending(&f->ring.rx));
}

/* A host that closes its side (shm_region_close counts the detach): the port's frames go
 * by datagram again before anything comes by datagram (the next host on the port may be
 * a udp one that waits to be spoken to: an ARP reply). */
static void test_detach_back_to_datagrams(void **state)
{
	struct fx *f = *state;
	uint8_t b[2048];
	char err[256];

	assert_int_equal(shm_region_attach_offer(&f->ring, &f->c.local, err, sizeof(err)), 0);
	switch_sends(f, 1);
	assert_true(st(f)->ring_mode);
	assert_true(shm_ring_pending(&f->ring.rx));
	shm_region_close(&f->ring);
	switch_sends(f, 2);
	assert_false(st(f)->ring_mode);
	expect_k(b, (size_t)host_datagram(f, b, sizeof(b)), 2);
	assert_int_equal(st(f)->mode_changes, 2);
	/* and a second host's attach is seen although the count of attached is 1 again */
	assert_int_equal(shm_region_attach_offer(&f->ring, &f->c.local, err, sizeof(err)), 0);
	switch_sends(f, 3);
	assert_true(st(f)->ring_mode);
	assert_int_equal(st(f)->attaches, 2);
}

/* Datagrams and ring frames in one turn: every one delivered, none overwriting another
 * (the ring's go into the buffers the datagrams left). */
static void test_mixed_batch_keeps_every_frame(void **state)
{
	struct fx *f = *state;
	struct sw_rx_frame rx[SW_BATCH];
	char err[256];
	int n;

	assert_int_equal(shm_region_attach_offer(&f->ring, &f->c.local, err, sizeof(err)), 0);
	for (unsigned k = 0; k < 5; k++)
		host_sends_datagram(f, k);
	for (unsigned k = 100; k < 103; k++) {
		uint8_t o[1500];
		struct iovec v = frame_k(o, k);
		assert_int_equal(shm_ring_push(&f->ring.tx, o, v.iov_len, 0), 0);
	}
	shm_ring_publish(&f->ring.tx);
	n = port_recv(f, rx, true);
	assert_int_equal(n, 8);
	for (int i = 0; i < 5; i++)
		expect_k(rx[i].data, rx[i].len, (unsigned)i);
	for (int i = 5; i < 8; i++)
		expect_k(rx[i].data, rx[i].len, 100 + (unsigned)i - 5);
}

/* An offer the host must not take: a region offered for another address at this
 * address's path (a wrong header), and a plain file there (not the switch's link). */
static void test_offer_checks(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in other = f->c.local;
	struct shm_region r;
	char err[256], path[SHM_PATH_MAX];

	other.sin_port = htons((uint16_t)(ntohs(f->c.local.sin_port) ^ 1));
	assert_int_equal(shm_region_attach_offer(&r, &other, err, sizeof(err)), -ENOENT);
	assert_int_equal(shm_offer_path(&other, path, sizeof(path)), 0);
	assert_int_equal(symlink(f->path, path), 0);   /* p0's region, at other's path */
	assert_int_equal(shm_region_attach_offer(&r, &other, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "not offered for this address"));
	unlink(path);
	FILE *plain = fopen(path, "w");
	assert_non_null(plain);
	fclose(plain);
	assert_int_equal(shm_region_attach_offer(&r, &other, err, sizeof(err)), -EPERM);
	unlink(path);
	assert_int_equal(st(f)->attaches, 0);   /* none of that counted as an attach */

	char longdir[SHM_PATH_MAX + 8];
	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = 0;
	setenv("QPACE_SHM_DIR", longdir, 1);
	assert_int_equal(shm_offer_path(&other, path, sizeof(path)), -ENAMETOOLONG);
	assert_int_equal(shm_region_attach_offer(&r, &other, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "QPACE_SHM_DIR"));
	setenv("QPACE_SHM_DIR", f->dir, 1);
}

/* No region can be made (its directory is not there): a plain udp port, said once. */
static void test_no_region_plain_udp(void **state)
{
	struct sw_port_conf c;
	struct sw_io *io;
	char err[256];
	(void)state;

	memset(&c, 0, sizeof(c));
	c.kind = SW_PORT_UDP;
	snprintf(c.name, sizeof(c.name), "p9");
	c.local = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = free_port(),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	c.remote = c.local;
	assert_int_equal(sw_io_open(&c, "/nonexistent-qpace-dir/x", &io, err, sizeof(err)), 0);
	assert_ptr_equal(io->ops, &sw_io_udp_ops);
	assert_null(sw_io_shm_stats(io));
	sw_io_close(io);
}

/* A udp port's batch out (sw_io_send_batch with UDP GSO): runs of one length go down as
 * one send, and the host still reads one frame per datagram, each intact, in order, the
 * shorter last frame of a run and the runs of other lengths too. */
static void test_gso_runs_one_frame_per_datagram(void **state)
{
	struct fx *f = *state;
	static const unsigned lens[] = { 1000, 1000, 1000, 1000, 1000, 640, 1000, 1000, 64,
					 64, 64, 1400, 90 };
	enum { N = sizeof(lens) / sizeof(lens[0]) };
	uint8_t frames[N][1500], b[2048];
	struct iovec v[N];

	for (unsigned i = 0; i < N; i++) {
		for (unsigned j = 0; j < lens[i]; j++)
			frames[i][j] = (uint8_t)(i * 31 + j);
		v[i] = (struct iovec){ frames[i], lens[i] };
	}
	assert_int_equal(sw_io_send_batch(f->io, v, N, NULL, 0, &f->c.remote,
					  sizeof(f->c.remote)), N);
	usleep(2000);
	for (unsigned i = 0; i < N; i++) {
		ssize_t n = recv(f->host, b, sizeof(b), MSG_DONTWAIT);
		assert_int_equal(n, (ssize_t)lens[i]);
		assert_memory_equal(b, frames[i], lens[i]);
	}
	assert_int_equal(recv(f->host, b, sizeof(b), MSG_DONTWAIT), -1);
	assert_false(f->io->gso.off);
	/* 1000 x5 + 640 | 1000 x2 + 64 | 64 x2 | 1400 + 90: four sends of runs */
	assert_int_equal(f->io->gso.runs, 4);

	/* a socket the OS will not segment for (no UDP checksum: GSO refused with EINVAL):
	 * GSO off for the port, and the same frames go one datagram each, none lost */
	int on = 1;
	assert_int_equal(setsockopt(f->io->fd, SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on)), 0);
	assert_int_equal(sw_io_send_batch(f->io, v, N, NULL, 0, &f->c.remote,
					  sizeof(f->c.remote)), N);
	assert_true(f->io->gso.off);
	assert_int_equal(f->io->gso.runs, 4);
	usleep(2000);
	for (unsigned i = 0; i < N; i++) {
		ssize_t n = recv(f->host, b, sizeof(b), MSG_DONTWAIT);
		assert_int_equal(n, (ssize_t)lens[i]);
		assert_memory_equal(b, frames[i], lens[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_datagrams_until_a_host_attaches, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_detach_back_to_datagrams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_batch_keeps_every_frame, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_offer_checks, setup, teardown),
		cmocka_unit_test(test_no_region_plain_udp),
		cmocka_unit_test_setup_teardown(test_gso_runs_one_frame_per_datagram, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
