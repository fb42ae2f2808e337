/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Key files (rules in qpace/keyfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/keyfile.h"

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int qp_keyfile_read(const char *path, uint8_t key[QP_SIPHASH_KEY_BYTES],
		    void (*warn)(const char *line), char *err, size_t errlen)
{
	char buf[128], *s, line[320];
	uint8_t k[QP_SIPHASH_KEY_BYTES];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return qp_errmsg(-errno, err, errlen, "key file %s: %s", path, strerror(errno));
	n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return qp_errmsg(-EIO, err, errlen, "key file %s: cannot read it", path);
	buf[n] = 0;
	for (s = buf; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'; s++)
		;
	len = strcspn(s, " \t\r\n");
	if (len != 2 * QP_SIPHASH_KEY_BYTES || s[len + strspn(s + len, " \t\r\n")])
		return qp_errmsg(-EINVAL, err, errlen, "key file %s: expected 32 hex digits (a "
				 "128-bit key, e.g. from `openssl rand -hex 16`) and nothing else",
				 path);
	for (size_t i = 0; i < QP_SIPHASH_KEY_BYTES; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return qp_errmsg(-EINVAL, err, errlen, "key file %s: \"%.2s\" at digit %zu is "
					 "not hexadecimal", path, s + 2 * i, 2 * i + 1);
		k[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(key, k, sizeof(k));
	if ((st.st_mode & 077) && warn) {
		snprintf(line, sizeof(line), "key file %s is readable by others (mode %04o); "
			 "chmod 600 it", path, st.st_mode & 07777);
		warn(line);
	}
	return 0;
}
