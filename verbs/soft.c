/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The soft backend (qpace/soft.h): the QP API's ops over the emulated host and its RC
 * cores, and the I/O shell that moves Ethernet frames as UDP datagrams in batches. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/shm_ring.h"
#include "qpace/soft.h"
#include "soft_opts.h"

#define SOFT_SOCK_BUF_BYTES (4 << 20)
#define SOFT_PROGRESS_ROUNDS 8         /* batches each way per progress call, at most */
#define SOFT_SQ_WAIT_NS (10 * QP_NS_PER_S)
#define SOFT_RX_FRESH_NS (200 * QP_NS_PER_US)  /* soft_poll: a progress this recent will do */

struct soft_buf {
	uint8_t b[SOFT_FRAME_MAX + 1];     /* + 1: a datagram this long was cut */
};

struct soft_ctx {
	struct qp_ctx pub;
	struct soft_opts o;
	struct qp_soft_arg arg;
	struct soft_host *host;
	int fd;
	uint32_t next_key;
	bool tx_backlog;                   /* the last progress stopped with frames to send */
	bool rx_fresh;                     /* progress ran since the last empty CQ poll */
	bool rx_idle_poll;                 /* qp_soft_rx_idle since the last receive and CQ poll */
	qp_time_ns last_now;
	qp_time_ns rx_idle_ns;             /* qp_soft_rx_idle: the socket was empty then */
	struct qp_soft_io_stats io;
	uint64_t logged;                   /* soft_drop reasons already logged */
	struct soft_buf *rx, *tx;          /* SOFT_IO_BATCH each */
	struct shm_region *shm;            /* shm=: the switch port's rings; NULL = udp */
	bool shm_armed;                    /* qp_soft_wait_arm since the last progress */
	bool shm_bad_logged;
};

struct soft_qp {
	struct qp pub;
	struct rc_qp *rc;
};

static struct soft_ctx *to_sctx(struct qp_ctx *c)
{
	return qp_container_of(c, struct soft_ctx, pub);
}

static struct soft_qp *to_sqp(struct qp *q)
{
	return qp_container_of(q, struct soft_qp, pub);
}

static void soft_log(struct soft_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void soft_log(struct soft_ctx *c, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->pub.attr.log)
		c->pub.attr.log(c->pub.attr.log_arg, line);
	else
		fprintf(stderr, "qpace: %s\n", line);
}

/* ---- I/O ----
 * udp: each frame a datagram to the switch port (recvmmsg/sendmmsg). shm: each frame a
 * slot of the port's rings (qpace/shm_ring.h), the socket only for doorbells: rung to
 * the switch when it sleeps, and read here only after qp_soft_wait_arm (a doorbell comes
 * only when armed; one that comes late wakes the next wait, which reads it). */

/* The doorbells that woke us (or came late): read and dropped, never parsed. */
static void shm_take_doorbells(struct soft_ctx *c)
{
	struct mmsghdr m[SOFT_IO_BATCH];
	int n;

	c->shm_armed = false;
	shm_ring_disarm(&c->shm->rx);
	memset(m, 0, sizeof(m));
	do {
		n = recvmmsg(c->fd, m, SOFT_IO_BATCH, MSG_DONTWAIT, NULL);
		if (n > 0)
			c->io.doorbells_rx += (uint64_t)n;
	} while (n == SOFT_IO_BATCH);
}

static void shm_note_bad(struct soft_ctx *c)
{
	const struct shm_ring_stats *st = &c->shm->rx.st;
	const struct shm_ring_stats *tx = &c->shm->tx.st;

	c->io.shm_bad = st->bad_len + st->bad_index + tx->bad_index;
	if (!c->io.shm_bad || c->shm_bad_logged)
		return;
	c->shm_bad_logged = true;
	soft_log(c, "soft host: shm %s: the switch's ring is corrupt (%llu slots of "
		 "impossible length, %llu indices out of range); skipped, counted, not logged "
		 "again", c->o.shm_path[0] ? c->o.shm_path : "(the offered rings)",
		 (unsigned long long)st->bad_len,
		 (unsigned long long)(st->bad_index + tx->bad_index));
}

static int shm_rx_batch(struct soft_ctx *c, qp_time_ns now)
{
	int n = 0, bad = 0;

	if (c->shm_armed)
		shm_take_doorbells(c);
	while (n + bad < SOFT_IO_BATCH) {
		qp_time_ns ts;
		int len = shm_ring_pop(&c->shm->rx, c->rx[n].b, sizeof(c->rx[n].b), &ts);

		if (len == 0)
			break;
		if (len < 0) {
			bad++;
			continue;
		}
		soft_host_input(c->host, c->rx[n].b, (size_t)len, now);
		n++;
	}
	shm_ring_release(&c->shm->rx);
	if (n) {
		c->io.rx_batches++;
		c->io.rx_datagrams += (uint64_t)n;
	}
	if (bad)
		shm_note_bad(c);
	return n + bad;
}

/* Frames straight into the ring's slots; a full ring holds them back in the host (they
 * stay queued, where a full socket buffer loses them). One doorbell when the switch
 * sleeps. */
static int shm_tx_batch(struct soft_ctx *c, qp_time_ns now, bool *full)
{
	struct shm_ring *r = &c->shm->tx;
	uint64_t bad = r->st.bad_index;
	int n = 0;

	*full = false;
	while (n < SOFT_IO_BATCH) {
		uint8_t *d = shm_ring_slot(r);
		int len;

		if (!d) {
			*full = soft_host_tx_pending(c->host);
			c->io.shm_full += *full;
			break;
		}
		len = soft_host_output(c->host, now, d, SHM_FRAME_MAX);
		if (len <= 0)
			break;
		shm_ring_commit(r, (uint32_t)len, qp_now_ns());
		n++;
	}
	if (shm_ring_publish(r)) {
		c->io.doorbells_tx++;
		if (sendto(c->fd, NULL, 0, MSG_DONTWAIT, (const struct sockaddr *)&c->o.peer,
			   sizeof(c->o.peer)) < 0)
			c->io.tx_errors++;
	}
	if (n) {
		c->io.tx_batches++;
		c->io.tx_datagrams += (uint64_t)n;
	}
	if (r->st.bad_index != bad)
		shm_note_bad(c);
	return n;
}

static int rx_batch(struct soft_ctx *c, qp_time_ns now)
{
	struct mmsghdr m[SOFT_IO_BATCH];
	struct iovec iov[SOFT_IO_BATCH];
	int n;

	if (c->fd < 0)    /* virtual time: the driver hands frames in */
		return 0;
	if (c->shm)
		return shm_rx_batch(c, now);
	if (c->rx_idle_ns == now) {   /* the caller's readiness wait saw none */
		c->io.rx_idle_skips++;
		return 0;
	}

	for (int i = 0; i < SOFT_IO_BATCH; i++) {
		iov[i] = (struct iovec){ .iov_base = c->rx[i].b, .iov_len = sizeof(c->rx[i].b) };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	c->rx_idle_poll = false;
	n = recvmmsg(c->fd, m, SOFT_IO_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			c->io.rx_errors++;
		return 0;
	}
	c->io.rx_batches++;
	c->io.rx_datagrams += (uint64_t)n;
	for (int i = 0; i < n; i++) {
		if (m[i].msg_len > SOFT_FRAME_MAX || (m[i].msg_hdr.msg_flags & MSG_TRUNC)) {
			c->io.rx_oversize++;
			continue;
		}
		soft_host_input(c->host, c->rx[i].b, m[i].msg_len, now);
	}
	return n;
}

static int tx_batch(struct soft_ctx *c, qp_time_ns now)
{
	struct mmsghdr m[SOFT_IO_BATCH];
	struct iovec iov[SOFT_IO_BATCH];
	int n = 0, sent;

	if (c->arg.tx_ready) {   /* virtual time: the driver's NIC pulls the frames */
		if (soft_host_tx_pending(c->host))
			c->arg.tx_ready(c->arg.tx_ready_arg);
		return 0;
	}
	if (c->shm) {
		bool full;
		n = shm_tx_batch(c, now, &full);
		return full ? SOFT_IO_BATCH : n;   /* full: a backlog, progress again soon */
	}
	while (n < SOFT_IO_BATCH) {
		int len = soft_host_output(c->host, now, c->tx[n].b, sizeof(c->tx[n].b));

		if (len <= 0)
			break;
		iov[n] = (struct iovec){ .iov_base = c->tx[n].b, .iov_len = (size_t)len };
		m[n] = (struct mmsghdr){ .msg_hdr = { .msg_name = &c->o.peer,
						      .msg_namelen = sizeof(c->o.peer),
						      .msg_iov = &iov[n], .msg_iovlen = 1 } };
		n++;
	}
	for (int done = 0; done < n; done += sent) {
		sent = sendmmsg(c->fd, m + done, (unsigned)(n - done), 0);
		if (sent <= 0) {
			if (sent < 0 && errno == EINTR) {
				sent = 0;
				continue;
			}
			/* Lost like frames on a wire: the RC core retransmits them. */
			c->io.tx_errors += (uint64_t)(n - done);
			break;
		}
		c->io.tx_batches++;
		c->io.tx_datagrams += (uint64_t)sent;
	}
	return n;
}

/* Log the first drop of each reason, once. */
static void log_new_drops(struct soft_ctx *c)
{
	const struct soft_host_stats *st = soft_host_stats(c->host);
	uint64_t fresh = st->drop_seen & ~c->logged & ~(1ull << SOFT_DROP_RC);
	char ip[QP_IPV4_STRLEN];

	/* Called on every progress: the reasons not yet logged, from one word. */
	for (int d = 0; fresh && d < SOFT_DROP_COUNT; d++) {
		if (!(fresh & (1ull << d)))
			continue;
		c->logged |= 1ull << d;
		soft_log(c, "soft host %s: dropped a frame (%s); counted, not logged again",
			 qp_ipv4_fmt(c->o.ip, ip, sizeof(ip)),
			 soft_drop_str((enum soft_drop)d));
	}
}

static int soft_progress(struct qp_ctx *ctx, qp_time_ns now)
{
	struct soft_ctx *c = to_sctx(ctx);
	int work = 0, nrx = 0, ntx = 0;

	c->last_now = now;
	for (int round = 0; round < SOFT_PROGRESS_ROUNDS; round++) {
		nrx = c->fd < 0 ? 0 : rx_batch(c, now);   /* virtual time hands frames in */
		if (soft_host_deadline(c->host) <= now)
			soft_host_tick(c->host, now);
		ntx = tx_batch(c, now);
		work += nrx + ntx;
		if (nrx < SOFT_IO_BATCH && ntx < SOFT_IO_BATCH)
			break;
	}
	c->tx_backlog = ntx == SOFT_IO_BATCH;
	c->rx_fresh = true;
	log_new_drops(c);
	return work;
}

static qp_time_ns soft_deadline(struct qp_ctx *ctx)
{
	struct soft_ctx *c = to_sctx(ctx);

	/* shm: frames in the ring are input that no readable fd announces */
	if (c->tx_backlog || (c->shm && shm_ring_pending(&c->shm->rx)))
		return c->last_now;
	return soft_host_deadline(c->host);
}

static int soft_fd(struct qp_ctx *ctx)
{
	return to_sctx(ctx)->fd;
}

/* ---- context ---- */

static int open_socket(struct soft_ctx *c, char *err, size_t errlen)
{
	int buf = SOFT_SOCK_BUF_BYTES;
	char a[QP_HOSTPORT_STRLEN];

	c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return qp_errmsg(-errno, err, errlen, "soft: socket: %s", strerror(errno));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (bind(c->fd, (const struct sockaddr *)&c->o.bind, sizeof(c->o.bind)) < 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return qp_errmsg(-e, err, errlen, "soft: bind %s: %s",
				 qp_sockaddr_fmt(&c->o.bind, a, sizeof(a)), strerror(e));
	}
	return 0;
}

/* The shared-memory rings: shm=PATH, the region a switch's shm port made there (asked
 * for, so not finding it is fatal); shm=auto, the rings the switch port at peer= offers
 * on this machine, if it offers any (shm_region_attach_offer); none, or one not taken
 * (said once), and frames go by datagram as before. */
static int attach_shm(struct soft_ctx *c, char *err, size_t errlen)
{
	bool named = c->o.shm_path[0] != 0;
	char e[256];
	int rc;

	if (!(c->shm = calloc(1, sizeof(*c->shm))))
		return qp_errmsg(-ENOMEM, err, errlen, "soft: out of memory");
	rc = named ? shm_region_attach(c->shm, c->o.shm_path, err, errlen)
		   : shm_region_attach_offer(c->shm, &c->o.peer, e, sizeof(e));
	if (!rc)
		return 0;
	free(c->shm);
	c->shm = NULL;
	if (named)
		return rc;
	if (rc != -ENOENT)
		soft_log(c, "soft host: %s; frames by datagram", e);
	return 0;
}

static int soft_ctx_init(struct qp_ctx *ctx, char *err, size_t errlen)
{
	struct soft_ctx *c = to_sctx(ctx);
	struct soft_host_params hp = { 0 };
	const struct qp_soft_arg *arg = ctx->attr.backend_arg;
	bool wire = arg && arg->tx_ready;
	int rc = wire ? soft_opts_parse_wire(&c->o, ctx->attr.options, err, errlen)
		      : soft_opts_parse(&c->o, ctx->attr.options, err, errlen);

	c->fd = -1;
	c->rx_idle_ns = QP_TIME_NEVER;
	if (rc)
		return rc;
	if (arg)
		c->arg = *arg;
	hp.ip = c->o.ip;
	memcpy(hp.mac, c->o.mac, FRAME_ETH_ALEN);
	hp.max_qps = c->o.max_qps;
	hp.telemetry_port = c->o.telemetry_port;
	hp.icrc_skip = c->o.icrc_skip;
	hp.link_bps = c->o.link_bps;
	hp.telemetry = c->arg.telemetry;
	hp.telemetry_arg = c->arg.telemetry_arg;
	hp.cnp = c->arg.cnp;
	hp.cnp_arg = c->arg.cnp_arg;
	hp.rx_data = c->arg.rx_data;
	hp.rx_data_arg = c->arg.rx_data_arg;
	c->host = soft_host_create(&hp, err, errlen);
	/* the batches of a socket or shared-memory rings (a driver's wire moves frames one
	 * at a time, with buffers of its own: 280 KB a host it would not use) */
	if (!wire || c->o.shm_path[0]) {
		c->rx = calloc(SOFT_IO_BATCH, sizeof(*c->rx));
		c->tx = calloc(SOFT_IO_BATCH, sizeof(*c->tx));
	}
	if (!c->host || ((!wire || c->o.shm_path[0]) && (!c->rx || !c->tx)))
		rc = c->host ? qp_errmsg(-ENOMEM, err, errlen, "soft: out of memory") : -EINVAL;
	if (!rc && !wire)
		rc = open_socket(c, err, errlen);
	if (!rc && (c->o.shm_path[0] || (!wire && !c->o.shm_off)))
		rc = attach_shm(c, err, errlen);
	if (rc) {
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		soft_host_destroy(c->host);
		free(c->rx);
		free(c->tx);
		return rc;
	}
	c->next_key = 0x100;
	return 0;
}

static void soft_ctx_fini(struct qp_ctx *ctx)
{
	struct soft_ctx *c = to_sctx(ctx);

	if (c->shm) {
		shm_region_close(c->shm);
		free(c->shm);
	}
	if (c->fd >= 0)
		close(c->fd);
	soft_host_destroy(c->host);
	free(c->rx);
	free(c->tx);
}

/* ---- memory ---- */

static int soft_mr_init(struct qp_mr *mr)
{
	struct soft_ctx *c = to_sctx(mr->ctx);

	/* Keys as rxe makes them: an index and an 8-bit key; never 0. */
	mr->lkey = mr->rkey = (c->next_key++ << 8) | ((uint32_t)(uintptr_t)mr >> 4 & 0xff);
	return 0;
}

static bool soft_mr_find(void *arg, uint32_t rkey, struct rc_region *out)
{
	const struct soft_ctx *c = arg;

	for (const struct qp_mr *mr = c->pub.mrs; mr; mr = mr->next) {
		if (mr->rkey != rkey)
			continue;
		*out = (struct rc_region){ .base = mr->addr, .va = (uint64_t)(uintptr_t)mr->addr,
					   .len = mr->length,
					   .remote_write = mr->access & QP_ACCESS_REMOTE_WRITE,
					   .remote_read = mr->access & QP_ACCESS_REMOTE_READ,
					   .remote_atomic = mr->access & QP_ACCESS_REMOTE_ATOMIC };
		return true;
	}
	return false;
}

/* ---- QPs ---- */

static int soft_qp_init(struct qp *qp, char *err, size_t errlen)
{
	struct soft_ctx *c = to_sctx(qp->ctx);
	struct soft_qp *q = to_sqp(qp);
	const struct qp_attr *a = &qp->attr;
	struct rc_params p;
	int qpn;

	if (a->max_inline > RC_INLINE_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "soft: max_inline %u, accepted 0..%u",
				 a->max_inline, RC_INLINE_MAX);
	qpn = soft_host_qpn_reserve(c->host);
	if (qpn < 0)
		return qp_errmsg(qpn, err, errlen, "soft: all %u QPs of this host are in use",
				 c->o.max_qps);
	rc_params_init(&p);
	p.qpn = (uint32_t)qpn;
	p.sq_psn = qp_initial_psn(qp);
	p.sq_depth = a->sq_depth + (a->sq_pieces ? a->sq_pieces : SOFT_SQ_PIECES);
	p.rq_depth = a->rq_depth;
	p.max_inline = a->max_inline;
	p.window_pkts = c->o.window_pkts;
	if (p.ackreq_every > p.window_pkts)
		p.ackreq_every = p.window_pkts;
	p.rto_ns = qp_ack_timeout_ns(a->timeout);
	p.retry_cnt = a->retry_cnt;
	p.rnr_retry = a->rnr_retry;
	p.min_rnr_timer = a->min_rnr_timer;
	p.max_rd_atomic = a->max_rd_atomic;
	p.max_dest_rd_atomic = a->max_dest_rd_atomic;
	p.mr_find = soft_mr_find;
	p.mr_arg = c;
	p.on_event = c->arg.transport;
	p.event_arg = c->arg.transport_arg;
	if (c->o.ecn_echo) {
		p.ecn_echo = true;
		p.cnp_interval_ns = 0;   /* the echo replaces the NP's CNPs */
	}
	q->rc = rc_create(&p, err, errlen);
	if (!q->rc || soft_host_qp_attach(c->host, (uint32_t)qpn, q->rc) < 0) {
		rc_destroy(q->rc);
		soft_host_qpn_release(c->host, (uint32_t)qpn);
		return -EINVAL;
	}
	qp->qpn = (uint32_t)qpn;
	qp->local = (struct qp_conn_info){ .qpn = (uint32_t)qpn, .psn = p.sq_psn,
					   .mtu_bytes = a->mtu_bytes ? a->mtu_bytes
								     : c->o.mtu_bytes };
	qp->local.gid[10] = qp->local.gid[11] = 0xff;   /* ::ffff:a.b.c.d */
	qp->local.gid[12] = (uint8_t)(c->o.ip >> 24);
	qp->local.gid[13] = (uint8_t)(c->o.ip >> 16);
	qp->local.gid[14] = (uint8_t)(c->o.ip >> 8);
	qp->local.gid[15] = (uint8_t)c->o.ip;
	return 0;
}

static void soft_qp_fini(struct qp *qp)
{
	struct soft_ctx *c = to_sctx(qp->ctx);
	struct soft_qp *q = to_sqp(qp);

	soft_host_qpn_release(c->host, qp->qpn);
	rc_destroy(q->rc);
	q->rc = NULL;
}

static int soft_qp_connect(struct qp *qp, char *err, size_t errlen)
{
	struct soft_ctx *c = to_sctx(qp->ctx);
	uint32_t peer_ip = 0;
	struct rc_conn rcc = { .dest_qpn = qp->remote.qpn, .rq_psn = qp->remote.psn,
			       .mtu_bytes = qp->path_mtu_bytes,
			       .max_rd_atomic = qp->attr.max_rd_atomic };
	int rc;

	if (!qp_ipv6_v4mapped(qp->remote.gid, &peer_ip) || !peer_ip)
		return qp_errmsg(-EINVAL, err, errlen,
				 "soft: the peer's GID is not an IPv4-mapped address (::ffff:a.b.c.d)");
	rc = rc_connect(to_sqp(qp)->rc, &rcc);
	if (rc == 0)
		rc = soft_host_qp_connect(c->host, qp->qpn, peer_ip, qp->remote.qpn,
					  qp->attr.traffic_class);
	if (rc)
		return qp_errmsg(rc, err, errlen, "soft: qp 0x%06x: cannot connect (%s)", qp->qpn,
				 strerror(-rc));
	return 0;
}

static int soft_post_send(struct qp *qp, const struct qp_wr *wr)
{
	struct soft_ctx *c = to_sctx(qp->ctx);
	qp_time_ns now = qp_ctx_now(qp->ctx), give_up = now + SOFT_SQ_WAIT_NS;
	int rc;

	while ((rc = rc_post_send(to_sqp(qp)->rc, wr, now)) == -ENOMEM) {
		soft_host_qp_changed(c->host, qp->qpn);
		if (rc_sq_outstanding(to_sqp(qp)->rc) == 0)
			return -ENOSPC;   /* full of completions the caller has not polled */
		c->io.sq_full_waits++;
		if ((qp->attr.flags & QP_F_NONBLOCK) || now > give_up)
			return (qp->attr.flags & QP_F_NONBLOCK) ? -EAGAIN : -ETIMEDOUT;
		soft_progress(qp->ctx, now);
		now = qp_ctx_now(qp->ctx);
	}
	soft_host_qp_changed(c->host, qp->qpn);
	/* Start sending now, not at the next progress; in real time, when qp_ctx_progress
	 * hands pieces on, the ctx_progress that follows in the same call sends them all (and
	 * what its receive freed) in one batch. */
	if (rc == 0 && !(c->fd >= 0 && qp->ctx->progressing))
		tx_batch(c, now);
	return rc;
}

static int soft_post_recv(struct qp *qp, const struct qp_recv_wr *wr)
{
	int rc = rc_post_recv(to_sqp(qp)->rc, wr);

	soft_host_qp_changed(to_sctx(qp->ctx)->host, qp->qpn);
	return rc;
}

/* Like a NIC, an empty CQ makes progress on its own. In real time not when the context
 * made progress since the last empty look, less than SOFT_RX_FRESH_NS ago: what it
 * received is in the CQ already, and a second receive in the same turn of poll and
 * progress finds the socket empty (it was 2 recvmmsg per sendmmsg on a sender); nor, and
 * without reading the clock, the first empty poll after the caller's readiness wait found
 * the socket empty (qp_soft_rx_idle: it was an empty recvmmsg per idle host per pass of
 * the incast's loop, 95% of its receive calls). Progress that is due (qp_ctx_deadline)
 * is the caller's to run. */
static int soft_poll(struct qp *qp, struct qp_wc *wc, int n)
{
	struct soft_ctx *c = to_sctx(qp->ctx);
	struct rc_qp *rc = to_sqp(qp)->rc;
	int got = rc_poll_cq(rc, wc, n);

	if (got == 0 && c->rx_idle_poll) {
		c->rx_idle_poll = false;
		c->io.rx_folded++;
	} else if (got == 0) {
		qp_time_ns now = qp_ctx_now(qp->ctx);

		if (c->fd < 0 || !c->rx_fresh || now - c->last_now >= SOFT_RX_FRESH_NS) {
			soft_progress(qp->ctx, now);
			got = rc_poll_cq(rc, wc, n);
		} else {
			c->io.rx_folded++;
		}
	}
	c->rx_fresh = false;
	return got;
}

static void soft_get_stats(struct qp *qp, struct qp_stats *st)
{
	const struct rc_stats *r = rc_stats(to_sqp(qp)->rc);

	st->retransmissions = r->retrans_pkts;
	st->timeouts = r->timeouts;
	st->naks = r->naks_rx;
	st->rnrs = r->rnr_rx;
	st->have |= QP_STAT_RETRANS | QP_STAT_TIMEOUTS | QP_STAT_NAKS | QP_STAT_RNRS;
}

/* ---- soft-specific accessors ---- */

static bool is_soft(const struct qp_ctx *ctx)
{
	/* the context's ops are a resolved copy (qp.c): compare a function, not the name
	 * (a strcmp per call was 2.3% of the real-time incast's samples) */
	return ctx && ctx->ops && ctx->ops->ctx_init == soft_ctx_init;
}

struct soft_host *qp_soft_host(struct qp_ctx *ctx)
{
	return is_soft(ctx) ? to_sctx(ctx)->host : NULL;
}

const struct qp_soft_io_stats *qp_soft_io_stats(struct qp_ctx *ctx)
{
	return is_soft(ctx) ? &to_sctx(ctx)->io : NULL;
}

const char *qp_soft_transport(struct qp_ctx *ctx)
{
	if (!is_soft(ctx))
		return NULL;
	return to_sctx(ctx)->shm ? "shm" : to_sctx(ctx)->fd >= 0 ? "udp" : "driver";
}

void qp_soft_rx_idle(struct qp_ctx *ctx, qp_time_ns now)
{
	if (is_soft(ctx) && to_sctx(ctx)->fd >= 0) {
		to_sctx(ctx)->rx_idle_poll = true;
		to_sctx(ctx)->rx_idle_ns = now;
	}
}

bool qp_soft_wait_arm(struct qp_ctx *ctx)
{
	struct soft_ctx *c;

	if (!is_soft(ctx) || !(c = to_sctx(ctx))->shm)
		return true;
	c->shm_armed = true;
	return shm_ring_arm(&c->shm->rx) && !c->tx_backlog;
}

const struct rc_stats *qp_soft_rc_stats(struct qp *qp)
{
	return qp && is_soft(qp->ctx) ? rc_stats(to_sqp(qp)->rc) : NULL;
}

/* The UDP source port of this QP's frames (set at connect), so the agent can name its flow
 * exactly as the switch sees it. */
static uint16_t soft_udp_sport(const struct qp *qp)
{
	return qp->connected ? soft_roce_sport(qp->qpn, qp->remote.qpn) : 0;
}

static bool soft_send_full(const struct qp *qp)
{
	return rc_sq_full(to_sqp((struct qp *)qp)->rc);
}

static uint64_t soft_unacked_bytes(const struct qp *qp)
{
	return rc_sq_unacked_bytes(to_sqp((struct qp *)qp)->rc);
}

const struct qp_backend_ops qp_soft_ops = {
	.name = "soft",
	.summary = "userspace RoCEv2 RC endpoints on a qpace-switch port (no kernel RDMA)",
	.ctx_size = sizeof(struct soft_ctx),
	.qp_size = sizeof(struct soft_qp),
	.mr_size = sizeof(struct qp_mr),
	.ctx_init = soft_ctx_init,
	.ctx_fini = soft_ctx_fini,
	.ctx_fd = soft_fd,
	.ctx_deadline = soft_deadline,
	.ctx_progress = soft_progress,
	.mr_init = soft_mr_init,
	.qp_init = soft_qp_init,
	.qp_fini = soft_qp_fini,
	.qp_connect = soft_qp_connect,
	.post_send = soft_post_send,
	.send_full = soft_send_full,
	.post_recv = soft_post_recv,
	.poll = soft_poll,
	.get_stats = soft_get_stats,
	.udp_sport = soft_udp_sport,
	.unacked_bytes = soft_unacked_bytes,
};
