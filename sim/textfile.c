/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading small text files whole and cutting text into lines and words (textfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "textfile.h"

int sim_read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	buf = malloc(SIM_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", path);
	}
	n = fread(buf, 1, SIM_FILE_MAX + 1, f);
	if (ferror(f) || n > SIM_FILE_MAX) {
		int rc = ferror(f) ? -EIO : -EFBIG;
		fclose(f);
		free(buf);
		return qp_errmsg(rc, err, errlen, rc == -EIO ? "%s: read error" :
				 "%s: larger than 1 MiB, not a file of this kind", path);
	}
	fclose(f);
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
}

int sim_each_line(const char *text, size_t len, sim_line_fn fn, void *obj, char *err,
		  size_t errlen)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int rc = fn(obj, p, n, err, errlen);
		if (rc)
			return rc;
		p += n + (nl ? 1 : 0);
	}
	return 0;
}

int sim_load_file(const char *path, sim_text_fn parse, void *obj, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = sim_read_file(path, &text, &len, err, errlen);

	if (rc)
		return rc;
	rc = parse(obj, text, len, path, err, errlen);
	free(text);
	return rc;
}

int sim_words(char *line, char **words, int max)
{
	char *hash = strchr(line, '#'), *save = NULL;
	int n = 0;

	if (hash)
		*hash = 0;
	for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
		if (n == max)
			return -1;
		words[n++] = w;
	}
	return n;
}
