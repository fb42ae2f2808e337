/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's out-of-band exchange over TCP (perftest 4.5, src/perftest_communication.c,
 * without -R), so qpace-bench and perftest's programs connect to each other. Every
 * message is a fixed size; in each exchange the client writes first and the server reads
 * first. A test's exchanges, in order:
 *
 *   version      16 bytes: the version string, NUL-padded ("6.06"; a peer below 5.70 is
 *                refused, as perftest refuses it)
 *   sys data     4 bytes: the cycle buffer (page size), big-endian int; then 4 bytes: the
 *                cache line size. Each side takes the larger of the two.
 *   MTU          2 bytes: the port's active MTU as IB's enum in decimal ('1' = 256 ...
 *                '5' = 4096) and a NUL; each side takes the smaller
 *   key          108 bytes, text (the GID form RoCE always uses):
 *                  "%04x:%04x:%06x:%06x:%08x:%016llx:" LID, out_reads (READs/atomics the
 *                  sender serves at once: the peer's max_rd_atomic), QPN, PSN, rkey, the
 *                  exposed region's address, then the GID as 16 "%02x:" and
 *                  "%08x:" (SRQ number, 0), then a NUL
 *                exchanged once per QP, then per command a fixed number of times more as
 *                a barrier ("hand shake")
 *   BW report    after a bandwidth test: size, iterations, peak BW, average BW, message
 *                rate, each 8 bytes big-endian (the doubles' IEEE bits), each its own
 *                exchange
 *   done         5 bytes "done\0", written by each side at the end, never read
 *
 * Decoders check the length first, read fixed positions only, and write *out only on
 * success: -EBADMSG for a message that is not what its place says (a field not hex, a
 * colon missing, no NUL, an MTU outside 1..5, a version that is not digits and one dot, a
 * non-finite double). Nothing else in qpace parses these bytes.
 */
#ifndef QPACE_PT_WIRE_H
#define QPACE_PT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define PT_VERSION "6.06"           /* perftest 4.5's (configure.ac), what qpace speaks */
#define PT_VERSION_MIN_X100 570     /* a peer older than 5.70 is refused */
#define PT_VERSION_LEN 16
#define PT_SYS_LEN 4
#define PT_MTU_LEN 2
#define PT_KEY_LEN 108
#define PT_REPORT_FIELD_LEN 8
#define PT_DONE_LEN 5

struct pt_key {
	uint16_t lid;
	uint16_t out_reads;
	uint32_t qpn;                /* 24 bits */
	uint32_t psn;                /* 24 bits */
	uint32_t rkey;
	uint64_t vaddr;
	uint8_t gid[16];
	uint32_t srqn;
};

/* The bandwidth report a client sends its server (perftest's struct bw_report_data). */
struct pt_bw_report {
	uint64_t size;
	uint64_t iters;
	double bw_peak;
	double bw_avg;
	double msg_rate;
};

/* @ver (at most 15 characters) NUL-padded into 16 bytes: 16, or -EINVAL. */
int pt_version_encode(uint8_t out[PT_VERSION_LEN], const char *ver);
/* The peer's version, x100 ("6.06" -> 606): 16, -EMSGSIZE, or -EBADMSG. */
int pt_version_decode(unsigned *x100, const uint8_t *buf, size_t len);

void pt_u32_encode(uint8_t out[PT_SYS_LEN], uint32_t v);
int pt_u32_decode(uint32_t *v, const uint8_t *buf, size_t len);

/* MTU bytes (256..4096, a power of two) as perftest's 2 bytes: 2, or -EINVAL. */
int pt_mtu_encode(uint8_t out[PT_MTU_LEN], uint32_t mtu_bytes);
/* -> MTU bytes: 2, -EMSGSIZE, -EBADMSG. */
int pt_mtu_decode(uint32_t *mtu_bytes, const uint8_t *buf, size_t len);

/* 108 bytes: PT_KEY_LEN, or -EINVAL (a QPN or PSN beyond 24 bits). */
int pt_key_encode(uint8_t out[PT_KEY_LEN], const struct pt_key *k);
/* PT_KEY_LEN, -EMSGSIZE or -EBADMSG. */
int pt_key_decode(struct pt_key *out, const uint8_t *buf, size_t len);

/* One report field's 8 bytes: the unsigned value, or a double's IEEE bits, big-endian. */
void pt_u64_encode(uint8_t out[PT_REPORT_FIELD_LEN], uint64_t v);
int pt_u64_decode(uint64_t *v, const uint8_t *buf, size_t len);
void pt_double_encode(uint8_t out[PT_REPORT_FIELD_LEN], double v);
int pt_double_decode(double *v, const uint8_t *buf, size_t len);

#endif
