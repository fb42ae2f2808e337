/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading small text files whole and cutting text into lines and words (textfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "textfile.h"

int sim_read_file_max(const char *path, size_t max, char **text, size_t *len, char *err,
		      size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "%s: %s", path, strerror(errno));
	for (;;) {   /* grown as it reads (a pipe has no size to ask), up to max + 1 bytes */
		if (n == cap) {
			size_t want = cap ? 2 * cap : 65536;
			char *b;
			if (cap > max)
				break;
			if (want > max + 1)
				want = max + 1;
			if (!(b = realloc(buf, want + 1))) {   /* + 1: the NUL */
				fclose(f);
				free(buf);
				return qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", path);
			}
			buf = b;
			cap = want;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	if (ferror(f) || n > max) {
		int rc = ferror(f) ? -EIO : -EFBIG;
		fclose(f);
		free(buf);
		return qp_errmsg(rc, err, errlen, rc == -EIO ? "%s: read error" :
				 "%s: larger than %zu bytes, not a file of this kind", path, max);
	}
	fclose(f);
	buf[n] = 0;
	*text = buf;
	*len = n;
	return 0;
}

int sim_read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	return sim_read_file_max(path, SIM_FILE_MAX, text, len, err, errlen);
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
	return sim_load_file_max(path, SIM_FILE_MAX, parse, obj, err, errlen);
}

int sim_load_file_max(const char *path, size_t max, sim_text_fn parse, void *obj, char *err,
		      size_t errlen)
{
	char *text;
	size_t len;
	int rc = sim_read_file_max(path, max, &text, &len, err, errlen);

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

int sim_line_words(const char *line, size_t len, char *buf, char **words, int max)
{
	if (len > SIM_LINE_MAX)
		return SIM_LINE_LONG;
	memcpy(buf, line, len);
	buf[len] = 0;
	return sim_words(buf, words, max);
}
