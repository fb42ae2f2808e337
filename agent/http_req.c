/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The metrics endpoint's request reader: see http_req.h. */
#include <stdio.h>
#include <string.h>

#include "http_req.h"

static struct http_answer refused(const char *status, const char *why)
{
	return (struct http_answer){ HTTP_REFUSED, status, why };
}

struct http_answer qpaced_http_route(const char *req, size_t len)
{
	char line[300], method[16], path[256], version[16], more;
	size_t n = strcspn(req, "\r\n");

	if (!strstr(req, "\r\n\r\n") && !strstr(req, "\n\n"))
		return len >= HTTP_REQ_MAX
		       ? refused("431 Request Header Fields Too Large", "request over 4 KiB")
		       : (struct http_answer){ HTTP_INCOMPLETE, NULL, NULL };
	/* The request line alone: three words, as bytes after it cannot change the answer. */
	if (n >= sizeof(line))
		return refused("400 Bad Request", "request line too long");
	memcpy(line, req, n);
	line[n] = 0;
	if (sscanf(line, "%15s %255s %15s %c", method, path, version, &more) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0)
		return refused("400 Bad Request", "expected: GET /metrics HTTP/1.1");
	path[strcspn(path, "?")] = 0;
	if (strcmp(method, "GET") != 0)
		return refused("405 Method Not Allowed", "only GET is served");
	if (strcmp(path, "/metrics") == 0)
		return (struct http_answer){ HTTP_METRICS, NULL, NULL };
	if (strcmp(path, "/") == 0)
		return (struct http_answer){ HTTP_HOME, NULL, NULL };
	return refused("404 Not Found", "not found; the metrics are at /metrics");
}
