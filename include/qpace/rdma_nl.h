/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Who owns each RDMA QP on this host: the kernel's rdma netlink resource dump (NETLINK_RDMA,
 * the NLDEV client; what `rdma resource show qp` prints), uapi <rdma/rdma_netlink.h>.
 *
 *   request  RDMA_NLDEV_CMD_GET dump: every device (index, name); then per device
 *            RDMA_NLDEV_CMD_RES_QP_GET dump with RDMA_NLDEV_ATTR_DEV_INDEX (the kernel
 *            refuses the QP dump without it)
 *   reply    netlink messages, each: RDMA_NLDEV_ATTR_DEV_INDEX, _DEV_NAME, then the nest
 *            _RES_QP of nests _RES_QP_ENTRY: _PORT_INDEX, _RES_LQPN, _RES_RQPN, _RES_TYPE,
 *            _RES_STATE, and _RES_PID (a user QP) or _RES_KERN_NAME (a kernel one)
 *
 * rdma_nl_parse is pure: bytes of one received datagram in, records out; it checks every
 * length before reading (a message or attribute past the buffer is -EMSGSIZE, an
 * attribute too short for its type or a QP entry without its QPN -EBADMSG) and is fuzzed
 * (tests/fuzz/fuzz_rdma_nl.c). rdma_nl_dump_qps does the I/O.
 */
#ifndef QPACE_RDMA_NL_H
#define QPACE_RDMA_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDMA_NL_NAME_MAX 64

enum rdma_nl_has {
	RDMA_NL_HAS_PORT = 1u << 0,
	RDMA_NL_HAS_RQPN = 1u << 1,   /* connected QPs only (RC, UC) */
	RDMA_NL_HAS_TYPE = 1u << 2,
	RDMA_NL_HAS_STATE = 1u << 3,
	RDMA_NL_HAS_PID = 1u << 4,    /* a user QP */
	RDMA_NL_HAS_COMM = 1u << 5,   /* comm: the kernel's name, or /proc/PID/comm */
};

struct rdma_nl_qp {
	uint32_t dev_index;
	char dev[RDMA_NL_NAME_MAX];
	uint32_t port;
	uint32_t lqpn;                /* the local QPN */
	uint32_t rqpn;                /* the peer's QPN */
	uint8_t type;                 /* enum ib_qp_type: 2 RC, 3 UC, 4 UD, ... */
	uint8_t state;                /* enum ib_qp_state: 0 RESET .. 6 ERR */
	uint32_t pid;
	char comm[RDMA_NL_NAME_MAX];
	unsigned has;                 /* enum rdma_nl_has */
};

struct rdma_nl_dev {
	uint32_t index;
	char name[RDMA_NL_NAME_MAX];
};

struct rdma_nl_sink {
	void (*dev)(void *ctx, const struct rdma_nl_dev *d);   /* may be NULL */
	void (*qp)(void *ctx, const struct rdma_nl_qp *q);     /* may be NULL */
	void *ctx;
};

/* The request: @cmd RDMA_NLDEV_CMD_GET or _RES_QP_GET, as a dump, with the device index
 * when @dev_index >= 0. Its length, or -EMSGSIZE. */
int rdma_nl_request(uint8_t *buf, size_t cap, unsigned cmd, uint32_t seq, int64_t dev_index);

/* Parse one datagram: the records it holds go to @s; *@done is set at NLMSG_DONE. Returns
 * how many records, or -EMSGSIZE / -EBADMSG (with @err: what, where), or the negative
 * errno of an NLMSG_ERROR reply. Messages of other types are skipped. */
int rdma_nl_parse(const uint8_t *buf, size_t len, const struct rdma_nl_sink *s, bool *done,
		  char *err, size_t errlen);

/* "RC", "UD", ... ("?" for others); "RESET" .. "ERR". */
const char *rdma_nl_qp_type_name(uint8_t type);
const char *rdma_nl_qp_state_name(uint8_t state);

/* Every QP of every RDMA device: *@out (malloc'd, free it) of *@n; a user QP's comm read
 * from /proc/PID/comm. 0, or a negative errno and one line in @err: -EPROTONOSUPPORT when
 * the kernel has no RDMA netlink (no ib_core), a netlink error otherwise. No devices is 0
 * with *@n = 0 and *@ndevs = 0. */
int rdma_nl_dump_qps(struct rdma_nl_qp **out, size_t *n, size_t *ndevs, char *err,
		     size_t errlen);

/* The QP of @list whose local QPN is @lqpn, else (with @rqpn non-zero) the one connected to
 * peer QPN @rqpn; NULL when none. */
const struct rdma_nl_qp *rdma_nl_find(const struct rdma_nl_qp *list, size_t n, uint32_t lqpn,
				      uint32_t rqpn);

#endif
