/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The shm port's rings (lib/shm_ring.c): frames in order across the wrap, a full ring,
 * lengths at and past the bounds, a peer that writes garbage into the indices and the
 * slots (counted, resynced, never read out of bounds: ASan checks the copies), the
 * eventcount's flag (armed, rung once, cleared), the region's link, seals and header,
 * and two threads passing frames with doorbells, where a lost wake-up would hang the
 * consumer (its wait times out and the test fails). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/shm_ring.h"
#include "test_rng.h"

struct pair {
	void *mem;
	struct shm_region sw, host;   /* the switch's view and the host's of one region */
};

static void pair_open(struct pair *p, uint32_t nslots)
{
	size_t bytes = shm_region_bytes(nslots);

	assert_int_equal(posix_memalign(&p->mem, 4096, bytes), 0);
	memset(p->mem, 0, bytes);
	shm_region_over(&p->sw, p->mem, nslots, true);
	shm_region_over(&p->host, p->mem, nslots, false);
}

static void pair_close(struct pair *p)
{
	free(p->mem);
}

/* The region's words as a hostile peer sees them: the layout of qpace/shm_ring.h. */
#define RING0_HEAD 64
#define RING0_TAIL 128
#define RING1_HEAD 256
#define RING1_TAIL 320

static _Atomic uint32_t *word(struct pair *p, size_t off)
{
	return (_Atomic uint32_t *)(void *)((uint8_t *)p->mem + off);
}

static void fill(uint8_t *f, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		f[i] = (uint8_t)(seq * 7 + i);
	memcpy(f, &seq, sizeof(seq));
}

static bool check(const uint8_t *f, size_t len, uint32_t seq)
{
	uint32_t got;

	memcpy(&got, f, sizeof(got));
	if (got != seq)
		return false;
	for (size_t i = sizeof(seq); i < len; i++)
		if (f[i] != (uint8_t)(seq * 7 + i))
			return false;
	return true;
}

/* Host to switch, 8 slots, 1000 frames in batches of 1..8 of random lengths: every one
 * arrives once, in order, byte-exact, with its time stamp; the indices wrap the ring 125
 * times. */
static void test_order_across_wrap(void **state)
{
	struct pair p;
	uint8_t f[SHM_FRAME_MAX], got[SHM_FRAME_MAX];
	uint32_t sent = 0, recvd = 0;
	uint64_t seed = 3;
	(void)state;

	pair_open(&p, 8);
	while (recvd < 1000) {
		unsigned batch = 1 + (unsigned)(test_rng(&seed) % 8);
		for (unsigned k = 0; k < batch && sent < 1000; k++) {
			size_t len = SHM_FRAME_MIN + test_rng(&seed) % (SHM_FRAME_MAX - SHM_FRAME_MIN + 1);
			fill(f, len, sent);
			if (shm_ring_push(&p.host.tx, f, len, 1000 + sent) == -ENOBUFS)
				break;
			sent++;
		}
		assert_false(shm_ring_publish(&p.host.tx));   /* nobody waits: no doorbell */
		for (;;) {
			qp_time_ns ts;
			int len = shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts);
			if (len == 0)
				break;
			assert_true(len >= (int)SHM_FRAME_MIN);
			assert_true(check(got, (size_t)len, recvd));
			assert_int_equal(ts, 1000 + recvd);
			recvd++;
		}
		shm_ring_release(&p.sw.rx);
	}
	assert_int_equal(p.host.tx.st.frames, 1000);
	assert_int_equal(p.sw.rx.st.frames, 1000);
	assert_int_equal(p.sw.rx.st.bad_len + p.sw.rx.st.bad_index, 0);
	pair_close(&p);
}

/* A full ring takes no more until the consumer releases; frames popped but not released
 * still hold their slots. */
static void test_full_ring(void **state)
{
	struct pair p;
	uint8_t f[64] = { 0 }, got[64];
	qp_time_ns ts;
	(void)state;

	pair_open(&p, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), -ENOBUFS);
	assert_null(shm_ring_slot(&p.sw.tx));
	assert_int_equal(p.sw.tx.st.full, 2);
	shm_ring_publish(&p.sw.tx);
	assert_int_equal(shm_ring_pop(&p.host.rx, got, sizeof(got), &ts), 64);
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), -ENOBUFS);   /* not released */
	shm_ring_release(&p.host.rx);
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), -ENOBUFS);
	pair_close(&p);
}

/* Lengths: the producer refuses one over a slot; the consumer skips (and counts) slots
 * whose length is under an Ethernet header, over a slot, or over its buffer, and takes
 * the ones at the bounds. */
static void test_lengths(void **state)
{
	struct pair p;
	static uint8_t f[SHM_FRAME_MAX + 1], got[SHM_FRAME_MAX];
	qp_time_ns ts;
	uint32_t *len0;
	(void)state;

	pair_open(&p, 8);
	assert_int_equal(shm_ring_push(&p.host.tx, f, SHM_FRAME_MAX + 1, 0), -EMSGSIZE);
	assert_int_equal(shm_ring_push(&p.host.tx, f, SHM_FRAME_MAX, 0), 0);
	assert_int_equal(shm_ring_push(&p.host.tx, f, SHM_FRAME_MIN, 0), 0);
	assert_int_equal(shm_ring_push(&p.host.tx, f, 100, 0), 0);
	assert_int_equal(shm_ring_push(&p.host.tx, f, 100, 0), 0);
	assert_int_equal(shm_ring_push(&p.host.tx, f, 200, 0), 0);
	shm_ring_publish(&p.host.tx);
	/* a hostile host rewrites the lengths of slots 2 and 3 after publishing */
	len0 = (uint32_t *)(void *)((uint8_t *)p.mem + 4096);
	*(uint32_t *)(void *)((uint8_t *)len0 + 2 * SHM_SLOT_BYTES) = SHM_FRAME_MIN - 1;
	*(uint32_t *)(void *)((uint8_t *)len0 + 3 * SHM_SLOT_BYTES) = 0xffffffffu;
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), (int)SHM_FRAME_MAX);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), (int)SHM_FRAME_MIN);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), -EMSGSIZE);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), -EMSGSIZE);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, 100, &ts), -EMSGSIZE);   /* our buffer */
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), 0);
	assert_int_equal(p.sw.rx.st.bad_len, 3);
	assert_int_equal(p.sw.rx.st.frames, 2);
	pair_close(&p);
}

/* The peer's indices: a head more than a ring ahead (or behind us) is counted and taken
 * as ours, and the ring goes on with the next honest frames; a tail ahead of what was
 * produced makes the ring full (counted), and an honest tail again frees it. */
static void test_corrupt_indices(void **state)
{
	struct pair p;
	uint8_t f[64] = { 0 }, got[64];
	qp_time_ns ts;
	(void)state;

	pair_open(&p, 8);
	/* ring 0's head: the host writes 1000 into it */
	atomic_store(word(&p, RING0_HEAD), 1000u);
	assert_true(shm_ring_pending(&p.sw.rx));
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), -EPROTO);
	assert_int_equal(p.sw.rx.st.bad_index, 1);
	assert_int_equal(atomic_load(word(&p, RING0_TAIL)), 1000u);   /* resynced */
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), 0);
	/* a head behind the consumer */
	atomic_store(word(&p, RING0_HEAD), 990u);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), -EPROTO);
	assert_int_equal(p.sw.rx.st.bad_index, 2);
	/* an honest producer that starts from there again is heard */
	p.host.tx.pos = p.host.tx.published = 990;
	p.host.tx.seen = 990 - 8;
	assert_int_equal(shm_ring_push(&p.host.tx, f, sizeof(f), 0), 0);
	shm_ring_publish(&p.host.tx);
	assert_int_equal(shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts), 64);

	/* ring 1's tail: the host claims to have consumed frames never produced */
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	shm_ring_publish(&p.sw.tx);
	for (int i = 0; i < 7; i++)
		assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	atomic_store(word(&p, RING1_TAIL), 500u);
	assert_null(shm_ring_slot(&p.sw.tx));
	assert_int_equal(p.sw.tx.st.bad_index, 1);
	atomic_store(word(&p, RING1_TAIL), 1u);   /* honest again: one slot consumed */
	assert_non_null(shm_ring_slot(&p.sw.tx));
	pair_close(&p);
}

/* Random garbage over the whole control area and every slot header, between honest
 * pushes and pops: every pop returns a length within the buffer or an error, and the
 * counters account for every pop that was not a frame. */
static void test_garbage_region(void **state)
{
	struct pair p;
	uint8_t f[256] = { 0 }, got[SHM_FRAME_MAX];
	uint64_t seed = 11, frames = 0, errors = 0;
	(void)state;

	pair_open(&p, 16);
	for (int step = 0; step < 20000; step++) {
		uint64_t r = test_rng(&seed);
		qp_time_ns ts;
		if (r % 7 == 0) {   /* a 32-bit word of garbage somewhere in the header pages */
			uint32_t off = (uint32_t)(test_rng(&seed) % (4096 / 4)) * 4;
			*(uint32_t *)(void *)((uint8_t *)p.mem + off) = (uint32_t)test_rng(&seed);
		} else if (r % 7 == 1) {   /* a slot's length */
			uint32_t slot = (uint32_t)(test_rng(&seed) % 32);
			*(uint32_t *)(void *)((uint8_t *)p.mem + 4096 + (size_t)slot * SHM_SLOT_BYTES) =
				(uint32_t)test_rng(&seed);
		} else if (r % 2) {
			shm_ring_push(&p.host.tx, f, 14 + r % 200, 0);
			shm_ring_publish(&p.host.tx);
		} else {
			int len = shm_ring_pop(&p.sw.rx, got, sizeof(got), &ts);
			assert_true(len <= (int)sizeof(got));
			frames += len > 0;
			errors += len < 0;
			shm_ring_release(&p.sw.rx);
		}
	}
	assert_int_equal(p.sw.rx.st.frames, frames);
	assert_int_equal(p.sw.rx.st.bad_len + p.sw.rx.st.bad_index, errors);
	assert_true(errors > 0);
	pair_close(&p);
}

/* The eventcount's flag: arm on an empty ring says block; a publish then asks for one
 * doorbell and clears the flag (the next publish asks for none); arm on a ring with a
 * frame says do not block; disarm says whether the flag was still up. */
static void test_arm_and_doorbell(void **state)
{
	struct pair p;
	uint8_t f[64] = { 0 }, got[64];
	qp_time_ns ts;
	(void)state;

	pair_open(&p, 8);
	assert_true(shm_ring_arm(&p.host.rx));
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	assert_true(shm_ring_publish(&p.sw.tx));
	assert_int_equal(shm_ring_push(&p.sw.tx, f, sizeof(f), 0), 0);
	assert_false(shm_ring_publish(&p.sw.tx));
	assert_false(shm_ring_publish(&p.sw.tx));   /* nothing new: no store either */
	assert_int_equal(p.sw.tx.st.doorbells, 1);
	assert_false(shm_ring_disarm(&p.host.rx));  /* the producer cleared it */
	assert_false(shm_ring_arm(&p.host.rx));     /* two frames wait: stay up */
	assert_true(shm_ring_disarm(&p.host.rx));
	assert_int_equal(shm_ring_pop(&p.host.rx, got, sizeof(got), &ts), 64);
	assert_false(shm_ring_arm(&p.host.rx));     /* one still waits */
	assert_int_equal(shm_ring_pop(&p.host.rx, got, sizeof(got), &ts), 64);
	shm_ring_release(&p.host.rx);
	assert_true(shm_ring_arm(&p.host.rx));
	pair_close(&p);
}

/* The region in a memfd: the link, the host's view of the same memory, the link removed
 * at close; a plain file (not sealed) and a header of another version are refused. */
static void test_region_link_and_checks(void **state)
{
	char path[64], plain[64], err[256];
	struct shm_region sw, host, bad;
	uint8_t f[64] = { 1, 2, 3 }, got[64];
	qp_time_ns ts;
	int fd;
	(void)state;

	snprintf(path, sizeof(path), "/tmp/qpace-test-shm-%d", (int)getpid());
	snprintf(plain, sizeof(plain), "/tmp/qpace-test-shm-plain-%d", (int)getpid());
	assert_int_equal(shm_region_create(&sw, path, 3, err, sizeof(err)), -EINVAL);
	assert_int_equal(shm_region_create(&sw, path, 16, err, sizeof(err)), 0);
	assert_int_equal(shm_region_attach(&host, path, err, sizeof(err)), 0);
	assert_int_equal(shm_ring_push(&host.tx, f, sizeof(f), 5), 0);
	shm_ring_publish(&host.tx);
	assert_int_equal(shm_ring_pop(&sw.rx, got, sizeof(got), &ts), 64);
	assert_memory_equal(got, f, sizeof(f));
	/* the host cannot shrink the region under the switch's mapping */
	assert_int_not_equal(ftruncate(host.fd, 4096), 0);
	shm_region_close(&host);
	shm_region_close(&sw);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(shm_region_attach(&bad, path, err, sizeof(err)), -ENOENT);

	fd = open(plain, O_CREAT | O_RDWR | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)shm_region_bytes(16)), 0);
	close(fd);
	assert_int_equal(shm_region_attach(&bad, plain, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "sealed"));
	assert_int_equal(shm_region_create(&bad, plain, 16, err, sizeof(err)), -EEXIST);
	unlink(plain);

	/* a sealed memfd of the right size whose header says another version */
	fd = memfd_create("t", MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)shm_region_bytes(16)), 0);
	uint32_t h[4] = { SHM_RING_MAGIC, SHM_RING_VERSION + 1, 16, SHM_SLOT_BYTES };
	assert_int_equal(pwrite(fd, h, sizeof(h), 0), (ssize_t)sizeof(h));
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	assert_int_equal(shm_region_attach(&bad, proc, err, sizeof(err)), -EPROTO);
	close(fd);
}

/* Two threads, a ring of 8 slots, 200,000 frames: the consumer blocks (on an eventfd,
 * the doorbell) whenever arm says so; a wake-up lost to the race between its arm and the
 * producer's publish would leave it asleep with frames waiting, and its 2 s wait fails
 * the test. Under TSan (make check-tsan) the atomics' orders are checked too. */
#define MT_FRAMES 200000u

struct mt {
	struct pair p;
	int bell;                 /* the consumer's doorbell */
	uint32_t timeouts, order_errors;
};

static void *mt_producer(void *arg)
{
	struct mt *m = arg;
	uint8_t f[64];
	uint32_t seq = 0;

	while (seq < MT_FRAMES) {
		unsigned n = 0;
		while (n < 5 && seq < MT_FRAMES) {
			fill(f, sizeof(f), seq);
			if (shm_ring_push(&m->p.host.tx, f, sizeof(f), 0))
				break;
			seq++;
			n++;
		}
		if (shm_ring_publish(&m->p.host.tx)) {
			uint64_t one = 1;
			if (write(m->bell, &one, sizeof(one)) != sizeof(one))
				abort();
		}
		if (!n)   /* full: the consumer is behind, let it run */
			sched_yield();
	}
	return NULL;
}

static void test_two_threads_no_lost_wakeup(void **state)
{
	struct mt m = { 0 };
	pthread_t t;
	uint8_t got[64];
	uint32_t seq = 0, sleeps = 0;
	(void)state;

	pair_open(&m.p, 8);
	m.bell = eventfd(0, EFD_CLOEXEC);
	assert_true(m.bell >= 0);
	assert_int_equal(pthread_create(&t, NULL, mt_producer, &m), 0);
	while (seq < MT_FRAMES && m.timeouts == 0) {
		qp_time_ns ts;
		int len = shm_ring_pop(&m.p.sw.rx, got, sizeof(got), &ts);
		if (len > 0) {
			m.order_errors += !check(got, (size_t)len, seq);
			seq++;
			if (seq % 4 == 0)
				shm_ring_release(&m.p.sw.rx);
			continue;
		}
		assert_int_equal(len, 0);
		shm_ring_release(&m.p.sw.rx);
		if (shm_ring_arm(&m.p.sw.rx)) {
			struct pollfd pfd = { .fd = m.bell, .events = POLLIN };
			uint64_t v;
			sleeps++;
			if (poll(&pfd, 1, 2000) != 1 || read(m.bell, &v, sizeof(v)) != sizeof(v))
				m.timeouts++;
		}
		shm_ring_disarm(&m.p.sw.rx);
	}
	pthread_join(t, NULL);
	assert_int_equal(m.timeouts, 0);
	assert_int_equal(seq, MT_FRAMES);
	assert_int_equal(m.order_errors, 0);
	print_message("%u frames, the consumer slept %u times\n", seq, sleeps);
	close(m.bell);
	pair_close(&m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_across_wrap),
		cmocka_unit_test(test_full_ring),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_corrupt_indices),
		cmocka_unit_test(test_garbage_region),
		cmocka_unit_test(test_arm_and_doorbell),
		cmocka_unit_test(test_region_link_and_checks),
		cmocka_unit_test(test_two_threads_no_lost_wakeup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
