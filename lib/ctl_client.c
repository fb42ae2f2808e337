/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Control-socket client (see qpace/ctl_client.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qpace/ctl_client.h"
#include "qpace/errmsg.h"

struct ctl_client {
	int fd;
	uint16_t next_id;
};

const char *ctl_client_path(const char *path)
{
	const char *env = getenv(CTL_SOCKET_ENV);

	if (path && *path)
		return path;
	return env && *env ? env : CTL_DEFAULT_SOCKET;
}

int ctl_client_open(const char *path, struct ctl_client **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ctl_client *c;
	int fd, rc;

	path = ctl_client_path(path);
	if (strlen(path) >= sizeof(sa.sun_path))
		return qp_errmsg(-ENAMETOOLONG, err, errlen, "socket path %s: longer than %zu",
				 path, sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return qp_errmsg(-errno, err, errlen, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		close(fd);
		return qp_errmsg(rc, err, errlen, "agent socket %s: %s%s", path, strerror(-rc),
				 rc == -ENOENT || rc == -ECONNREFUSED
				 ? " (is qpaced running? --socket or $" CTL_SOCKET_ENV " names another)"
				 : "");
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	}
	c->fd = fd;
	*out = c;
	return 0;
}

void ctl_client_close(struct ctl_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

int ctl_client_send(struct ctl_client *c, const struct ctl_msg *m)
{
	uint8_t buf[CTL_MAX_LEN];
	int n = ctl_encode(buf, sizeof(buf), m);

	if (n < 0)
		return n;
	return send(c->fd, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

int ctl_client_call(struct ctl_client *c, struct ctl_msg *req,
		    void (*on_msg)(void *arg, const struct ctl_msg *m), void *arg,
		    qp_time_ns timeout_ns, struct ctl_reply *reply, char *err, size_t errlen)
{
	qp_time_ns deadline = qp_now_ns() + timeout_ns;
	uint8_t buf[CTL_MAX_LEN + 1];
	int rc;

	req->id = ++c->next_id;
	if ((rc = ctl_client_send(c, req)))
		return qp_errmsg(rc, err, errlen, "sending %s: %s", ctl_type_name(req->type),
				 strerror(-rc));
	for (;;) {
		struct pollfd p = { c->fd, POLLIN, 0 };
		qp_time_ns now = qp_now_ns();
		struct ctl_msg m;
		ssize_t n;

		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / QP_NS_PER_MS) + 1) == 0)
			return qp_errmsg(-ETIMEDOUT, err, errlen, "no reply from the agent to %s",
					 ctl_type_name(req->type));
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return qp_errmsg(n == 0 ? -ECONNRESET : -errno, err, errlen, "the agent closed "
					 "the connection");
		if (ctl_decode(&m, buf, (size_t)n, err, errlen))
			return -EPROTO;
		if (m.id != req->id)
			continue;
		if (m.type != CTL_T_REPLY) {
			if (on_msg)
				on_msg(arg, &m);
			continue;
		}
		if (reply)
			*reply = m.u.reply;
		if (m.u.reply.status)
			qp_errmsg(0, err, errlen, "%s", m.u.reply.text);
		return m.u.reply.status;
	}
}
