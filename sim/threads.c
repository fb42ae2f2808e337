/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A split run's second thread (sim_priv.h): lane 1, the switches, runs each window on it
 * while the caller's thread runs lane 0, the hosts. The two meet at the window's end;
 * between windows only the caller's thread touches either lane (exchange, sync timers),
 * so the lanes need no locks of their own.
 *
 * The meeting is a generation count under a mutex and a condition variable: a window is
 * ~a microsecond of simulated time, milliseconds of work at the papers' scale, so a
 * futex wake-up (~tens of microseconds) is lost in it; a short spin first catches the
 * common case where the other lane finishes within a few microseconds. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "sim_priv.h"

#define SPIN_TRIES 2000u              /* pause loops: some microseconds */

struct sim_threads {
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t go_cv, done_cv;
	atomic_uint_fast64_t go, done;    /* windows started, finished by lane 1 */
	atomic_bool quit;
	qp_time_ns until;
	struct sim_lane *l;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static bool reached(struct sim_threads *t, atomic_uint_fast64_t *v, uint64_t want,
		    bool quit_too)
{
	return atomic_load_explicit(v, memory_order_acquire) >= want ||
	       (quit_too && atomic_load_explicit(&t->quit, memory_order_acquire));
}

/* Until *@v reaches @want (or, @quit_too, the thread is told to quit): spin a while,
 * then sleep on @cv. */
static void wait_for(struct sim_threads *t, atomic_uint_fast64_t *v, uint64_t want,
		     pthread_cond_t *cv, bool quit_too)
{
	for (unsigned i = 0; i < SPIN_TRIES; i++) {
		if (reached(t, v, want, quit_too))
			return;
		cpu_relax();
	}
	pthread_mutex_lock(&t->mu);
	while (!reached(t, v, want, quit_too))
		pthread_cond_wait(cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
}

static void bump(struct sim_threads *t, atomic_uint_fast64_t *v, pthread_cond_t *cv)
{
	pthread_mutex_lock(&t->mu);
	atomic_fetch_add_explicit(v, 1, memory_order_release);
	pthread_cond_signal(cv);
	pthread_mutex_unlock(&t->mu);
}

static void *lane_thread(void *arg)
{
	struct sim_threads *t = arg;

	for (uint64_t w = 1;; w++) {
		wait_for(t, &t->go, w, &t->go_cv, true);
		if (atomic_load_explicit(&t->quit, memory_order_acquire))
			return NULL;
		sim_lane_window(t->l, t->until);
		bump(t, &t->done, &t->done_cv);
	}
}

int sim_threads_start(struct sim *s)
{
	struct sim_threads *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->l = &s->lane[1];
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->go_cv, NULL);
	pthread_cond_init(&t->done_cv, NULL);
	if (pthread_create(&t->t, NULL, lane_thread, t)) {
		pthread_cond_destroy(&t->go_cv);
		pthread_cond_destroy(&t->done_cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return -EAGAIN;
	}
	s->th = t;
	return 0;
}

void sim_threads_window(struct sim *s, qp_time_ns until)
{
	struct sim_threads *t = s->th;
	uint64_t w = atomic_load_explicit(&t->go, memory_order_relaxed) + 1;

	t->until = until;
	bump(t, &t->go, &t->go_cv);
	sim_lane_window(&s->lane[0], until);
	wait_for(t, &t->done, w, &t->done_cv, false);
}

void sim_threads_stop(struct sim *s)
{
	struct sim_threads *t = s->th;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	atomic_store_explicit(&t->quit, true, memory_order_release);
	pthread_cond_signal(&t->go_cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->t, NULL);
	pthread_cond_destroy(&t->go_cv);
	pthread_cond_destroy(&t->done_cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
	s->th = NULL;
}
