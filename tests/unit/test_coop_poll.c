/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Cooperative polling: qp_block_until sleeps until its deadline or until its descriptor is
 * readable, whichever comes first; a soft endpoint with nothing due blocks in ep_idle (and
 * wakes for its next due event, the host's heartbeat here) instead of spinning, and spins
 * when --spin covers its next event. Real time, with margins for a loaded machine: they
 * check that it blocks and that it wakes, not how late. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/time.h"
#include "endpoint.h"
#include "soft_net.h"

#define MS QP_NS_PER_MS

static qp_time_ns thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (qp_time_ns)ts.tv_sec * QP_NS_PER_S + (qp_time_ns)ts.tv_nsec;
}

static void test_block_until_timer(void **state)
{
	qp_time_ns t0 = qp_now_ns(), c0 = thread_cpu_ns(), t1;
	(void)state;

	assert_false(qp_block_until(-1, t0 + 20 * MS, t0));
	t1 = qp_now_ns();
	assert_true(t1 >= t0 + 20 * MS);                  /* not before its time */
	assert_true(t1 < t0 + 20 * MS + 500 * MS);        /* and it did wake */
	assert_true(thread_cpu_ns() - c0 < 10 * MS);      /* asleep, not spinning */
	/* a deadline already past returns at once */
	assert_false(qp_block_until(-1, t0, qp_now_ns()));
}

static int cmp_ns(const void *a, const void *b)
{
	qp_time_ns x = *(const qp_time_ns *)a, y = *(const qp_time_ns *)b;

	return x < y ? -1 : x > y;
}

/* The cost of blocking: how late a wake-up for a deadline 100 us ahead lands (printed for
 * docs/performance.md; asserted only to be bounded). */
static void test_block_until_lateness(void **state)
{
	enum { N = 400 };
	static qp_time_ns late[N];
	(void)state;

	for (int i = 0; i < N; i++) {
		qp_time_ns now = qp_now_ns(), until = now + 100 * QP_NS_PER_US;

		qp_block_until(-1, until, now);
		late[i] = qp_now_ns() - until;
	}
	qsort(late, N, sizeof(late[0]), cmp_ns);
	print_message("wake-up lateness for a 100 us timeout: p50 %.1f us, p90 %.1f us, p99 "
		      "%.1f us, max %.1f us\n", (double)late[N / 2] / 1e3,
		      (double)late[N * 9 / 10] / 1e3, (double)late[N * 99 / 100] / 1e3,
		      (double)late[N - 1] / 1e3);
	assert_true(late[N / 2] < 50 * MS);
}

static void *write_later(void *arg)
{
	int fd = *(int *)arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	if (write(fd, "x", 1) != 1)
		return NULL;
	return arg;
}

static void test_block_until_readable(void **state)
{
	int p[2];
	pthread_t th;
	qp_time_ns t0, t1;
	(void)state;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pthread_create(&th, NULL, write_later, &p[1]), 0);
	t0 = qp_now_ns();
	assert_true(qp_block_until(p[0], t0 + 30 * QP_NS_PER_S, t0));   /* woken by the byte */
	t1 = qp_now_ns();
	assert_true(t1 < t0 + 10 * QP_NS_PER_S);
	pthread_join(th, NULL);
	assert_true(qp_block_until(p[0], QP_TIME_NEVER, t1));   /* still readable: at once */
	close(p[0]);
	close(p[1]);
}

/* An endpoint on a soft host with no QP: nothing is due but the host's own timers (the
 * rate-table heartbeat every 1 ms). For 100 ms of calls to ep_idle it blocks, wakes for
 * those timers (many blocks, not one), and uses a fraction of the time as CPU; with
 * --spin 10s it never blocks. */
static void idle_for(struct endpoint *e, qp_time_ns wall, qp_time_ns *cpu)
{
	qp_time_ns end = qp_now_ns() + wall, c0 = thread_cpu_ns();

	while (qp_now_ns() < end) {
		ep_service(e);
		ep_idle(e, false);
	}
	*cpu = thread_cpu_ns() - c0;
}

static void test_endpoint_blocks(void **state)
{
	struct bench_conf c;
	struct endpoint e;
	char attach[32], err[256];
	qp_time_ns cpu;
	(void)state;

	bench_conf_defaults(&c, CMD_WRITE_BW);
	c.backend = BACKEND_SOFT;
	snprintf(attach, sizeof(attach), "127.0.0.1:%u", soft_port_base(5));
	c.attach = attach;
	c.ip = "10.0.0.9";
	if (ep_open(&e, &c, 4096, err, sizeof(err)))
		fail_msg("ep_open: %s", err);
	idle_for(&e, 100 * MS, &cpu);
	print_message("--spin 20us: %llu blocks in 100 ms, %.1f ms CPU\n",
		      (unsigned long long)e.blocks, (double)cpu / 1e6);
	assert_true(e.blocks >= 10);          /* it woke for its timers and blocked again */
	assert_true(cpu < 50 * MS);
	c.spin_ns = 10 * QP_NS_PER_S;         /* everything within the horizon: spin */
	e.blocks = 0;
	idle_for(&e, 20 * MS, &cpu);
	assert_int_equal(e.blocks, 0);
	ep_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_until_timer),
		cmocka_unit_test(test_block_until_readable),
		cmocka_unit_test(test_block_until_lateness),
		cmocka_unit_test(test_endpoint_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
