/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control-protocol server for the bench's agents (see monitor.h): a handler table in
 * the server shape of qpace/ctl_server.h, served from the bench's own loop. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qpace/ctl_server.h"
#include "monitor.h"

static int sock_at(const char *path, bool listen_it)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int rc = listen_it ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4)
			   : connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The default path when usable: its directory is writable and no agent answers there. */
static void monitor_default(char *out, size_t len)
{
	const char *def = CTL_DEFAULT_SOCKET, *slash = strrchr(def, '/');
	char dir[108];
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - def), def);
	if (access(dir, W_OK) == 0) {
		fd = sock_at(def, false);
		if (fd < 0 && errno != EAGAIN && errno != EINPROGRESS) {
			unlink(def);       /* a stale socket of a dead agent */
			snprintf(out, len, "%s", def);
			return;
		}
		if (fd >= 0)
			close(fd);
	}
	const char *run = getenv("XDG_RUNTIME_DIR");
	snprintf(out, len, "%s/qpace-bench.%d.sock", run && *run ? run : "/tmp", (int)getpid());
}

int monitor_open(struct monitor *m, const char *path, struct agent *const *agents,
		 unsigned nagents, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->lfd = -1;
	for (int i = 0; i < MONITOR_CLIENTS; i++)
		m->cfd[i] = -1;
	m->agents = agents;
	m->nagents = nagents;
	m->start_ns = qp_now_ns();
	if (path)
		snprintf(m->path, sizeof(m->path), "%s", path);
	else
		monitor_default(m->path, sizeof(m->path));
	unlink(m->path);
	m->lfd = sock_at(m->path, true);
	if (m->lfd < 0) {
		snprintf(err, errlen, "monitor socket %s: %s", m->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* One client being served: ctl_out's io. */
struct client {
	struct monitor *m;
	int fd;
};

/* ctl_out's send: straight to the client; what does not fit its buffer is dropped. */
static void send_now(void *io, const uint8_t *msg, size_t len)
{
	struct client *c = io;

	if (send(c->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		c->m->dropped++;
}

/* Views of @qpn (all QPs when @all) across the hosts; returns how many were sent. */
static uint32_t send_views(struct monitor *m, struct ctl_out *o, bool all, uint32_t qpn)
{
	uint32_t n = 0;

	for (unsigned a = 0; a < m->nagents; a++) {
		for (uint32_t i = 0; i < agent_max_qps(m->agents[a]); i++) {
			struct ctl_msg q = { .type = CTL_T_QP };

			if (agent_qp_view_at(m->agents[a], i, &q.u.qp) == 0 &&
			    (all || q.u.qp.reg.qpn == qpn)) {
				ctl_out_send(o, &q);
				n++;
			}
		}
	}
	return n;
}

static void on_list(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	(void)req;
	ctl_out_reply(o, 0, send_views(ctx, o, true, 0), "");
}

static void on_show(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	uint32_t n = send_views(ctx, o, false, req->u.qpn);

	ctl_out_reply(o, n ? 0 : -ENOENT, n, n ? "" : "no such qp in this bench");
}

/* One AGENT for the whole bench: its pid and uptime, the hosts' QPs and counters summed. */
static void on_status(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	struct monitor *m = ctx;
	struct ctl_msg a = { .type = CTL_T_AGENT };

	(void)req;
	a.u.agent.pid = (uint32_t)getpid();
	a.u.agent.uptime_ns = qp_now_ns() - m->start_ns;
	for (unsigned i = 0; i < m->nagents; i++) {
		const uint64_t *c = agent_counters(m->agents[i]);

		a.u.agent.qps += agent_qp_count(m->agents[i]);
		a.u.agent.max_qps += agent_max_qps(m->agents[i]);
		for (int k = 0; k < AGENT_C_COUNT; k++)
			a.u.agent.counters[k] += c[k];
	}
	ctl_out_send(o, &a);
	ctl_out_reply(o, 0, 1, "");
}

/* SET reaches the first host with a QP of that number. */
static void on_set(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	struct monitor *m = ctx;
	const struct ctl_set *s = &req->u.set;
	char err[CTL_TEXT_MAX] = "";
	int rc = -ENOENT;

	for (unsigned a = 0; a < m->nagents && rc == -ENOENT; a++) {
		struct agent_qp_view v;

		if (agent_qp_view(m->agents[a], s->qpn, &v))
			continue;
		rc = s->what == CTL_SET_RATE
			     ? agent_set_rate(m->agents[a], s->qpn, s->rate_bps, 0, qp_now_ns(), err,
					      sizeof(err))
			     : agent_set_algo(m->agents[a], s->qpn, s->algo, s->params, 0,
					      qp_now_ns(), err, sizeof(err));
	}
	ctl_out_reply(o, rc, 0, rc == -ENOENT && !*err ? "no such qp" : err);
}

/* EVENT and STATS are never answered; the bench's QPs report to their hosts directly. */
static void on_ignored(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	(void)ctx, (void)req, (void)o;
}

static const struct ctl_handlers handlers = {
	.fn = {
		[CTL_T_LIST] = on_list,
		[CTL_T_SHOW] = on_show,
		[CTL_T_STATUS] = on_status,
		[CTL_T_SET] = on_set,
		[CTL_T_EVENT] = on_ignored,
		[CTL_T_STATS] = on_ignored,
	},
	.refuse_status = -EPERM,
	.refuse_text = "qpace-bench serves monitoring only",
};

void monitor_serve(struct monitor *m)
{
	int fd;

	if (m->lfd < 0)
		return;
	while ((fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		int slot = -1;
		for (int i = 0; i < MONITOR_CLIENTS; i++)
			if (m->cfd[i] < 0)
				slot = i;
		if (slot < 0) {
			close(fd);
			continue;
		}
		m->cfd[slot] = fd;
	}
	for (int i = 0; i < MONITOR_CLIENTS; i++) {
		struct client c = { m, m->cfd[i] };
		struct ctl_out out = { .send = send_now, .io = &c };

		if (c.fd < 0)
			continue;
		if (ctl_serve(c.fd, UINT_MAX, &handlers, m, &out)) {
			close(c.fd);
			m->cfd[i] = -1;
		}
		m->requests += out.requests;
		m->dropped += out.unsent;
	}
}

void monitor_close(struct monitor *m)
{
	for (int i = 0; i < MONITOR_CLIENTS; i++)
		if (m->cfd[i] >= 0)
			close(m->cfd[i]);
	if (m->lfd >= 0) {
		close(m->lfd);
		unlink(m->path);
	}
	m->lfd = -1;
}
