/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's out-of-band exchange on a TCP stream: see pt_conn.h. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/soft.h"
#include "pt_conn.h"

#define PT_CYCLE_BUFFER 4096u        /* what perftest sends: the page size */
#define PT_CACHE_LINE 64u            /* perftest's DEF_CACHE_LINE_SIZE */
#define PT_POLL_MS 10                /* the longest one wait for the socket lasts */

int pt_conn_open(struct pt_conn *c, struct endpoint *e, char *err, size_t errlen)
{
	char port[8];

	memset(c, 0, sizeof(*c));
	c->e = e;
	c->client = e->c->server != NULL;
	snprintf(port, sizeof(port), "%" PRIu64, e->c->tcp_port);
	c->fd = c->client ? qp_tcp_dial(e->c->server, port, EP_DIAL_NS, err, errlen)
			  : qp_tcp_accept(NULL, port, EP_ACCEPT_NS, err, errlen);
	return c->fd < 0 ? c->fd : 0;
}

/* Wait until the socket is ready for @events, the endpoint running meanwhile. */
static int wait_fd(void *arg, int fd, short events, qp_time_ns deadline)
{
	struct pt_conn *c = arg;

	for (;;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = events }, { .fd = -1 } };
		qp_time_ns now = qp_now_ns(), wake = now + PT_POLL_MS * QP_NS_PER_MS;
		int ms, rc;

		if (deadline != QP_TIME_NEVER && now >= deadline)
			return -ETIMEDOUT;
		if (ep_stop)
			return -EINTR;
		if (c->e->soft) {
			pfd[1] = (struct pollfd){ .fd = qp_ctx_fd(c->e->ctx), .events = POLLIN };
			wake = qp_time_min(wake, host_deadline(&c->e->host));
			if (!qp_soft_wait_arm(c->e->ctx))
				wake = now;
		}
		if (deadline != QP_TIME_NEVER)
			wake = qp_time_min(wake, deadline);
		ms = wake > now ? (int)((wake - now + QP_NS_PER_MS - 1) / QP_NS_PER_MS) : 0;
		rc = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, ms);
		if (rc < 0 && errno != EINTR)
			return -errno;
		/* a frame woke us: the soft host takes it now (its deadline need not be due),
		 * as ep_idle does after a block */
		if (rc > 0 && pfd[1].fd >= 0 && pfd[1].revents)
			qp_ctx_progress(c->e->ctx, qp_now_ns());
		ep_service(c->e);
		if (rc > 0 && pfd[0].revents)
			return 0;
	}
}

static int io_all(struct pt_conn *c, void *buf, size_t len, bool out, qp_time_ns deadline)
{
	return qp_tcp_io(c->fd, buf, len, out, deadline, wait_fd, c);
}

/* perftest's ctx_xchg_data: the client writes, then reads; the server the other way. */
static int xchg(struct pt_conn *c, const void *mine, void *theirs, size_t len,
		qp_time_ns wait_ns, const char *what, char *err, size_t errlen)
{
	qp_time_ns deadline = wait_ns == QP_TIME_NEVER ? QP_TIME_NEVER : qp_now_ns() + wait_ns;
	int rc;

	if (c->client) {
		rc = io_all(c, (void *)(uintptr_t)mine, len, true, deadline);
		if (rc == 0)
			rc = io_all(c, theirs, len, false, deadline);
	} else {
		rc = io_all(c, theirs, len, false, deadline);
		if (rc == 0)
			rc = io_all(c, (void *)(uintptr_t)mine, len, true, deadline);
	}
	if (rc)
		return qp_errmsg(rc, err, errlen, "perftest exchange (%s) with the %s: %s", what,
				 c->client ? "server" : "client", strerror(-rc));
	return 0;
}

static int refused(int rc, const char *what, char *err, size_t errlen)
{
	return qp_errmsg(rc == -EMSGSIZE ? -EPROTO : rc, err, errlen,
			 "perftest exchange: the peer's %s is malformed (not perftest 4.5's "
			 "format)", what);
}

int pt_conn_setup(struct pt_conn *c, uint32_t mtu_bytes, char *err, size_t errlen)
{
	uint8_t v[PT_VERSION_LEN], pv[PT_VERSION_LEN], s[PT_SYS_LEN], ps[PT_SYS_LEN];
	uint8_t m[PT_MTU_LEN], pm[PT_MTU_LEN];
	uint32_t x;
	int rc;

	pt_version_encode(v, PT_VERSION);
	if ((rc = xchg(c, v, pv, sizeof(v), PT_SETUP_NS, "version", err, errlen)))
		return rc;
	if ((rc = pt_version_decode(&c->peer_version, pv, sizeof(pv))) < 0)
		return refused(rc, "version", err, errlen);
	if (c->peer_version < PT_VERSION_MIN_X100)
		return qp_errmsg(-EPROTO, err, errlen, "perftest exchange: the peer speaks version "
				 "%u.%02u, older than 5.70 (refused, as perftest refuses it)",
				 c->peer_version / 100, c->peer_version % 100);
	c->cycle_buffer = PT_CYCLE_BUFFER;
	c->cache_line = PT_CACHE_LINE;
	pt_u32_encode(s, PT_CYCLE_BUFFER);
	if ((rc = xchg(c, s, ps, sizeof(s), PT_SETUP_NS, "cycle buffer", err, errlen)))
		return rc;
	pt_u32_decode(&x, ps, sizeof(ps));
	if (x > c->cycle_buffer && x <= (1u << 30))
		c->cycle_buffer = x;
	pt_u32_encode(s, PT_CACHE_LINE);
	if ((rc = xchg(c, s, ps, sizeof(s), PT_SETUP_NS, "cache line", err, errlen)))
		return rc;
	pt_u32_decode(&x, ps, sizeof(ps));
	if (x > c->cache_line && x <= 4096)
		c->cache_line = x;
	if ((rc = pt_mtu_encode(m, mtu_bytes)) < 0)
		return qp_errmsg(rc, err, errlen, "perftest exchange: MTU %u", mtu_bytes);
	if ((rc = xchg(c, m, pm, sizeof(m), PT_SETUP_NS, "MTU", err, errlen)))
		return rc;
	if ((rc = pt_mtu_decode(&x, pm, sizeof(pm))) < 0)
		return refused(rc, "MTU", err, errlen);
	c->mtu_bytes = x < mtu_bytes ? x : mtu_bytes;
	return 0;
}

int pt_conn_keys(struct pt_conn *c, const struct pt_key *mine, struct pt_key *theirs,
		 qp_time_ns wait_ns, char *err, size_t errlen)
{
	uint8_t k[PT_KEY_LEN], pk[PT_KEY_LEN];
	int rc = pt_key_encode(k, mine);

	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "perftest exchange: local key out of range");
	if ((rc = xchg(c, k, pk, sizeof(k), wait_ns, "keys", err, errlen)))
		return rc;
	if ((rc = pt_key_decode(theirs, pk, sizeof(pk))) < 0)
		return refused(rc, "key message", err, errlen);
	return 0;
}

int pt_conn_report(struct pt_conn *c, const struct pt_bw_report *mine,
		   struct pt_bw_report *theirs, char *err, size_t errlen)
{
	uint8_t f[5][PT_REPORT_FIELD_LEN], pf[5][PT_REPORT_FIELD_LEN];
	struct pt_bw_report r;
	int rc = 0;

	pt_u64_encode(f[0], mine->size);
	pt_u64_encode(f[1], mine->iters);
	pt_double_encode(f[2], mine->bw_peak);
	pt_double_encode(f[3], mine->bw_avg);
	pt_double_encode(f[4], mine->msg_rate);
	for (int i = 0; i < 5 && rc == 0; i++)
		rc = xchg(c, f[i], pf[i], PT_REPORT_FIELD_LEN, PT_SETUP_NS, "BW report", err, errlen);
	if (rc)
		return rc;
	if (pt_u64_decode(&r.size, pf[0], 8) < 0 || pt_u64_decode(&r.iters, pf[1], 8) < 0 ||
	    pt_double_decode(&r.bw_peak, pf[2], 8) < 0 ||
	    pt_double_decode(&r.bw_avg, pf[3], 8) < 0 ||
	    pt_double_decode(&r.msg_rate, pf[4], 8) < 0)
		return refused(-EBADMSG, "BW report", err, errlen);
	*theirs = r;
	return 0;
}

int pt_conn_close(struct pt_conn *c, const struct pt_key *mine, char *err, size_t errlen)
{
	static const char done[PT_DONE_LEN] = "done";
	struct pt_key theirs;
	int rc = pt_conn_keys(c, mine, &theirs, QP_TIME_NEVER, err, errlen);

	if (rc == 0 && send(c->fd, done, sizeof(done), MSG_NOSIGNAL) != (ssize_t)sizeof(done))
		rc = qp_errmsg(-errno, err, errlen, "perftest exchange: done: %s", strerror(errno));
	pt_conn_drop(c);
	return rc;
}

void pt_conn_drop(struct pt_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
