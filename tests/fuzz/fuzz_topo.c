/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the topology file parser (fed text, opens no files), PFC specs
 * included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../switchsim/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sw_conf c;
	char err[512];
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	sw_conf_free(&c);
	sw_conf_defaults(&c);
	if (sw_topo_parse(&c, text, "fuzz", err, sizeof(err)) == 0) {
		sw_conf_finish(&c);
		/* What the PFC spec parser accepts is within its ranges. */
		for (int s = 0; s < c.nswitches; s++)
			for (int i = 0; i < c.sw[s].nports; i++) {
				const struct sw_pfc_params *p = &c.sw[s].ports[i].pfc;
				bool bad = p->xon_bytes >= p->xoff_bytes || p->prio > 7 ||
					   !p->quanta ||
					   p->headroom_bytes == SW_PFC_HEADROOM_AUTO;
				if (p->on && bad)
					abort();
			}
	}
	free(text);
	return 0;
}
