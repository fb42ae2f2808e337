/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target for qpaced's config reader (qpace/agent_config.h, through qpace/opt.h's qp_opt_line): the input is a file,
 * fed line by line, then finished. `make fuzz` builds and runs it.
 * Property: no crash; every error message starts with "fuzz:LINE:". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qpaced_config c;
	struct qp_opt_reader r;
	char line[QPACED_LINE_MAX + 64], err[400];
	size_t i = 0;

	qpaced_config_init(&c);
	qpaced_config_reader_init(&r, &c, "fuzz");
	while (i < size) {
		size_t n = 0;

		while (i < size && data[i] != '\n' && n < sizeof(line) - 1) {
			line[n++] = data[i] ? (char)data[i] : ' ';
			i++;
		}
		line[n] = 0;
		i++;
		if (qp_opt_line(&r, line, err, sizeof(err)) && strncmp(err, "fuzz:", 5))
			abort();
	}
	qpaced_config_finish(&c, err, sizeof(err));
	return 0;
}
