/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two connected RC QPs (A = side 0, B = side 1) on an rc_wire, each with memory regions
 * the other may WRITE to, for the RC unit tests. */
#ifndef QPACE_TEST_RC_PAIR_H
#define QPACE_TEST_RC_PAIR_H

#include "rc_wire.h"

#define RC_PAIR_MEMS 4

struct rc_pair_mem {
	uint8_t *buf;
	size_t len;
	uint32_t rkey;
	unsigned access;           /* QP_ACCESS_REMOTE_* */
};

struct rc_pair_side {
	struct rc_qp *qp;
	struct rc_pair_mem mem[RC_PAIR_MEMS];
	int nmem;
};

struct rc_pair {
	struct rc_pair_side s[2];
	struct rc_wire w;
};

/* Create both QPs from @base (qpn, sq_psn, mr_find are set here: A 0x11 / B 0x22, PSNs
 * A 0xfffff0 (wraps soon) / B 0x123456), connect them at @mtu and wire them. */
void rc_pair_open(struct rc_pair *pr, const struct rc_params *base, uint32_t mtu,
		  const struct rc_wire_params *wp);
/* The same with per-side parameters. */
void rc_pair_open2(struct rc_pair *pr, const struct rc_params *pa, const struct rc_params *pb,
		   uint32_t mtu, const struct rc_wire_params *wp);
/* The same, connected as verbs users connect at RTS: each side's max_rd_atomic lowered to
 * the other's max_dest_rd_atomic (struct rc_conn). */
void rc_pair_open_rts(struct rc_pair *pr, const struct rc_params *pa,
		      const struct rc_params *pb, uint32_t mtu, const struct rc_wire_params *wp);
void rc_pair_close(struct rc_pair *pr);
/* Register a region of @len zeroed bytes on side @i; returns its rkey. remote_write gives
 * it every remote access (write, read, atomic), false none. */
uint32_t rc_pair_mem(struct rc_pair *pr, int i, size_t len, bool remote_write);
/* The same with the QP_ACCESS_REMOTE_* rights in @access. */
uint32_t rc_pair_mem_access(struct rc_pair *pr, int i, size_t len, unsigned access);
/* The region's address as the peer names it. */
uint64_t rc_pair_va(const struct rc_pair *pr, int i, uint32_t rkey);
uint8_t *rc_pair_buf(const struct rc_pair *pr, int i, uint32_t rkey);

/* Post helpers: abort the test on failure. */
void rc_pair_post(struct rc_pair *pr, int i, enum qp_opcode op, uint64_t wr_id,
		  const void *buf, uint32_t len, uint64_t remote_addr, uint32_t rkey,
		  uint32_t imm);
void rc_pair_recv(struct rc_pair *pr, int i, uint64_t wr_id, void *buf, uint32_t len);
/* An atomic (QP_OP_CMP_SWAP: @compare_add compared, @swap swapped in; QP_OP_FETCH_ADD:
 * @compare_add added) on the 8 bytes at @remote_addr; the old value into *@result. */
void rc_pair_atomic(struct rc_pair *pr, int i, enum qp_opcode op, uint64_t wr_id,
		    uint64_t *result, uint64_t remote_addr, uint32_t rkey, uint64_t compare_add,
		    uint64_t swap);
/* Poll exactly one completion from side i (NULL-safe: returns false when none). */
bool rc_pair_poll1(struct rc_pair *pr, int i, struct qp_wc *wc);
/* Run until side i has a completion (polled into wc) or @limit_ns of time passes. */
bool rc_pair_wait(struct rc_pair *pr, int i, struct qp_wc *wc, qp_time_ns limit_ns);

#endif
