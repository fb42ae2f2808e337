/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's metrics endpoint: just enough HTTP/1.x for a Prometheus scrape or curl.
 * GET /metrics -> the text format; GET / -> a pointer to it; anything else -> 4xx. One
 * request per connection (Connection: close), requests bounded to 4 KiB, idle connections
 * closed after 5 s, at most QPACED_MAX_HTTP at once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_metrics.h"
#include "http_req.h"
#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "daemon_priv.h"

#define HTTP_IDLE_S 5.0

struct qpaced_http {
	struct qpaced_http *next;
	struct qpaced *d;
	ev_io io;
	ev_timer idle;
	int fd;
	char req[HTTP_REQ_MAX + 1];
	size_t rlen;
	struct qp_strbuf out;
	size_t off;
};

static void http_close(struct qpaced_http *h)
{
	struct qpaced *d = h->d;
	struct qpaced_http **pp;

	ev_io_stop(d->loop, &h->io);
	ev_timer_stop(d->loop, &h->idle);
	close(h->fd);
	for (pp = &d->https; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	d->nhttp--;
	qp_strbuf_free(&h->out);
	free(h);
}

static void respond(struct qpaced_http *h, const char *status, const char *type,
		    const char *body, size_t body_len)
{
	struct qp_strbuf *b = &h->out;

	qp_strbuf_reset(b);
	qp_strbuf_printf(b, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n%s\r\n", status, type, body_len,
			 strncmp(status, "405", 3) == 0 ? "Allow: GET\r\n" : "");
	qp_strbuf_printf(b, "%.*s", (int)body_len, body);
	h->off = 0;
	ev_io_stop(h->d->loop, &h->io);
	ev_io_set(&h->io, h->fd, EV_WRITE);
	ev_io_start(h->d->loop, &h->io);
}

static void refuse(struct qpaced_http *h, const char *status, const char *why)
{
	char body[128];
	int n = snprintf(body, sizeof(body), "%s\n", why);

	agent_note(h->d->agent, AGENT_C_HTTP_BAD, "metrics request refused: %s (%s)", status, why);
	respond(h, status, "text/plain; charset=utf-8", body, (size_t)n);
}

static void serve_metrics(struct qpaced_http *h)
{
	struct agent_metrics_extra x = { qp_now_ns() - h->d->start_ns, &h->d->delay };
	struct qp_strbuf body = { 0 };

	agent_metrics_render(h->d->agent, &x, &body);
	qpaced_tc_metrics(h->d, &body);
	qpaced_ecn_metrics(h->d, &body);
	if (body.oom) {
		qp_strbuf_free(&body);
		refuse(h, "503 Service Unavailable", "out of memory rendering the metrics");
		return;
	}
	respond(h, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body.p, body.len);
	qp_strbuf_free(&body);
}

/* Answer what the bytes so far ask for (qpaced_http_route), or wait for more. */
static void serve(struct qpaced_http *h)
{
	static const char home[] = "qpaced: Prometheus metrics at /metrics\n";
	struct http_answer a = qpaced_http_route(h->req, h->rlen);

	if (a.route == HTTP_METRICS)
		serve_metrics(h);
	else if (a.route == HTTP_HOME)
		respond(h, "200 OK", "text/plain; charset=utf-8", home, sizeof(home) - 1);
	else if (a.route == HTTP_REFUSED)
		refuse(h, a.status, a.why);
}

static void http_ready(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced_http *h = w->data;
	ssize_t n;

	(void)loop;
	if (revents & EV_WRITE) {
		n = send(h->fd, h->out.p + h->off, h->out.len - h->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if ((n < 0 && errno != EAGAIN) || (n > 0 && (h->off += (size_t)n) == h->out.len))
			http_close(h);
		return;
	}
	n = recv(h->fd, h->req + h->rlen, HTTP_REQ_MAX - h->rlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		http_close(h);
		return;
	}
	h->rlen += (size_t)n;
	h->req[h->rlen] = 0;
	serve(h);
}

static void http_idle(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	http_close(w->data);
}

static void http_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced *d = w->data;

	(void)revents;
	for (;;) {
		int fd = accept4(d->http_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct qpaced_http *h;

		if (fd < 0)
			return;
		h = d->nhttp < QPACED_MAX_HTTP ? calloc(1, sizeof(*h)) : NULL;
		if (!h) {
			agent_note(d->agent, AGENT_C_HTTP_BAD, "metrics connection refused: %u open "
				   "(the limit)", d->nhttp);
			close(fd);
			continue;
		}
		h->d = d;
		h->fd = fd;
		h->next = d->https;
		d->https = h;
		d->nhttp++;
		ev_io_init(&h->io, http_ready, fd, EV_READ);
		h->io.data = h;
		ev_io_start(loop, &h->io);
		ev_timer_init(&h->idle, http_idle, HTTP_IDLE_S, 0);
		h->idle.data = h;
		ev_timer_start(loop, &h->idle);
	}
}

int qpaced_http_open(struct qpaced *d, char *err, size_t errlen)
{
	struct sockaddr_in sa = qp_sockaddr_in(d->cfg.metrics_ip, d->cfg.metrics_port);
	char at[QP_HOSTPORT_STRLEN];
	int one = 1;

	if (!d->cfg.metrics_port)
		return 0;
	qp_sockaddr_fmt(&sa, at, sizeof(at));
	if ((d->cfg.metrics_ip >> 24) != 127)
		qpaced_log(AGENT_LOG_WARN, "metrics on %s: not a loopback address; anyone who "
			   "reaches it sees every QP", at);
	d->http_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->http_fd < 0)
		return qp_errmsg(-errno, err, errlen, "metrics socket: %s", strerror(errno));
	setsockopt(d->http_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(d->http_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(d->http_fd, 16) < 0)
		return qp_errmsg(-errno, err, errlen, "metrics socket %s: %s", at, strerror(errno));
	ev_io_init(&d->http_io, http_accept, d->http_fd, EV_READ);
	d->http_io.data = d;
	ev_io_start(d->loop, &d->http_io);
	return 0;
}

void qpaced_http_close(struct qpaced *d)
{
	while (d->https)
		http_close(d->https);
	if (d->http_fd >= 0) {
		ev_io_stop(d->loop, &d->http_io);
		close(d->http_fd);
		d->http_fd = -1;
	}
}
