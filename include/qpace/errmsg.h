/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One-line error messages into a caller's buffer (the anet.c convention: every call that
 * can fail takes char *err, size_t errlen). */
#ifndef QPACE_ERRMSG_H
#define QPACE_ERRMSG_H

#include <stddef.h>

/* Format into err (when err and errlen are set) and return rc, so a failure path is
 * `return qp_errmsg(-EINVAL, err, errlen, "...", ...);`. */
int qp_errmsg(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
