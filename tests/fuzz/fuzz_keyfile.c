/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: key files (qpace/keyfile.h), read by qpaced --key and qpace-probe key=:
 * the input is the file's bytes, in a memfd read through its /proc path, so the reader
 * runs as it does on a real file (open, fstat, the 127-byte read). Properties: no crash;
 * accepted exactly when the file is 32 hex digits with only whitespace around them (an
 * oracle written separately here), and then the key is those digits; refused: the key is
 * left alone and the message names the file. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "qpace/keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The rule, read directly: the first 127 bytes, up to a NUL, are whitespace, 32 hex
 * digits, whitespace. */
static int oracle(const uint8_t *d, size_t n, uint8_t key[16])
{
	size_t i = 0, end = n < 127 ? n : 127;

	while (i < end && d[i] && space(d[i]))
		i++;
	for (int k = 0; k < 32; k++, i++) {
		unsigned v;

		if (i >= end || !isxdigit(d[i]))
			return -1;
		v = (unsigned)(isdigit(d[i]) ? d[i] - '0' : (tolower(d[i]) - 'a' + 10));
		key[k / 2] = (uint8_t)(k % 2 ? key[k / 2] | v : v << 4);
	}
	while (i < end && d[i] && space(d[i]))
		i++;
	return i < end && d[i] ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64], err[400];
	uint8_t key[16], want[16];
	int rc, expect;

	if (fd < 0 && (fd = memfd_create("fuzz-key", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(key, 0xa5, sizeof(key));
	rc = qp_keyfile_read(path, key, NULL, err, sizeof(err));
	expect = oracle(data, size, want);
	if ((rc == 0) != (expect == 0))
		abort();
	if (rc == 0 && memcmp(key, want, sizeof(key)))
		abort();
	if (rc) {
		for (size_t i = 0; i < sizeof(key); i++)
			if (key[i] != 0xa5)
				abort();
		if (!strstr(err, path))
			abort();
	}
	return 0;
}
