/* TEMPORARY: placeholders for algorithms whose branch is not merged into this tree yet
 * (hpcc, acc: branch hpcc-acc). The registry (agent/cc/registry.c) names every algorithm,
 * so nothing that calls cc_create/cc_find links without them. Each placeholder refuses to
 * be created with a message saying so. Delete this file when main has agent/cc/hpcc.c
 * (agent/cc/ objects come first in libqpace.a, so the real ones win even before that). */
#include <errno.h>
#include <stdio.h>

#include "qpace/cc_algs.h"

static int pending_check(const void *params, const struct cc_path *path, char *err,
			 size_t errlen)
{
	(void)params;
	(void)path;
	snprintf(err, errlen, "this algorithm is not in this build yet (branch hpcc-acc)");
	return -EINVAL;
}

static const struct cc_param pending_params[] = { { .name = NULL } };

const struct cc_ops cc_hpcc_ops = {
	.name = "hpcc", .summary = "HPCC (not in this build yet)", .params = pending_params,
	.params_size = 1, .state_size = sizeof(struct cc), .check = pending_check,
};

const struct cc_ops cc_acc_ops = {
	.name = "acc", .summary = "ACC (not in this build yet)", .params = pending_params,
	.params_size = 1, .state_size = sizeof(struct cc), .check = pending_check,
};
