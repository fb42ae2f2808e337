/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A scratch directory for a test binary: made in setup, removed (with its contents) in
 * teardown. */
#ifndef QPACE_TEST_TMPDIR_H
#define QPACE_TEST_TMPDIR_H

#include <stddef.h>

/* mkdtemp("/tmp/qpace-<tag>-XXXXXX") into buf; 0 or -1. */
int tmpdir_make(char *buf, size_t len, const char *tag);
/* rm -rf dir (only below /tmp/qpace-); 0 or -1. */
int tmpdir_remove(const char *dir);
/* @text written to @dir/@name: the path (one of 8 static buffers, reused in turn), or
 * NULL when it cannot be written. */
const char *tmpdir_file(const char *dir, const char *name, const char *text);

#endif
