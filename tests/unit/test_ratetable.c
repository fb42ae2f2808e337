/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rate table: writer/reader round trip (file and POSIX shm), a concurrent writer thread
 * against a reader on its own read-only mapping (no torn slot, bounded loop), and rejected
 * segments (truncated, wrong magic, wrong version, absurd sizes) with clear messages. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"

#include "qpace/ratetable.h"
#include "qpace/time.h"

static char dir[64];

static int setup_dir(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "rt");
}

static int remove_dir(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void path_in_dir(char *buf, size_t len, const char *leaf)
{
	snprintf(buf, len, "%s/%s", dir, leaf);
}

static void round_trip(const char *where)
{
	struct qp_ratetable *w, *r;
	struct qp_rate_entry e;
	uint32_t hint = 0;
	char err[200];
	int a, b;

	assert_int_equal(qp_ratetable_create(where, 16, &w, err, sizeof(err)), 0);
	a = qp_ratetable_assign(w, 0x000111);
	b = qp_ratetable_assign(w, 0x000222);
	assert_true(a >= 0 && b >= 0 && a != b);
	assert_int_equal(qp_ratetable_set(w, (uint32_t)a, 2500 * QP_MBPS, 0, 0, 1000), 0);
	assert_int_equal(qp_ratetable_set(w, (uint32_t)b, 40 * QP_MBPS, 6000, QP_RATE_F_CREDITS, 2000), 0);
	assert_int_equal(qp_ratetable_grant(w, (uint32_t)b, 4096, 3000), 0);
	assert_int_equal(qp_ratetable_grant(w, (uint32_t)b, 8192, 4000), 0);
	qp_ratetable_heartbeat(w, 123456789);

	assert_int_equal(qp_ratetable_open(where, &r, err, sizeof(err)), 0);
	/* The fallback policy: none until the agent publishes one, then as published. */
	{
		qp_time_ns hold;
		uint32_t pm;

		qp_ratetable_fallback(r, &hold, &pm);
		assert_true(hold == 0 && pm == 0);
		assert_int_equal(qp_ratetable_set_fallback(w, 250 * QP_NS_PER_MS, 125), 0);
		qp_ratetable_fallback(r, &hold, &pm);
		assert_true(hold == 250 * QP_NS_PER_MS && pm == 125);
		assert_int_equal(qp_ratetable_set_fallback(r, QP_NS_PER_S, 100), -EINVAL);
		assert_int_equal(qp_ratetable_set_fallback(w, 61 * QP_NS_PER_S, 100), -EINVAL);
	}
	assert_int_equal(qp_ratetable_nslots(r), 16);
	assert_int_equal(qp_ratetable_heartbeat_ns(r), 123456789);
	assert_int_equal(qp_ratetable_epoch(r), qp_ratetable_epoch(w));
	assert_int_equal(qp_ratetable_lookup(r, 0x000222, &hint, &e), 0);
	assert_int_equal(hint, (uint32_t)b);
	assert_int_equal(e.rate_bps, 40 * QP_MBPS);
	assert_int_equal(e.cap_bytes, 6000);
	assert_int_equal(e.flags, QP_RATE_F_CREDITS);
	assert_int_equal(e.credit_bytes, 12288);
	assert_int_equal(e.updated_ns, 4000);
	assert_int_equal(e.gen, 1);
	assert_int_equal(qp_ratetable_lookup(r, 0x000111, &hint, &e), 0);
	assert_int_equal(e.rate_bps, 2500 * QP_MBPS);
	assert_int_equal(qp_ratetable_lookup(r, 0x000333, &hint, &e), -ENOENT);

	/* Re-assigning a QPN starts a new generation: rate and credits back to 0. */
	assert_int_equal(qp_ratetable_assign(w, 0x000222), b);
	assert_int_equal(qp_ratetable_lookup(r, 0x000222, &hint, &e), 0);
	assert_int_equal(e.gen, 2);
	assert_int_equal(e.credit_bytes, 0);
	assert_int_equal(e.cap_bytes, 0);
	assert_int_equal(qp_ratetable_release(w, (uint32_t)b), 0);
	assert_int_equal(qp_ratetable_lookup(r, 0x000222, &hint, &e), -ENOENT);

	/* A reader cannot write; the writer rejects bad input without touching the table. */
	assert_int_equal(qp_ratetable_set(r, 0, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(qp_ratetable_assign(w, 0x1000000), -EINVAL);
	assert_int_equal(qp_ratetable_set(w, 16, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(qp_ratetable_set(w, (uint32_t)b, 1, 0, 0, 0), -EINVAL); /* released */
	assert_int_equal(qp_ratetable_read(r, 16, &e), -EINVAL);
	qp_ratetable_close(r);
	qp_ratetable_close(w);
	assert_int_equal(qp_ratetable_unlink(where), 0);
	assert_int_equal(qp_ratetable_open(where, &r, err, sizeof(err)), -ENOENT);
	print_message("after unlink: %s\n", err);
	assert_non_null(strstr(err, "no agent"));
}

static void test_round_trip_file(void **state)
{
	char where[128];
	(void)state;
	path_in_dir(where, sizeof(where), "rates");
	round_trip(where);
}

static void test_round_trip_shm(void **state)
{
	char where[64];
	(void)state;
	snprintf(where, sizeof(where), "/qpace-test-rt-%ld", (long)getpid());
	round_trip(where);
}

static void test_full_table(void **state)
{
	struct qp_ratetable *w;
	char err[200];
	(void)state;

	assert_int_equal(qp_ratetable_create_mem(3, &w, err, sizeof(err)), 0);
	for (uint32_t q = 1; q <= 3; q++)
		assert_true(qp_ratetable_assign(w, q) >= 0);
	assert_int_equal(qp_ratetable_assign(w, 4), -ENOSPC);
	assert_int_equal(qp_ratetable_release(w, 1), 0);
	assert_int_equal(qp_ratetable_assign(w, 4), 1);
	qp_ratetable_close(w);
	assert_int_equal(qp_ratetable_create_mem(QP_RATETABLE_MAX_SLOTS + 1, &w, err,
						 sizeof(err)), -EINVAL);
	print_message("%s\n", err);
}

/* ---- concurrency: every field of the slot is a function of one counter k ---- */

struct writer_arg {
	struct qp_ratetable *t;
	uint32_t slot;
	unsigned pause;
	atomic_bool stop;
	uint64_t rounds;  /* written by the writer when it stops */
};

static void *writer_main(void *p)
{
	struct writer_arg *a = p;
	uint64_t k;

	for (k = 1; !atomic_load_explicit(&a->stop, memory_order_relaxed); k++) {
		qp_ratetable_set(a->t, a->slot, k * 1000, k * 3, (uint32_t)(k & 0xff), k * 7);
		qp_ratetable_grant(a->t, a->slot, 3000, k * 7); /* credits = 3 * rate */
		/* A pause between updates (the agent writes at most ~1M times a second), so
		 * the reader gets through between writes as well as colliding with them. */
		for (volatile unsigned i = 0; i < a->pause; i++)
			;
	}
	a->rounds = k - 1;
	return NULL;
}

/* The reader runs until it has seen 20000 distinct values or 3 s have passed (a loaded
 * machine time-slices the two threads instead of running them side by side). */
static void test_concurrent_no_torn_slot(void **state)
{
	char where[128], err[200];
	struct qp_ratetable *w, *r;
	struct writer_arg arg = { .pause = 200 };
	struct qp_rate_entry e;
	pthread_t th;
	uint64_t reads = 0, busy = 0, distinct = 0, last_rate = 0, torn = 0;
	qp_time_ns until = qp_now_ns() + 3 * QP_NS_PER_S;
	(void)state;

	path_in_dir(where, sizeof(where), "rates-mt");
	assert_int_equal(qp_ratetable_create(where, 64, &w, err, sizeof(err)), 0);
	arg.t = w;
	arg.slot = (uint32_t)qp_ratetable_assign(w, 0x42);
	assert_int_equal(qp_ratetable_open(where, &r, err, sizeof(err)), 0);
	atomic_init(&arg.stop, false);
	assert_int_equal(pthread_create(&th, NULL, writer_main, &arg), 0);
	while (distinct < 20000 && ((reads & 1023) || qp_now_ns() < until)) {
		int rc = qp_ratetable_read(r, arg.slot, &e);
		uint64_t k;
		bool ok;

		reads++;
		if (rc == -EAGAIN) {
			busy++;
			continue;
		}
		assert_int_equal(rc, 0);
		/* Written as one unit: rate = k*1000, cap = k*3, flags = k&0xff, updated = k*7, and the
		 * grant of the same k either applied (credits = 3*rate) or not yet (3*rate-3000). */
		k = e.rate_bps / 1000;
		ok = e.rate_bps == k * 1000 && e.cap_bytes == k * 3 && e.flags == (k & 0xff) &&
		     e.updated_ns == k * 7 &&
		     (e.credit_bytes == 3 * e.rate_bps ||
		      (k > 0 && e.credit_bytes == 3 * e.rate_bps - 3000));
		torn += !ok;
		if (e.rate_bps != last_rate) {
			assert_true(e.rate_bps > last_rate); /* never goes back */
			distinct++;
			last_rate = e.rate_bps;
		}
	}
	atomic_store(&arg.stop, true);
	pthread_join(th, NULL);
	assert_int_equal(qp_ratetable_read(r, arg.slot, &e), 0);
	print_message("reads %llu, busy %llu, distinct values seen %llu, torn %llu; writer "
		      "rounds %llu, final rate %llu\n",
		      (unsigned long long)reads, (unsigned long long)busy,
		      (unsigned long long)distinct, (unsigned long long)torn,
		      (unsigned long long)arg.rounds, (unsigned long long)e.rate_bps);
	assert_int_equal(torn, 0);
	assert_int_equal(e.rate_bps, arg.rounds * 1000);
	assert_int_equal(e.credit_bytes, arg.rounds * 3000);
	assert_true(distinct >= 100); /* the reader really raced the writer */
	qp_ratetable_close(r);
	qp_ratetable_close(w);
}

/* ---- malformed segments ---- */

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* The bytes of a freshly created 8-slot table. */
static void good_image(uint8_t *img, size_t len)
{
	char where[128], err[200];
	struct qp_ratetable *w;
	FILE *f;

	path_in_dir(where, sizeof(where), "good");
	assert_int_equal(qp_ratetable_create(where, 8, &w, err, sizeof(err)), 0);
	assert_int_equal(qp_ratetable_assign(w, 7), 0);
	qp_ratetable_close(w);
	f = fopen(where, "rb");
	assert_non_null(f);
	assert_int_equal(fread(img, 1, len, f), len);
	fclose(f);
}

/* Write @len bytes of a good 8-slot table, patched by @patch; expect @rc and @word. */
static void expect_open_fails(size_t len, void (*patch)(struct qp_rate_hdr *), int rc,
			      const char *word)
{
	char where[128], err[200] = "";
	static uint8_t img[64 + 8 * 64];
	struct qp_ratetable *r = NULL;

	good_image(img, sizeof(img));
	if (patch)
		patch((struct qp_rate_hdr *)img);
	path_in_dir(where, sizeof(where), "bad");
	write_file(where, img, len);
	assert_int_equal(qp_ratetable_open(where, &r, err, sizeof(err)), rc);
	if (rc == 0) {
		assert_non_null(r);
		qp_ratetable_close(r);
		return;
	}
	assert_null(r);
	print_message("%zu bytes: %s\n", len, err);
	assert_non_null(strstr(err, word));
	assert_non_null(strstr(err, where)); /* names the segment */
}

static void bad_magic(struct qp_rate_hdr *h)
{
	atomic_store(&h->magic, 0x12345678u);
}

static void bad_version(struct qp_rate_hdr *h)
{
	h->version = 9;
}

static void bad_slot_size(struct qp_rate_hdr *h)
{
	h->slot_bytes = 128;
}

static void huge_nslots(struct qp_rate_hdr *h)
{
	h->nslots = 0xffffffffu;
}

static void more_slots_than_bytes(struct qp_rate_hdr *h)
{
	h->nslots = 9;
}

static void test_malformed_rejected(void **state)
{
	const size_t full = 64 + 8 * 64;
	uint32_t n = 0;
	char err[200];
	uint8_t small[32] = { 0 };
	(void)state;

	expect_open_fails(full, NULL, 0, ""); /* control: the good image opens */
	expect_open_fails(full - 1, NULL, -EBADMSG, "truncated");
	expect_open_fails(100, NULL, -EBADMSG, "truncated");
	expect_open_fails(63, NULL, -EBADMSG, "smaller than its 64-byte header");
	expect_open_fails(0, NULL, -EBADMSG, "smaller than its 64-byte header");
	expect_open_fails(full, bad_magic, -EBADMSG, "magic 0x12345678");
	expect_open_fails(full, bad_version, -EPROTO, "version 9");
	expect_open_fails(full, bad_slot_size, -EBADMSG, "slot 128 bytes");
	expect_open_fails(full, huge_nslots, -EBADMSG, "accepted 1..65536");
	expect_open_fails(full, more_slots_than_bytes, -EBADMSG, "truncated");
	/* The pure validator on a buffer. */
	assert_int_equal(qp_ratetable_validate(small, sizeof(small), &n, err, sizeof(err)),
			 -EBADMSG);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_file),
		cmocka_unit_test(test_round_trip_shm),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_concurrent_no_torn_slot),
		cmocka_unit_test(test_malformed_rejected),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
