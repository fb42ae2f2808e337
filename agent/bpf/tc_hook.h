/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A BPF program on one of a device's clsact hooks (direct action), through libbpf's
 * bpf_tc_* API; and libbpf's last warning kept for an error line instead of its stderr.
 * Used by both loaders (tc_egress.c, tc_ingress.c); the counters of a per-CPU array. */
#ifndef QPACE_AGENT_TC_HOOK_H
#define QPACE_AGENT_TC_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>

struct qp_tc_hook {
	enum bpf_tc_attach_point point;   /* BPF_TC_INGRESS or BPF_TC_EGRESS */
	uint32_t handle, prio;            /* our filter's */
	int ifindex;                      /* 0: not attached */
	bool made_clsact;                 /* we created clsact: remove it on detach */
};

/* Attach @prog_fd to @ifname's hook (creating clsact when the device has none). @what
 * ("tc ingress") starts the error line. */
int qp_tc_hook_attach(struct qp_tc_hook *h, int prog_fd, const char *ifname,
		      const char *what, char *err, size_t errlen);
/* Remove the filter, and clsact (both hooks) when this hook created it. The device may be
 * gone: then 0. */
int qp_tc_hook_detach(struct qp_tc_hook *h);

/* @n per-CPU u64 counters of the array map @fd, each summed over the CPUs, into @out:
 * 0 or a negative errno. */
int qp_bpf_percpu_sum(int fd, uint32_t n, uint64_t *out);

/* Each entry of the map @fd (keys of @key_size bytes, at most @max of them, values read
 * into @val, which holds one), passed to @fn; returns how many. @key_size <= 64. */
int qp_bpf_map_each(int fd, size_t key_size, void *val, uint32_t max,
		    void (*fn)(void *ctx, const void *key, const void *val), void *ctx);

/* Route libbpf's messages into a buffer (debug ones dropped); the last warning. */
void qp_bpf_log_start(void);
const char *qp_bpf_log_last(void);
/* After a skeleton's open-and-load failed (errno set): "@what: loading the BPF program:
 * WHY (libbpf: its last warning)" in @err; returns the negative errno, with -EACCES (the
 * verifier or capabilities refused it) as -EPERM. */
int qp_bpf_load_failed(const char *what, char *err, size_t errlen);

#endif
