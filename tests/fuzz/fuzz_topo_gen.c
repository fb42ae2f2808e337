/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: qpace-bench run's --gen KIND:KEY=VALUE,... (bench_topo_gen_parse, the
 * command line's text). An accepted spec has parameters topogen_build either builds, and
 * then writes a file of at most TOPOGEN_MAX_FILE bytes, or refuses with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/topogen.h"
#include "bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topogen_params p;
	struct topogen g;
	char buf[512], err[600];
	char *text;

	if (size > 600)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (bench_topo_gen_parse(text, &p, buf, sizeof(buf), err, sizeof(err)) == 0 &&
	    p.hosts <= 64 && p.leaves * p.hosts_per_leaf <= 512) {
		if (topogen_build(&g, &p, err, sizeof(err)) == 0) {
			struct qp_strbuf out = { 0 };
			if (!topogen_write(&g, &out) || out.len > TOPOGEN_MAX_FILE + 4096)
				abort();
			qp_strbuf_free(&out);
			topogen_free(&g);
		} else if (!err[0]) {
			abort();           /* a refusal names its reason */
		}
	}
	free(text);
	return 0;
}
