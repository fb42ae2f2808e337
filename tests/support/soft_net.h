/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Helpers for tests of the soft backend over real loopback sockets: hosts through the QP
 * API, a loop that progresses several contexts, and a qpace-switch child process. */
#ifndef QPACE_TEST_SOFT_NET_H
#define QPACE_TEST_SOFT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "qpace/soft.h"

struct soft_side {
	struct qp_ctx *ctx;
	struct qp *qp;
	struct qp_mr *mr;
	uint8_t *buf;
	size_t len;
};

/* A UDP port base for this test process: 8 consecutive ports, likely free. */
unsigned soft_port_base(unsigned salt);
/* Context with @opts (rate table none, logs kept in soft_last_log), a region of @len bytes
 * with @access, and one QP with @attr (NULL: non-blocking, signal all). Fails the test on
 * error. */
void soft_side_open(struct soft_side *s, const char *opts, size_t len, unsigned access,
		    const struct qp_attr *attr);
/* The same, pacing from an in-process rate table (NULL: none). */
void soft_side_open_rates(struct soft_side *s, const char *opts, size_t len, unsigned access,
			  const struct qp_attr *attr, struct qp_ratetable *rates);
void soft_side_close(struct soft_side *s);
/* Exchange connection data in memory: a exposes nothing, b exposes its region (and the
 * other way round with @both). */
void soft_connect(struct soft_side *a, struct soft_side *b);
/* Progress every context until done(arg) or @limit_ns of real time; true when done. */
bool soft_run(struct qp_ctx **ctx, int n, bool (*done)(void *arg), void *arg,
	      qp_time_ns limit_ns);
/* Run until @s has one completion (polled into wc). */
bool soft_wait_wc(struct soft_side *s, struct qp_ctx **all, int n, struct qp_wc *wc,
		  qp_time_ns limit_ns);
/* The last line a context logged (empty if none). */
extern char soft_last_log[256];

/* Start build/bin/qpace-switch (found next to this test binary) with @args (NULL-ended);
 * returns its pid, or -1 when the binary is missing. Waits until its ports are bound. */
pid_t soft_switch_start(const char *const *args);
/* SIGTERM, wait; returns its exit status (or -1). Safe with pid <= 0. */
int soft_switch_stop(pid_t pid);
/* Counters @keys[0..nkeys) of ports 0..nports-1 of switch 0 from a --stats-json file:
 * v[port * nkeys + k], -1 where the file has none. 0, or a negative errno with a message. */
int soft_switch_port_counters(const char *json_path, const char *const *keys, unsigned nkeys,
			      unsigned nports, long long *v, char *err, size_t errlen);

#endif
