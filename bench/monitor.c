/* The control-protocol server for the bench's agents: see monitor.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "qpace/ctl.h"
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

static void send_msg(struct monitor *m, int fd, const struct ctl_msg *msg)
{
	uint8_t buf[CTL_MAX_LEN];
	int n = ctl_encode(buf, sizeof(buf), msg);

	if (n < 0 || send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		m->dropped++;
}

static void send_reply(struct monitor *m, int fd, uint16_t id, int status, uint32_t count,
		       const char *text)
{
	struct ctl_msg r = { .type = CTL_T_REPLY, .id = id };

	r.u.reply.status = status;
	r.u.reply.count = count;
	snprintf(r.u.reply.text, sizeof(r.u.reply.text), "%s", text ? text : "");
	send_msg(m, fd, &r);
}

/* Views of @qpn (all QPs when @all) across the hosts; returns how many were sent. */
static uint32_t send_views(struct monitor *m, int fd, uint16_t id, bool all, uint32_t qpn)
{
	uint32_t n = 0;

	for (unsigned a = 0; a < m->nagents; a++) {
		for (uint32_t i = 0; i < agent_max_qps(m->agents[a]); i++) {
			struct ctl_msg q = { .type = CTL_T_QP, .id = id };
			if (agent_qp_view_at(m->agents[a], i, &q.u.qp) == 0 &&
			    (all || q.u.qp.reg.qpn == qpn)) {
				send_msg(m, fd, &q);
				n++;
			}
		}
	}
	return n;
}

static void handle(struct monitor *m, int fd, const struct ctl_msg *req)
{
	char err[CTL_TEXT_MAX] = "";
	uint32_t n;
	int rc = -ENOENT;

	m->requests++;
	switch (req->type) {
	case CTL_T_LIST:
		send_reply(m, fd, req->id, 0, send_views(m, fd, req->id, true, 0), "");
		return;
	case CTL_T_SHOW:
		n = send_views(m, fd, req->id, false, req->u.qpn);
		send_reply(m, fd, req->id, n ? 0 : -ENOENT, n, n ? "" : "no such qp in this bench");
		return;
	case CTL_T_STATUS: {
		struct ctl_msg a = { .type = CTL_T_AGENT, .id = req->id };
		a.u.agent.pid = (uint32_t)getpid();
		a.u.agent.uptime_ns = qp_now_ns() - m->start_ns;
		for (unsigned i = 0; i < m->nagents; i++) {
			const uint64_t *c = agent_counters(m->agents[i]);
			a.u.agent.qps += agent_qp_count(m->agents[i]);
			a.u.agent.max_qps += agent_max_qps(m->agents[i]);
			for (int k = 0; k < AGENT_C_COUNT; k++)
				a.u.agent.counters[k] += c[k];
		}
		send_msg(m, fd, &a);
		send_reply(m, fd, req->id, 0, 1, "");
		return;
	}
	case CTL_T_SET:
		for (unsigned a = 0; a < m->nagents && rc == -ENOENT; a++) {
			struct agent_qp_view v;
			if (agent_qp_view(m->agents[a], req->u.set.qpn, &v))
				continue;
			rc = req->u.set.what == CTL_SET_RATE
				     ? agent_set_rate(m->agents[a], req->u.set.qpn, req->u.set.rate_bps,
						      0, qp_now_ns(), err, sizeof(err))
				     : agent_set_algo(m->agents[a], req->u.set.qpn, req->u.set.algo,
						      req->u.set.params, 0, qp_now_ns(), err, sizeof(err));
		}
		send_reply(m, fd, req->id, rc, 0, rc == -ENOENT && !*err ? "no such qp" : err);
		return;
	case CTL_T_EVENT:
	case CTL_T_STATS:
		return;                   /* never answered */
	default:
		send_reply(m, fd, req->id, -EPERM, 0, "qpace-bench serves monitoring only");
	}
}

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
		uint8_t buf[CTL_MAX_LEN + 1];
		struct ctl_msg req;
		char err[160];
		ssize_t n = -1;

		while (m->cfd[i] >= 0 && (n = recv(m->cfd[i], buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
			if (n < 0) {
				if (errno != EAGAIN && errno != EWOULDBLOCK) {
					close(m->cfd[i]);
					m->cfd[i] = -1;
				}
				break;
			}
			if (ctl_decode(&req, buf, (size_t)n, err, sizeof(err)) == 0)
				handle(m, m->cfd[i], &req);
		}
		if (m->cfd[i] >= 0 && n == 0) {
			close(m->cfd[i]);
			m->cfd[i] = -1;
		}
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
