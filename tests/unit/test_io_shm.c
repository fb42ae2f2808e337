/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-switch's shm port (switchsim/io_shm.c) when the host's ring is full: frames the
 * switch sends then wait in the port's backlog and go into the ring in order as the host
 * drains it, byte for byte; the loop keeps calling recv (pending) and does not sleep (arm)
 * while any wait; only what overflows the backlog too is lost, and counted, and so is a
 * backlog a host took nothing of for 100 ms (gone or stopped: the loop may sleep again). */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/shm_ring.h"
#include "qpace/time.h"
#include "io.h"

#define SLOTS 8u
#define BACKLOG (2 * SLOTS)   /* SHM_BACKLOG_RINGS rings' worth */

struct fx {
	char path[64];
	struct sw_io *io;
	struct shm_region host;
};

static int setup(void **state)
{
	static struct fx f;
	struct sw_port_conf c = { .kind = SW_PORT_SHM, .shm_slots = SLOTS };
	char err[256];

	memset(&f.host, 0, sizeof(f.host));
	snprintf(c.name, sizeof(c.name), "p0");
	c.local = (struct sockaddr_in){ .sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	c.remote = c.local;
	c.remote.sin_port = htons(9);   /* discard: doorbells go nowhere */
	snprintf(f.path, sizeof(f.path), "/tmp/qpace-io-shm-%d", (int)getpid());
	if (sw_io_open(&c, f.path, &f.io, err, sizeof(err)))
		fail_msg("open: %s", err);
	if (shm_region_attach(&f.host, f.path, err, sizeof(err)))
		fail_msg("attach: %s", err);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	shm_region_close(&f->host);
	sw_io_close(f->io);
	unlink(f->path);
	return 0;
}

/* Frame k: its length and bytes say k. */
static void frame_k(uint8_t *b, unsigned k, struct iovec *v)
{
	size_t len = 60 + (k * 37) % 900;

	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(k * 7 + i);
	*v = (struct iovec){ b, len };
}

static void expect_k(const uint8_t *b, int len, unsigned k)
{
	uint8_t want[1024];
	struct iovec v;

	frame_k(want, k, &v);
	assert_int_equal(len, (int)v.iov_len);
	assert_memory_equal(b, want, v.iov_len);
}

static void test_full_ring_waits_in_order(void **state)
{
	struct fx *f = *state;
	static uint8_t bufs[SLOTS + BACKLOG + 4][1024];
	struct iovec v[SLOTS + BACKLOG + 4];
	const struct sw_io_shm_stats *st;
	struct sw_rx_frame rx[SW_BATCH];
	uint8_t got[SHM_FRAME_MAX];
	uint64_t skipped = 0;
	unsigned n = SLOTS + BACKLOG + 4, next = 0;
	qp_time_ns ts;
	int len;

	for (unsigned k = 0; k < n; k++)
		frame_k(bufs[k], k, &v[k]);
	/* a ring and a backlog full: the last 4 are lost */
	assert_int_equal(f->io->ops->send(f->io, v, n), (int)(SLOTS + BACKLOG));
	st = sw_io_shm_stats(f->io);
	assert_int_equal(st->deferred, BACKLOG);
	assert_int_equal(st->backlog_max, BACKLOG);
	assert_int_equal(st->lost, 4);
	assert_true(f->io->ops->pending(f->io));
	assert_false(f->io->ops->arm(f->io));   /* frames wait: not asleep */

	/* the host takes 3; a send behind the backlog waits too, after it */
	for (int i = 0; i < 3; i++) {
		len = shm_ring_pop(&f->host.rx, got, sizeof(got), &ts);
		expect_k(got, len, next++);
	}
	shm_ring_release(&f->host.rx);
	assert_int_equal(f->io->ops->recv(f->io, rx, &skipped), 0);   /* moves 3 on */
	/* the host drains everything, the switch moving the backlog on every turn */
	for (int turn = 0; turn < 100 && next < SLOTS + BACKLOG; turn++) {
		while ((len = shm_ring_pop(&f->host.rx, got, sizeof(got), &ts)) > 0)
			expect_k(got, len, next++);
		shm_ring_release(&f->host.rx);
		assert_int_equal(f->io->ops->recv(f->io, rx, &skipped), 0);
	}
	assert_int_equal(next, SLOTS + BACKLOG);
	assert_int_equal(shm_ring_pop(&f->host.rx, got, sizeof(got), &ts), 0);
	assert_false(f->io->ops->pending(f->io));
	assert_true(f->io->ops->arm(f->io));
	assert_int_equal(skipped, 0);

	/* room again: a frame goes straight into the ring */
	assert_int_equal(f->io->ops->send(f->io, v, 1), 1);
	len = shm_ring_pop(&f->host.rx, got, sizeof(got), &ts);
	expect_k(got, len, 0);
	assert_int_equal(sw_io_shm_stats(f->io)->deferred, BACKLOG);
}

static void test_stuck_host_loses_backlog(void **state)
{
	struct fx *f = *state;
	static uint8_t bufs[SLOTS + 4][1024];
	struct iovec v[SLOTS + 4];
	struct sw_rx_frame rx[SW_BATCH];
	uint64_t skipped = 0;

	for (unsigned k = 0; k < SLOTS + 4; k++)
		frame_k(bufs[k], k, &v[k]);
	assert_int_equal(f->io->ops->send(f->io, v, SLOTS + 4), (int)(SLOTS + 4));
	qp_time_ns t0 = qp_now_ns();
	assert_int_equal(f->io->ops->recv(f->io, rx, &skipped), 0);   /* stuck from now */
	assert_true(f->io->ops->pending(f->io));
	usleep(20 * 1000);
	assert_int_equal(f->io->ops->recv(f->io, rx, &skipped), 0);
	if (qp_now_ns() - t0 < 90 * QP_NS_PER_MS)   /* (a machine that stalled: not judged) */
		assert_true(f->io->ops->pending(f->io));              /* not yet 100 ms */
	usleep(110 * 1000);
	assert_int_equal(f->io->ops->recv(f->io, rx, &skipped), 0);
	assert_false(f->io->ops->pending(f->io));                     /* dropped */
	assert_true(f->io->ops->arm(f->io));
	assert_int_equal(sw_io_shm_stats(f->io)->lost, 4);
	assert_int_equal(sw_io_shm_stats(f->io)->deferred, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_full_ring_waits_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_host_loses_backlog, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
