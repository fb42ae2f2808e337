/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the /metrics request reader (agent/http_req.h, what qpaced's metrics
 * endpoint runs on the bytes received so far). The input is the bytes of a connection,
 * cut at one point as a first recv would cut them. Properties: no crash; INCOMPLETE only
 * below HTTP_REQ_MAX; a refusal has a status and a reason; the answer to the complete
 * request is the answer its first complete part already gave (bytes after the request
 * line change nothing); METRICS and HOME only for a GET of their path. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_answer route(const char *buf, size_t len)
{
	struct http_answer a = qpaced_http_route(buf, len);

	if (a.route == HTTP_INCOMPLETE && len >= HTTP_REQ_MAX)
		abort();
	if (a.route == HTTP_REFUSED && (!a.status || !a.why || !*a.status || !*a.why))
		abort();
	/* the first word (after the white space sscanf skips) is the method */
	if (a.route == HTTP_METRICS || a.route == HTTP_HOME) {
		const char *w = buf + strspn(buf, " \t\v\f");

		if (strncmp(w, "GET", 3) != 0 || !isspace((unsigned char)w[3]))
			abort();
	}
	return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[HTTP_REQ_MAX + 1];
	struct http_answer part, all;
	size_t len, cut;

	if (size < 2)
		return 0;
	len = size - 2 < HTTP_REQ_MAX ? size - 2 : HTTP_REQ_MAX;
	cut = ((size_t)data[0] << 8 | data[1]) % (len + 1);
	memcpy(buf, data + 2, cut);
	buf[cut] = 0;
	part = route(buf, cut);
	memcpy(buf, data + 2, len);
	buf[len] = 0;
	all = route(buf, len);
	/* The daemon answers at the first complete part; reading on would not change it
	 * (an embedded NUL ends the text the reader sees, as in the daemon's buffer). */
	if (part.route != HTTP_INCOMPLETE && strlen(buf) >= cut &&
	    (part.route != all.route || (part.route == HTTP_REFUSED &&
					 strcmp(part.status, all.status) != 0)))
		abort();
	return 0;
}
