/* libFuzzer target: the topology file parser (fed text, opens no files). */
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
	sw_conf_defaults(&c);
	if (sw_topo_parse(&c, text, "fuzz", err, sizeof(err)) == 0)
		sw_conf_finish(&c);
	free(text);
	return 0;
}
