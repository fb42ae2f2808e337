/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The registry: every algorithm qpace knows, one line each, in the order help and the
 * bench's default --algos list them (the agent's default algorithm is its own option). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cc_algs.h"

static const struct cc_ops *const registry[] = {
	&cc_none_ops,
	&cc_dcqcn_ops,
	&cc_hpcc_ops,
	&cc_acc_ops,
	&cc_ffd_ops,
	&cc_idcc_ops,
	&cc_tcp_ops,
	&cc_dctcp_ops,
	&cc_timely_ops,
	&cc_swift_ops,
	NULL,
};

const struct cc_ops *const *cc_all(void)
{
	return registry;
}

const struct cc_ops *cc_find(const char *name)
{
	if (!name)
		return NULL;
	for (const struct cc_ops *const *o = registry; *o; o++)
		if (strcmp((*o)->name, name) == 0)
			return *o;
	return NULL;
}

int cc_names(char *buf, size_t len, const char *sep)
{
	size_t off = 0;

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (const struct cc_ops *const *o = registry; *o; o++) {
		const char *s = o == registry ? "" : sep;
		size_t need = strlen(s) + strlen((*o)->name);

		if (off + need >= len)
			return -ENOSPC;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", s, (*o)->name);
	}
	return 0;
}

/* Create by name: the registry is the only place that knows every algorithm. */
struct cc *cc_create(const char *name, const struct cc_path *path, const char *params,
		     qp_time_ns now, char *err, size_t errlen)
{
	const struct cc_ops *ops = cc_find(name);

	if (!ops) {
		char names[256];

		cc_names(names, sizeof(names), ", ");
		if (err && errlen)
			snprintf(err, errlen, "unknown algorithm \"%s\" (known: %s)",
				 name ? name : "", names);
		return NULL;
	}
	return cc_create_ops(ops, path, params, now, err, errlen);
}
