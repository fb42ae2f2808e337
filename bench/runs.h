/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Runs built on the incast runner: compare (one incast per algorithm: `make demo`) and
 * sweep (over sender counts and sizes). Each incast runs in a child process, so one run's
 * switch, sockets and memory never leak into the next, and a crash costs one row. */
#ifndef BENCH_RUNS_H
#define BENCH_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include "bench.h"
#include "incast.h"

/* Split a comma list into at most @max items (pointers into @buf, a copy of @list).
 * Returns the count, or -EINVAL with @err for an empty item or too many. */
int runs_split(const char *list, char *buf, size_t buflen, const char **items, size_t max,
	       const char *what, char *err, size_t errlen);
/* mkdir -p. 0 or -errno with @err. */
int runs_mkdirs(const char *dir, char *err, size_t errlen);
/* One incast in a child process; its result comes back through a pipe. 0 or -errno with @err
 * (the child's own error line is passed back). */
int runs_incast_isolated(const struct bench_conf *c, const char *algo, uint64_t senders,
			 uint64_t bytes, const char *dir, struct incast_result *out, char *err,
			 size_t errlen);

#endif
