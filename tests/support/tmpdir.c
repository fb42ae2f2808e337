/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpdir.h"

int tmpdir_make(char *buf, size_t len, const char *tag)
{
	if ((size_t)snprintf(buf, len, "/tmp/qpace-%s-XXXXXX", tag) >= len)
		return -1;
	return mkdtemp(buf) ? 0 : -1;
}

int tmpdir_remove(const char *dir)
{
	char cmd[256];

	if (strncmp(dir, "/tmp/qpace-", 11) != 0 || strchr(dir, '\'') ||
	    (size_t)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

const char *tmpdir_file(const char *dir, const char *name, const char *text)
{
	static char path[8][256];
	static unsigned k;
	char *p = path[k++ % 8];
	FILE *f;

	if ((size_t)snprintf(p, sizeof(path[0]), "%s/%s", dir, name) >= sizeof(path[0]) ||
	    !(f = fopen(p, "w")))
		return NULL;
	if (fputs(text, f) < 0) {
		fclose(f);
		return NULL;
	}
	return fclose(f) ? NULL : p;
}
