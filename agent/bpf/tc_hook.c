/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A BPF program on a clsact hook; libbpf's last warning (tc_hook.h). */
#include "tc_hook.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

static char log_last[256];

static int log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(log_last, sizeof(log_last), fmt, ap);
	n = strlen(log_last);
	while (n && log_last[n - 1] == '\n')
		log_last[--n] = '\0';
	return 0;
}

void qp_bpf_log_start(void)
{
	libbpf_set_print(log_print);
	log_last[0] = '\0';
}

const char *qp_bpf_log_last(void)
{
	return log_last;
}

int qp_bpf_load_failed(const char *what, char *err, size_t errlen)
{
	int rc = errno ? -errno : -EINVAL;

	snprintf(err, errlen, "%s: loading the BPF program: %s%s%s%s", what, strerror(-rc),
		 log_last[0] ? " (libbpf: " : "", log_last, log_last[0] ? ")" : "");
	return rc == -EACCES ? -EPERM : rc;
}

int qp_tc_hook_attach(struct qp_tc_hook *h, int prog_fd, const char *ifname,
		      const char *what, char *err, size_t errlen)
{
	unsigned idx = if_nametoindex(ifname);
	int rc;

	if (!idx) {
		snprintf(err, errlen, "%s: device '%s': %s", what, ifname, strerror(errno));
		return -ENODEV;
	}
	if (h->ifindex) {
		snprintf(err, errlen, "%s: already attached to ifindex %d", what, h->ifindex);
		return -EBUSY;
	}
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)idx, .attach_point = h->point);
	rc = bpf_tc_hook_create(&hook);
	if (rc && rc != -EEXIST) {
		snprintf(err, errlen, "%s: clsact on %s: %s", what, ifname, strerror(-rc));
		return rc;
	}
	h->made_clsact = rc == 0;
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = h->handle, .priority = h->prio,
			    .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE);
	rc = bpf_tc_attach(&hook, &opts);
	if (rc) {
		snprintf(err, errlen, "%s: attaching the filter on %s: %s", what, ifname,
			 strerror(-rc));
		if (h->made_clsact) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		h->made_clsact = false;
		return rc;
	}
	h->ifindex = (int)idx;
	return 0;
}

int qp_tc_hook_detach(struct qp_tc_hook *h)
{
	int rc;

	if (!h->ifindex)
		return 0;
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = h->ifindex, .attach_point = h->point);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = h->handle, .priority = h->prio);
	rc = bpf_tc_detach(&hook, &opts);
	if (h->made_clsact) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		int rc2 = bpf_tc_hook_destroy(&hook);
		if (!rc)
			rc = rc2;
	}
	h->ifindex = 0;
	h->made_clsact = false;
	return rc == -ENOENT || rc == -ENODEV ? 0 : rc;
}

int qp_bpf_percpu_sum(int fd, uint32_t n, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t c = 0; c < n; c++) {
		out[c] = 0;
		if (bpf_map_lookup_elem(fd, &c, v)) {
			int rc = -errno;
			free(v);
			return rc;
		}
		for (int i = 0; i < ncpu; i++)
			out[c] += v[i];
	}
	free(v);
	return 0;
}

int qp_bpf_map_each(int fd, size_t key_size, void *val, uint32_t max,
		    void (*fn)(void *ctx, const void *key, const void *val), void *ctx)
{
	unsigned char key[64], next[64];
	const void *prev = NULL;
	int n = 0;

	if (key_size > sizeof(key))
		return -EINVAL;
	while ((uint32_t)n < max && bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val) == 0) {
			fn(ctx, key, val);
			n++;
		}
	}
	return n;
}
