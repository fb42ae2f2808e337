/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The release every program reports (`PROG --version`) and the manual pages carry. It
 * comes from one place, the top-level VERSION file, which the Makefile passes to
 * lib/version.c alone (QPACE_VERSION; `make QPACE_VERSION=...` overrides it), so a new
 * version rebuilds one object. */
#ifndef QPACE_VERSION_H
#define QPACE_VERSION_H

/* "0.1.0" */
const char *qp_version(void);

#endif
