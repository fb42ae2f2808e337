/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An ICRC computed independently of lib/frame.c (no zlib, no frame_parsed): a bitwise
 * reflected CRC-32 over a masked copy of the frame, located by reading the raw IPv4
 * header and UDP length fields. For checking frames built by qpace and captured from
 * kernel rxe. */
#ifndef QPACE_TEST_ICRC_REF_H
#define QPACE_TEST_ICRC_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ICRC of the RoCEv2 frame @f (Ethernet first, @len bytes); false when @f is not an
 * Ethernet/IPv4/UDP frame long enough to hold one. */
bool icrc_ref(const uint8_t *f, size_t len, uint32_t *icrc);
/* The ICRC stored in the frame's last 4 UDP bytes matches icrc_ref. */
bool icrc_ref_ok(const uint8_t *f, size_t len);

#endif
