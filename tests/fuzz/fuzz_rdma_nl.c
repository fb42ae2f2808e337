/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the rdma netlink QP dump's parser (qpace/rdma_nl.h) over any bytes as
 * one received datagram. Never a crash or a read past the input; a failure is -EMSGSIZE,
 * -EBADMSG or an NLMSG_ERROR's negative errno, with a one-line message; every record's
 * strings end within their arrays; the count returned is the records delivered. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/rdma_nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t delivered;

static void on_qp(void *ctx, const struct rdma_nl_qp *q)
{
	(void)ctx;
	if (!memchr(q->dev, 0, sizeof(q->dev)) || !memchr(q->comm, 0, sizeof(q->comm)))
		abort();
	delivered++;
}

static void on_dev(void *ctx, const struct rdma_nl_dev *d)
{
	(void)ctx;
	if (!memchr(d->name, 0, sizeof(d->name)))
		abort();
	delivered++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct rdma_nl_sink s = { on_dev, on_qp, NULL };
	uint8_t *copy = malloc(size ? size : 1);   /* exact size: ASan sees any over-read */
	char err[300] = "";
	bool done = false;
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	delivered = 0;
	rc = rdma_nl_parse(copy, size, &s, &done, err, sizeof(err));
	free(copy);
	if (rc >= 0) {
		if ((size_t)rc != delivered)
			abort();
		return 0;
	}
	if (!err[0] || strchr(err, '\n'))
		abort();
	return 0;
}
