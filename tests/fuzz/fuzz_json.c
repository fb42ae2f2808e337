/* libFuzzer target: the JSON reader, which reads qpace-switch's stats file (a file anyone
 * who can write there controls). */
#include <stdint.h>
#include <string.h>

#include "qpace/jsonr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void seen(void *arg, const char *path, const struct jsonr_val *v)
{
	*(size_t *)arg += strlen(path) + (v->type == JSONR_STR ? strlen(v->str) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[128];
	size_t n = 0;

	jsonr_walk((const char *)data, size, seen, &n, err, sizeof(err));
	return 0;
}
