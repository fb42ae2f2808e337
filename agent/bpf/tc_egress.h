/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
 * qp_tc_conf_default(). Unpinned. */
int qp_tc_open(struct qp_tc **out, char *err, size_t errlen);

/* The same with the maps pinned in @pin_dir (QP_TC_PIN_ROOT/IFACE; created, on a bpffs):
 * maps pinned there by an earlier qpaced are taken over (qp_tc_took_over), ones that do
 * not match this program are made afresh. When @pin_dir is not on a bpffs the program is
 * loaded unpinned. On success @err is "" or a warning to log (why not pinned, what was
 * made afresh). NULL or "" = unpinned. */
#define QP_TC_PIN_DIR_MAX 160
int qp_tc_open_pinned(struct qp_tc **out, const char *pin_dir, char *err, size_t errlen);
bool qp_tc_took_over(const struct qp_tc *t);
/* The pin directory in use, "" when unpinned. */
const char *qp_tc_pin_dir(const struct qp_tc *t);
/* Unlink the pins and their directory (a clean exit); the maps live on while open. */
void qp_tc_unpin(struct qp_tc *t);
/* Detach what qp_tc_attach installed, unload. NULL is fine. */
void qp_tc_close(struct qp_tc *t);

/* Attach to @ifname's egress (creating clsact if the device has none; a clsact that was
 * there before is left in place on detach). */
int qp_tc_attach(struct qp_tc *t, const char *ifname, char *err, size_t errlen);
/* Remove the filter, and the clsact qdisc if this loader created it. */
int qp_tc_detach(struct qp_tc *t);
/* The attached device's index, 0 when not attached. */
int qp_tc_ifindex(const struct qp_tc *t);
/* Whether detach removes clsact: this loader created it, or (taken over) the one before. */
bool qp_tc_made_clsact(const struct qp_tc *t);

/* qpaced's heartbeat and safe rate (tc_abi.h struct qp_tc_alive): 0 or a negative errno. */
int qp_tc_alive_get(const struct qp_tc *t, struct qp_tc_alive *out);
int qp_tc_alive_set(struct qp_tc *t, const struct qp_tc_alive *a);
/* The one in the maps pinned in @pin_dir, with no program loaded. */
int qp_tc_pinned_alive(const char *pin_dir, struct qp_tc_alive *out);

/* What a qpaced left on @ifname, removed (--enforce off after a crash): our filter, the
 * clsact qdisc and the pins. @removed gets enum qp_tc_removed bits; fq is the caller's
 * (QP_TC_REMOVED_FQ_OURS: the pinned record says qpaced installed it). Without the pinned
 * record only the filter and pins are known (QP_TC_REMOVED_UNKNOWN). */
enum qp_tc_removed {
	QP_TC_REMOVED_FILTER = 1u << 0,
	QP_TC_REMOVED_CLSACT = 1u << 1,
	QP_TC_REMOVED_FQ_OURS = 1u << 2,
	QP_TC_REMOVED_PINS = 1u << 3,
	QP_TC_REMOVED_UNKNOWN = 1u << 4,
};
int qp_tc_remove(const char *ifname, const char *pin_dir, unsigned *removed, char *err,
		 size_t errlen);

struct qp_tc_conf qp_tc_conf_default(void);
/* The AckReq ICRC table (tc_abi.h, qp_icrc_ackreq): @n entries into @t (the loader fills
 * the program's; tests check it against the CRC of the two frames). */
void qp_tc_icrc_ackreq(uint32_t *t, unsigned n);
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
/* Every rate entry, in map order (a takeover reads the discovered ones); returns how many
 * were passed to @fn. */
int qp_tc_rates(const struct qp_tc *t,
		void (*fn)(void *ctx, const struct qp_tc_key *k, const struct qp_tc_rate *r),
		void *ctx);
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

/* The RTT stamps' map (qp_rtt, conf.rtt), for the tc ingress program to share
 * (qp_tci_open_rtt); its stamp of (@peer, @psn): 0 or -ENOENT. */
int qp_tc_rtt_fd(const struct qp_tc *t);
int qp_tc_rtt_stamp(const struct qp_tc *t, const uint8_t peer[16], uint32_t psn,
		    struct qp_tc_rtt_stamp *out);

#endif
