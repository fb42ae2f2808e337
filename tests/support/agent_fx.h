/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The agent-core fixture for unit tests: an agent on an in-memory rate table with
 * injected time (T0), its log kept, and helpers to register QPs, read their slots back and
 * feed it feedback datagrams. One fixture at a time (afx_new returns a static). */
#ifndef QPACE_TEST_AGENT_FX_H
#define QPACE_TEST_AGENT_FX_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/agent.h"
#include "qpace/feedback.h"
#include "qpace/ratetable.h"

#define HOST_A 0x0a000001u  /* 10.0.0.1: this agent's host */
#define HOST_B 0x0a000002u  /* 10.0.0.2: the peer */
#define SWITCH 0x0a0000feu  /* 10.0.0.254 */
#define T0 1000000000ULL

struct afx {
	struct qp_ratetable *rt;
	struct agent *a;
	char lastlog[400];
	unsigned logs;
	unsigned wants;   /* INT wishes afx_register took from the agent's queue */
};

/* A fresh agent with @p (its log set to the fixture's), created at T0. */
struct afx *afx_new(struct agent_params *p);
void afx_free(struct afx *f);
/* Defaults, 16 QPs, algorithm @cc, feedback allowed from 10.0.0.0/24. */
struct agent_params afx_params(const char *cc);
/* HOST_A's QP @qpn towards HOST_B's @peer_qpn: MTU 1000, 10 Gb/s, 10 us. */
struct agent_qp_reg afx_reg(uint32_t qpn, uint32_t peer_qpn);
/* Register (owner 1, pid 4242, at T0) or fail the test. */
void afx_register(struct afx *f, const struct agent_qp_reg *r);
/* @qpn's rate-table slot (fails the test when absent). */
struct qp_rate_entry afx_slot(struct afx *f, uint32_t qpn);
size_t afx_encode(uint8_t *buf, const struct fb_msg *m);
/* Encode @m and hand it to the agent as a datagram from @src:4792. */
unsigned afx_feed(struct afx *f, const struct fb_msg *m, uint32_t src, qp_time_ns now);

#endif
