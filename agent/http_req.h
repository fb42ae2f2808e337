/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The metrics endpoint's request reader (agent/daemon_http.c): what the bytes received so
 * far on a connection ask for. Pure: no socket, no clock, so it can be fuzzed
 * (tests/fuzz/fuzz_http.c). */
#ifndef QPACE_AGENT_HTTP_REQ_H
#define QPACE_AGENT_HTTP_REQ_H

#include <stddef.h>

#define HTTP_REQ_MAX 4096            /* bytes a request may take, headers included */

enum http_route {
	HTTP_INCOMPLETE = 0,         /* no blank line yet: read on */
	HTTP_METRICS,                /* GET /metrics (a query string is ignored) */
	HTTP_HOME,                   /* GET / */
	HTTP_REFUSED,                /* answered with status and why */
};

struct http_answer {
	enum http_route route;
	const char *status;          /* HTTP_REFUSED: "400 Bad Request"... */
	const char *why;             /* HTTP_REFUSED: one line for the body and the log */
};

/* @req holds the @len bytes received (NUL-terminated at @len; @len <= HTTP_REQ_MAX). A
 * request is complete at its first blank line; one that reaches HTTP_REQ_MAX without one
 * is refused (431), as is a first line that is not "METHOD PATH HTTP/1.x" (400: only that
 * line is read, so bytes after it never change the answer), a method other than GET (405)
 * and a path other than / and /metrics (404). */
struct http_answer qpaced_http_route(const char *req, size_t len);

#endif
