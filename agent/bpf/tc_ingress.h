/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The loader of qpace's tc ingress program (tc_ingress.bpf.c): load it, attach it to a
 * device's clsact ingress hook (direct action), read its counters and per-QP entries,
 * take its reports of CE-marked data frames and of arriving CNPs.
 *
 * Errors: negative errno, with one line in @err; when the kernel refuses BPF itself,
 * qp_tci_open returns -ENOSYS or -EPERM so a test can skip with that line. When the tc
 * egress program shares the device, attach the egress one first and detach this one
 * first: a loader that created clsact removes it whole (both hooks) on detach. */
#ifndef QPACE_AGENT_TC_INGRESS_H
#define QPACE_AGENT_TC_INGRESS_H

#include <stddef.h>
#include <stdint.h>
#include "tc_ingress_abi.h"

struct qp_tci;

/* Load (not attached); the conf starts at qp_tci_conf_default(). */
int qp_tci_open(struct qp_tci **out, char *err, size_t errlen);
/* The same, the RTT stamps' map shared with the tc egress program's (qp_tc_rtt_fd; -1:
 * a map of its own, which nothing stamps): conf.rtt then matches its ACKs. */
int qp_tci_open_rtt(struct qp_tci **out, int rtt_fd, char *err, size_t errlen);
/* Detach, unload. NULL is fine. */
void qp_tci_close(struct qp_tci *t);

int qp_tci_attach(struct qp_tci *t, const char *ifname, char *err, size_t errlen);
int qp_tci_detach(struct qp_tci *t);
int qp_tci_ifindex(const struct qp_tci *t);

/* Remove a qpace ingress filter a killed qpaced left on @ifname (qpaced --enforce off):
 * 1 removed, 0 none there, or a negative errno. clsact itself is the egress side's. */
int qp_tci_remove(const char *ifname);

/* ce_gap_ns 50 us: DCQCN's CNP interval (one CNP per QP per 50 us); rtt off, rtt_gap_ns
 * 100 us (at most 10,000 RTT samples and 10,000 NAKs a second reported). */
struct qp_tci_conf qp_tci_conf_default(void);
void qp_tci_set_conf(struct qp_tci *t, const struct qp_tci_conf *c);

/* The program's entry of a local QP: 0 or -ENOENT. */
int qp_tci_qp(const struct qp_tci *t, uint32_t qpn, struct qp_tci_qp *out);
/* conf.flows: the entry of the receiving flow (@saddr, @dqpn): 0 or -ENOENT; every
 * flow's, in map order (returns how many were passed to @fn). */
int qp_tci_flow(const struct qp_tci *t, const struct qp_tci_flow_key *k,
		struct qp_tci_flow *out);
int qp_tci_flows(const struct qp_tci *t,
		 void (*fn)(void *ctx, const struct qp_tci_flow_key *k,
			    const struct qp_tci_flow *f), void *ctx);
/* The conf in force. */
struct qp_tci_conf qp_tci_get_conf(const struct qp_tci *t);
/* The counters summed over CPUs; their names ("roce", "ce", ...). */
int qp_tci_counters(const struct qp_tci *t, uint64_t out[QP_TCI_C_COUNT]);
const char *qp_tci_counter_name(unsigned c);

/* Reports: an fd to wait on (epoll), and a consumer calling @fn for each; returns how
 * many were consumed or a negative errno. */
int qp_tci_reports_fd(const struct qp_tci *t);
int qp_tci_reports_take(struct qp_tci *t,
			void (*fn)(void *ctx, const struct qp_tci_report *r), void *ctx);

/* The program's fd (BPF_PROG_TEST_RUN in the tests). */
int qp_tci_prog_fd(const struct qp_tci *t);

#endif
