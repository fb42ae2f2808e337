/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Key files: the 128-bit SipHash key that tags feedback (qpace/fb_auth.h), read by qpaced
 * (--key) and by qpace-probe (key=). */
#ifndef QPACE_KEYFILE_H
#define QPACE_KEYFILE_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/siphash.h"

/* Read @path: 32 hex digits (whitespace around them ignored), nothing else; only its first
 * 127 bytes are read. 0, or -errno (cannot open), -EIO (cannot read) or -EINVAL (not 32
 * hex digits) with a message naming the file. Calls @warn (when not NULL) with one line
 * when the file is readable by group or others. @key is written in full only on success. */
int qp_keyfile_read(const char *path, uint8_t key[QP_SIPHASH_KEY_BYTES],
		    void (*warn)(const char *line), char *err, size_t errlen);

#endif
