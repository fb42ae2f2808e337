/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for soft-backend tests over loopback (see soft_net.h). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "soft_net.h"

char soft_last_log[256];

static void keep_log(void *arg, const char *line)
{
	(void)arg;
	snprintf(soft_last_log, sizeof(soft_last_log), "%s", line);
}

unsigned soft_port_base(unsigned salt)
{
	return 21000u + ((unsigned)getpid() * 7u + salt * 131u) % 2000u * 16u;
}

void soft_side_open(struct soft_side *s, const char *opts, size_t len, unsigned access,
		    const struct qp_attr *attr)
{
	soft_side_open_rates(s, opts, len, access, attr, NULL);
}

void soft_side_open_rates(struct soft_side *s, const char *opts, size_t len, unsigned access,
			  const struct qp_attr *attr, struct qp_ratetable *rates)
{
	struct qp_ctx_attr ca = { .options = opts, .rate_table = "", .log = keep_log,
				  .rate_table_mem = rates };
	struct qp_attr dflt = { .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL, .timeout = 10,
				.gate = { .line_bps = QP_GATE_MAX_BPS,
					  .safe_permille = QP_GATE_MAX_PERMILLE,
					  .chunk_bytes = 64 << 10 } };
	char err[200];

	memset(s, 0, sizeof(*s));
	if (qp_ctx_open_ops(&qp_soft_ops, &ca, &s->ctx, err, sizeof(err)))
		fail_msg("open '%s': %s", opts, err);
	s->len = len;
	s->buf = calloc(1, len);
	assert_non_null(s->buf);
	assert_int_equal(qp_mr_reg(s->ctx, s->buf, len, access, &s->mr), 0);
	if (qp_create(s->ctx, attr ? attr : &dflt, &s->qp, err, sizeof(err)))
		fail_msg("qp_create: %s", err);
}

void soft_side_close(struct soft_side *s)
{
	qp_ctx_close(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

void soft_connect(struct soft_side *a, struct soft_side *b)
{
	struct qp_conn_info ia, ib;
	char err[200];

	qp_local_info(a->qp, a->mr, &ia);
	qp_local_info(b->qp, b->mr, &ib);
	if (qp_connect(a->qp, &ib, err, sizeof(err)) || qp_connect(b->qp, &ia, err, sizeof(err)))
		fail_msg("connect: %s", err);
}

bool soft_run(struct qp_ctx **ctx, int n, bool (*done)(void *arg), void *arg,
	      qp_time_ns limit_ns)
{
	qp_time_ns end = qp_now_ns() + limit_ns;

	while (!done(arg)) {
		qp_time_ns now = qp_now_ns();

		if (now > end)
			return false;
		for (int i = 0; i < n; i++)
			assert_true(qp_ctx_progress(ctx[i], now) >= 0);
	}
	return true;
}

struct wc_wait {
	struct soft_side *s;
	struct qp_wc *wc;
};

static bool got_wc(void *arg)
{
	struct wc_wait *w = arg;

	return qp_poll(w->s->qp, w->wc, 1) == 1;
}

bool soft_wait_wc(struct soft_side *s, struct qp_ctx **all, int n, struct qp_wc *wc,
		  qp_time_ns limit_ns)
{
	struct wc_wait w = { s, wc };

	return soft_run(all, n, got_wc, &w, limit_ns);
}

static bool switch_path(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return false;
	self[n] = 0;
	slash = strrchr(self, '/');   /* BUILD/tests/test_x -> BUILD/bin/qpace-switch */
	if (!slash)
		return false;
	*slash = 0;
	snprintf(out, len, "%s/../bin/qpace-switch", self);
	return access(out, X_OK) == 0;
}

pid_t soft_switch_start(const char *const *args)
{
	char path[PATH_MAX + 32];
	const char *argv[64];
	int n = 0;
	pid_t pid;

	if (!switch_path(path, sizeof(path)))
		return -1;
	argv[n++] = path;
	for (int i = 0; args[i] && n < 62; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		execv(path, (char *const *)argv);
		_exit(127);
	}
	if (pid > 0)
		nanosleep(&(struct timespec){ .tv_nsec = 300 * 1000 * 1000 }, NULL);
	return pid;
}

int soft_switch_stop(pid_t pid)
{
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct port_walk {
	const char *const *keys;
	unsigned nkeys, nports;
	long long *v;
};

static void port_value(void *arg, const char *path, const struct jsonr_val *val)
{
	struct port_walk *w = arg;
	unsigned i;
	int used = 0;

	if (sscanf(path, "switches.0.ports.%u.%n", &i, &used) != 1 || !used || i >= w->nports ||
	    !val->is_u64)
		return;
	for (unsigned k = 0; k < w->nkeys; k++)
		if (!strcmp(path + used, w->keys[k]))
			w->v[i * w->nkeys + k] = (long long)val->u64;
}

int soft_switch_port_counters(const char *json_path, const char *const *keys, unsigned nkeys,
			      unsigned nports, long long *v, char *err, size_t errlen)
{
	struct port_walk w = { keys, nkeys, nports, v };

	for (unsigned i = 0; i < nkeys * nports; i++)
		v[i] = -1;
	return jsonr_walk_file(json_path, port_value, &w, err, errlen);
}
