/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Out-of-band connection over TCP, as perftest does without -R: the client connects to the
 * server's port, each side sends its connection message (qpace/qp_wire.h) and reads the
 * peer's, both move their QP to RTS, and a one-byte "ready" each way makes sure neither
 * sends before the other can receive. Every wait has a deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/qp.h"
#include "qpace/soft.h"

#define TCP_DEF_TIMEOUT_NS (30 * QP_NS_PER_S)
#define TCP_RETRY_NS (100 * QP_NS_PER_MS)
#define READY_BYTE 'R'

/* Wait until @fd is ready or the deadline passes. With @ctx, the backend keeps running
 * meanwhile (its fd watched, its deadlines honoured): a soft host must answer ARP and ACK
 * while its QP waits here for the peer. */
static int wait_io(int fd, short events, qp_time_ns deadline, struct qp_ctx *ctx)
{
	for (;;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = events }, { .fd = -1 } };
		qp_time_ns now = qp_now_ns(), wake = deadline;
		int ms, rc;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (ctx) {
			pfd[1] = (struct pollfd){ .fd = qp_ctx_fd(ctx), .events = POLLIN };
			wake = qp_time_min(wake, qp_ctx_deadline(ctx));
			if (!qp_soft_wait_arm(ctx))   /* shm rings: frames wait that no fd shows */
				wake = now;
		}
		ms = wake > now ? (int)((wake - now + QP_NS_PER_MS - 1) / QP_NS_PER_MS) : 0;
		rc = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (ctx)
			qp_ctx_progress(ctx, qp_now_ns());
		if (rc > 0 && pfd[0].revents)
			return 0;
	}
}

int qp_tcp_io(int fd, void *buf, size_t len, bool out, qp_time_ns deadline,
	      int (*wait)(void *arg, int fd, short events, qp_time_ns deadline), void *arg)
{
	char *p = buf;

	while (len) {
		ssize_t n;
		int rc = wait(arg, fd, out ? POLLOUT : POLLIN, deadline);

		if (rc)
			return rc;
		n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
		if (n == 0 && !out)
			return -ECONNRESET;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	return 0;
}

static int wait_ctx(void *arg, int fd, short events, qp_time_ns deadline)
{
	return wait_io(fd, events, deadline, arg);
}

/* Send or receive exactly len bytes before the deadline; -ECONNRESET when the peer hangs
 * up first. */
static int io_all(int fd, void *buf, size_t len, bool out, qp_time_ns deadline,
		  struct qp_ctx *ctx)
{
	return qp_tcp_io(fd, buf, len, out, deadline, wait_ctx, ctx);
}

static int write_all(int fd, const void *buf, size_t len, qp_time_ns deadline)
{
	return io_all(fd, (void *)(uintptr_t)buf, len, true, deadline, NULL);
}

static int read_all(int fd, void *buf, size_t len, qp_time_ns deadline)
{
	return io_all(fd, buf, len, false, deadline, NULL);
}

static qp_time_ns deadline_in(qp_time_ns timeout_ns)
{
	return qp_now_ns() + (timeout_ns ? timeout_ns : TCP_DEF_TIMEOUT_NS);
}

int qp_exchange_fd(int fd, const struct qp_conn_info *local, struct qp_conn_info *remote,
		   qp_time_ns timeout_ns, char *err, size_t errlen)
{
	uint8_t out[QP_WIRE_CONN_BYTES], in[QP_WIRE_CONN_BYTES];
	qp_time_ns deadline = deadline_in(timeout_ns);
	int rc = qp_wire_conn_encode(local, out, sizeof(out)), want;

	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "connection message: local data out of range");
	rc = write_all(fd, out, sizeof(out), deadline);
	if (rc == 0)
		rc = read_all(fd, in, QP_WIRE_CONN_HDR_BYTES, deadline);
	if (rc)
		return qp_errmsg(rc, err, errlen, "connection exchange: %s", strerror(-rc));
	/* The header says how much follows; it is checked before anything more is read. */
	want = qp_wire_conn_peek(in, QP_WIRE_CONN_HDR_BYTES, err, errlen);
	if (want < 0)
		return want;
	rc = read_all(fd, in + QP_WIRE_CONN_HDR_BYTES, (size_t)want - QP_WIRE_CONN_HDR_BYTES,
		      deadline);
	if (rc)
		return qp_errmsg(rc, err, errlen, "connection exchange: %s", strerror(-rc));
	return qp_wire_conn_decode(remote, in, (size_t)want, err, errlen);
}

static int resolve(const char *host, const char *port, bool passive, struct addrinfo **res,
		   char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	int rc = getaddrinfo(host, port, &hints, res);

	if (rc)
		return qp_errmsg(-EHOSTUNREACH, err, errlen, "%s:%s: %s", host ? host : "*", port,
				 gai_strerror(rc));
	return 0;
}

/* Connect to host:port, retrying refused connections (the server may start later). */
static int tcp_dial(const char *host, const char *port, qp_time_ns deadline,
		    char *err, size_t errlen)
{
	struct addrinfo *res, *ai;
	int rc = resolve(host, port, false, &res, err, errlen), fd = -1;

	if (rc)
		return rc;
	while (fd < 0) {
		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0) {
				rc = -errno;
				continue;
			}
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
				rc = -errno;
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0) {
			struct timespec ts = { 0, (long)TCP_RETRY_NS };

			if (qp_now_ns() + TCP_RETRY_NS >= deadline)
				break;
			nanosleep(&ts, NULL);
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		return qp_errmsg(rc, err, errlen, "connect %s:%s: %s", host, port, strerror(-rc));
	return fd;
}

/* Listen on [bind]:port and accept one client. */
static int tcp_accept_one(const char *bind_host, const char *port, qp_time_ns deadline,
			  char *err, size_t errlen)
{
	struct addrinfo *res;
	int one = 1, lfd, fd, rc = resolve(bind_host, port, true, &res, err, errlen);

	if (rc)
		return rc;
	lfd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, res->ai_addr, res->ai_addrlen) < 0 || listen(lfd, 1) < 0) {
		rc = qp_errmsg(-errno, err, errlen, "listen on %s:%s: %s",
			       bind_host ? bind_host : "*", port, strerror(errno));
		freeaddrinfo(res);
		if (lfd >= 0)
			close(lfd);
		return rc;
	}
	freeaddrinfo(res);
	rc = wait_io(lfd, POLLIN, deadline, NULL);
	fd = rc ? rc : accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0 && !rc)
		rc = -errno;
	close(lfd);
	if (rc)
		return qp_errmsg(rc, err, errlen, "accept on port %s: %s", port, strerror(-rc));
	return fd;
}

/* Both sides after the socket is up: exchange, connect, ready. */
static int handshake(struct qp *qp, int fd, const struct qp_mr *expose, qp_time_ns timeout_ns,
		     char *err, size_t errlen)
{
	struct qp_conn_info local, remote;
	qp_time_ns deadline = deadline_in(timeout_ns);
	char ready = READY_BYTE, got = 0;
	int rc;

	qp_local_info(qp, expose, &local);
	rc = qp_exchange_fd(fd, &local, &remote, timeout_ns, err, errlen);
	if (rc == 0)
		rc = qp_connect(qp, &remote, err, errlen);
	if (rc)
		return rc;
	/* The QP is live from here: the backend runs while we wait for the peer's ready. */
	rc = io_all(fd, &ready, 1, true, deadline, qp->ctx);
	if (rc == 0)
		rc = io_all(fd, &got, 1, false, deadline, qp->ctx);
	if (rc == 0 && got != READY_BYTE)
		rc = -EPROTO;
	if (rc)
		return qp_errmsg(rc, err, errlen, "waiting for the peer's ready: %s", strerror(-rc));
	return 0;
}

static int tcp_run(bool dial, struct qp_ctx *ctx, const struct qp_attr *attr,
		   const char *host, const char *port, const struct qp_mr *expose,
		   qp_time_ns timeout_ns, struct qp **out, char *err, size_t errlen)
{
	qp_time_ns deadline = deadline_in(timeout_ns);
	struct qp *qp;
	int fd, rc = qp_create(ctx, attr, &qp, err, errlen);

	if (rc)
		return rc;
	fd = dial ? tcp_dial(host, port, deadline, err, errlen)
		  : tcp_accept_one(host, port, deadline, err, errlen);
	if (fd < 0) {
		qp_destroy(qp);
		return fd;
	}
	rc = handshake(qp, fd, expose, timeout_ns, err, errlen);
	close(fd);
	if (rc) {
		qp_destroy(qp);
		return rc;
	}
	*out = qp;
	return 0;
}

int qp_tcp_dial(const char *host, const char *port, qp_time_ns timeout_ns, char *err,
		size_t errlen)
{
	return tcp_dial(host, port, deadline_in(timeout_ns), err, errlen);
}

int qp_tcp_accept(const char *bind_host, const char *port, qp_time_ns timeout_ns, char *err,
		  size_t errlen)
{
	return tcp_accept_one(bind_host, port, deadline_in(timeout_ns), err, errlen);
}

/* The exchange waits on the real clock: not for a context on an injected one. */
static int tcp_refused(char *err, size_t errlen)
{
	return qp_errmsg(-EINVAL, err, errlen, "qp: a context on an injected clock (virtual "
			 "time) cannot wait for a TCP exchange: connect with qp_local_info and "
			 "qp_connect");
}

int qp_dial(struct qp_ctx *ctx, const struct qp_attr *attr, const char *host,
	    const char *port, const struct qp_mr *expose, qp_time_ns timeout_ns,
	    struct qp **out, char *err, size_t errlen)
{
	if (ctx->attr.clock)
		return tcp_refused(err, errlen);
	return tcp_run(true, ctx, attr, host, port, expose, timeout_ns, out, err, errlen);
}

int qp_accept(struct qp_ctx *ctx, const struct qp_attr *attr, const char *bind,
	      const char *port, const struct qp_mr *expose, qp_time_ns timeout_ns,
	      struct qp **out, char *err, size_t errlen)
{
	if (ctx->attr.clock)
		return tcp_refused(err, errlen);
	return tcp_run(false, ctx, attr, bind, port, expose, timeout_ns, out, err, errlen);
}
