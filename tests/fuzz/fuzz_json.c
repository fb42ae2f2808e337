/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the JSON reader, which reads qpace-switch's stats file (a file anyone
 * who can write there controls). Every string it decodes is written back by the printer
 * and read again: the two must agree on every byte (escaping and unescaping are inverse). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/jsonr.h"
#include "qpace/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void got(void *arg, const char *path, const struct jsonr_val *v)
{
	*(char **)arg = v->type == JSONR_STR ? strdup(v->str) : NULL;
	(void)path;
}

static void roundtrip(void *arg, const char *path, const struct jsonr_val *v)
{
	char *text = NULL, *back = NULL, err[128];
	size_t len;
	FILE *f;
	struct qp_out o;

	(void)arg;
	if (v->type != JSONR_STR || !(f = open_memstream(&text, &len)))
		return;
	qp_out_init(&o, f, QP_OUT_JSON);
	qp_out_obj(&o, NULL);
	qp_out_str(&o, path, v->str);
	qp_out_end(&o);
	fclose(f);
	if (jsonr_walk(text, len, got, &back, err, sizeof(err)) || !back || strcmp(back, v->str))
		abort();
	free(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[128];

	jsonr_walk((const char *)data, size, roundtrip, NULL, err, sizeof(err));
	return 0;
}
