/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the rtnetlink qdisc dump's parser (agent/qdisc.h) over any bytes as one
 * received datagram, then the plan over what it parsed (agent/qdisc_plan.h). Never a crash
 * or a read past the input; a failure is a negative errno; every record's kind ends within
 * its array, its options within theirs; a plan's fq and undo steps within their arrays. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qdisc.h"
#include "qdisc_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct qd q[8];
	static struct qd_plan p;
	uint8_t *copy = malloc(size ? size : 1);   /* exact size: ASan sees any over-read */
	unsigned n = 0;
	bool done = false;
	char err[300];
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	rc = qd_parse(copy, size, 2, q, 8, &n, &done);
	free(copy);
	if (rc > 0 || n > 8)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (!memchr(q[i].kind, 0, sizeof(q[i].kind)) || q[i].opts_len > QD_OPTS_MAX)
			abort();
	for (unsigned pol = 0; pol < 2; pol++) {
		rc = qd_plan(q, n, pol, pol ? 0x00010010u : 0, &p, err, sizeof(err));
		if (rc > 0 || p.nfq > QD_MAX || p.nundo > QD_MAX)
			abort();
		if (rc && !memchr(err, 0, sizeof(err)))
			abort();
	}
	return 0;
}
