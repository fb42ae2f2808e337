/* The loader of qpace's tc egress program (tc_egress.bpf.c): load it, attach it to a
 * device's clsact egress hook (direct action) through libbpf's bpf_tc_* API, write flows'
 * rates, read their counters and the program's, take its reports of unknown flows.
 *
 * Errors: negative errno, with one line in @err naming what failed and why. When the
 * kernel refuses BPF itself (no bpf syscall, no permission, no BTF for the skeleton's
 * globals), qp_tc_open returns -ENOSYS or -EPERM so a test can skip with that line.
 */
#ifndef QPACE_AGENT_TC_EGRESS_H
#define QPACE_AGENT_TC_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tc_abi.h"

struct qp_tc;

/* Load the program and its maps (nothing attached yet); the conf starts at
 * qp_tc_conf_default(). */
int qp_tc_open(struct qp_tc **out, char *err, size_t errlen);
/* Detach what qp_tc_attach installed, unload. NULL is fine. */
void qp_tc_close(struct qp_tc *t);

/* Attach to @ifname's egress (creating clsact if the device has none; a clsact that was
 * there before is left in place on detach). */
int qp_tc_attach(struct qp_tc *t, const char *ifname, char *err, size_t errlen);
/* Remove the filter, and the clsact qdisc if this loader created it. */
int qp_tc_detach(struct qp_tc *t);
/* The attached device's index, 0 when not attached. */
int qp_tc_ifindex(const struct qp_tc *t);

struct qp_tc_conf qp_tc_conf_default(void);
void qp_tc_set_conf(struct qp_tc *t, const struct qp_tc_conf *c);

/* The flow's key: an IPv4 destination (host order) as ::ffff:a.b.c.d, or 16 bytes. */
struct qp_tc_key qp_tc_key_ipv4(uint32_t daddr, uint32_t dqpn);
struct qp_tc_key qp_tc_key_ipv6(const uint8_t daddr[16], uint32_t dqpn);
/* The IPv4 address of a mapped key address (host order), or false for IPv6. */
bool qp_tc_addr_ipv4(const uint8_t a[16], uint32_t *ip);

/* Write (create or replace) a flow's rate entry; delete it (-ENOENT when absent). */
int qp_tc_set_rate(struct qp_tc *t, const struct qp_tc_key *k, const struct qp_tc_rate *r);
int qp_tc_del_rate(struct qp_tc *t, const struct qp_tc_key *k);
/* The program's state of a flow: 0 or -ENOENT. */
int qp_tc_flow(const struct qp_tc *t, const struct qp_tc_key *k, struct qp_tc_state *out);
/* Every flow's state, in map order; returns how many were passed to @fn. */
int qp_tc_flows(const struct qp_tc *t,
		void (*fn)(void *ctx, const struct qp_tc_key *k, const struct qp_tc_state *s),
		void *ctx);
/* The program's counters summed over CPUs. */
int qp_tc_counters(const struct qp_tc *t, uint64_t out[QP_TC_C_COUNT]);
/* "roce", "pass_vlan", ... (the enum's names in lower case without QP_TC_C_). */
const char *qp_tc_counter_name(unsigned c);

/* Reports of unknown flows: an fd to wait on (epoll) and a consumer calling @fn for each;
 * returns how many were consumed, or a negative errno. */
int qp_tc_reports_fd(const struct qp_tc *t);
int qp_tc_reports_take(struct qp_tc *t, void (*fn)(void *ctx, const struct qp_tc_report *r),
		       void *ctx);

/* The program's fd (for BPF_PROG_TEST_RUN in the tests). */
int qp_tc_prog_fd(const struct qp_tc *t);

#endif
