/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rdma netlink QP dump's I/O (qpace/rdma_nl.h): a NETLINK_RDMA socket, the device
 * dump, then each device's QP dump, parsed by rdma_nl_parse; user QPs' comm from /proc. */
#include "qpace/rdma_nl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "qpace/errmsg.h"

#define MAX_DEVS 64

struct collect {
	struct rdma_nl_dev devs[MAX_DEVS];
	size_t ndevs;
	struct rdma_nl_qp *qps;
	size_t n, cap;
	bool oom;
};

static void on_dev(void *ctx, const struct rdma_nl_dev *d)
{
	struct collect *c = ctx;

	if (c->ndevs < MAX_DEVS)
		c->devs[c->ndevs++] = *d;
}

static void on_qp(void *ctx, const struct rdma_nl_qp *q)
{
	struct collect *c = ctx;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct rdma_nl_qp *p = realloc(c->qps, cap * sizeof(*p));

		if (!p) {
			c->oom = true;
			return;
		}
		c->qps = p;
		c->cap = cap;
	}
	c->qps[c->n++] = *q;
}

/* One dump: send the request, read until NLMSG_DONE. */
static int dump(int fd, unsigned cmd, uint32_t seq, int64_t dev, struct collect *c,
		char *err, size_t errlen)
{
	static uint8_t buf[32768];
	const struct rdma_nl_sink s = { on_dev, on_qp, c };
	bool done = false;
	int n = rdma_nl_request(buf, sizeof(buf), cmd, seq, dev);

	if (send(fd, buf, (size_t)n, 0) != n)
		return qp_errmsg(-errno, err, errlen, "rdma netlink: send: %s", strerror(errno));
	while (!done) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		int rc;

		if (got < 0)
			return qp_errmsg(-errno, err, errlen, "rdma netlink: recv: %s",
					 strerror(errno));
		rc = rdma_nl_parse(buf, (size_t)got, &s, &done, err, errlen);
		if (rc < 0)
			return rc;
		if (c->oom)
			return qp_errmsg(-ENOMEM, err, errlen, "rdma netlink: out of memory");
	}
	return 0;
}

static void read_comm(struct rdma_nl_qp *q)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", q->pid);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(q->comm, sizeof(q->comm), f)) {
		q->comm[strcspn(q->comm, "\n")] = '\0';
		q->has |= RDMA_NL_HAS_COMM;
	}
	fclose(f);
}

int rdma_nl_dump_qps(struct rdma_nl_qp **out, size_t *n, size_t *ndevs, char *err,
		     size_t errlen)
{
	struct collect *c = calloc(1, sizeof(*c));
	struct timeval tv = { .tv_sec = 2 };
	int fd, rc = 0;

	*out = NULL;
	*n = *ndevs = 0;
	if (!c)
		return qp_errmsg(-ENOMEM, err, errlen, "rdma netlink: out of memory");
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0) {
		rc = -errno;
		free(c);
		if (rc == -EPROTONOSUPPORT)
			return qp_errmsg(rc, err, errlen, "rdma netlink: this kernel has no RDMA "
					 "netlink family (NETLINK_RDMA: %s): no RDMA devices here",
					 strerror(-rc));
		return qp_errmsg(rc, err, errlen, "rdma netlink: socket: %s", strerror(-rc));
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rc = dump(fd, RDMA_NLDEV_CMD_GET, 1, -1, c, err, errlen);
	for (size_t i = 0; !rc && i < c->ndevs; i++)
		rc = dump(fd, RDMA_NLDEV_CMD_RES_QP_GET, (uint32_t)(2 + i), c->devs[i].index, c,
			  err, errlen);
	close(fd);
	if (rc) {
		free(c->qps);
		free(c);
		return rc;
	}
	for (size_t i = 0; i < c->n; i++)
		if ((c->qps[i].has & RDMA_NL_HAS_PID) && !(c->qps[i].has & RDMA_NL_HAS_COMM))
			read_comm(&c->qps[i]);
	*out = c->qps;
	*n = c->n;
	*ndevs = c->ndevs;
	free(c);
	return 0;
}
