/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The backends built into libqpace: one line each. */
#include <string.h>

#include "qpace/qp.h"
#include "qpace/soft.h"

static const struct qp_backend_ops *const qp_backends[] = {
	&qp_ibv_ops,
	&qp_soft_ops,
	NULL,
};

const struct qp_backend_ops *qp_backend_find(const char *name)
{
	for (size_t i = 0; qp_backends[i]; i++)
		if (strcmp(qp_backends[i]->name, name) == 0)
			return qp_backends[i];
	return NULL;
}

const struct qp_backend_ops *const *qp_backend_all(void)
{
	return qp_backends;
}
