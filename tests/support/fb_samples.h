/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Feedback messages for tests: one of every type and shape (qpace/feedback.h), shared by the
 * codec's test and the agent's feedback-to-cc mapping test. */
#ifndef QPACE_TEST_FB_SAMPLES_H
#define QPACE_TEST_FB_SAMPLES_H

#include <stddef.h>
#include "qpace/feedback.h"

#define FB_SAMPLES_MAX 16

/* The flow every sample is about: 10.0.0.1 -> 10.0.0.2, sport 0xc0de, dest QP 0xabcd. */
extern const struct fb_flow fb_sample_flow;
/* The IPv6 one (FB_F_IPV6): fe80::211:22ff:fe33:4455 -> ...:4466, sport 0xc0df, QP 0xabce. */
extern const struct fb_flow fb_sample_flow6;

/* An INT report with @nhops hops (100 + i, port 7 + i, ...; @nhops may be out of range). */
struct fb_msg fb_sample_int(unsigned nhops);

/* Into @out (FB_SAMPLES_MAX entries), *@n of them: [0..4] INT with 1..5 hops, [5] ECHO
 * (3 hops), [6] NOTICE, [7..10] LEVEL 0..3, [11] LEVEL ack, [12] CREDIT, [13] WANT,
 * then IPv6 flows (FB_F_IPV6): [14] INT with 2 hops, [15] LEVEL 3. */
void fb_samples(struct fb_msg *out, size_t *n);

#endif
