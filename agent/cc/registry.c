/* The registry: every algorithm qpace knows, one line each. The first is the default. */
#include <stdio.h>
#include <string.h>

#include "cc_algs.h"

static const struct cc_ops *const registry[] = {
	&cc_hpcc_ops,
	&cc_acc_ops,
	&cc_dcqcn_ops,
	&cc_ffd_ops,
	&cc_idcc_ops,
	&cc_none_ops,
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

/* Create by name: the registry is the only place that knows every algorithm. */
struct cc *cc_create(const char *name, const struct cc_path *path, const char *params,
		     qp_time_ns now, char *err, size_t errlen)
{
	const struct cc_ops *ops = cc_find(name);

	if (!ops) {
		char names[256] = "";
		for (const struct cc_ops *const *o = cc_all(); *o; o++) {
			strncat(names, (*o)->name, sizeof(names) - strlen(names) - 1);
			if (o[1])
				strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		}
		if (err && errlen)
			snprintf(err, errlen, "unknown algorithm \"%s\" (known: %s)", name ? name : "", names);
		return NULL;
	}
	return cc_create_ops(ops, path, params, now, err, errlen);
}
