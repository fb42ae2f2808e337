/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* shm ports (io.h): a soft host on this machine behind two shared-memory frame rings
 * (qpace/shm_ring.h). The region is created here, at open, and its link removed at close.
 *
 * The doorbell is the port's UDP socket (local=, to remote=), not an eventfd: both event
 * loops already wait on exactly these descriptors (the switch's poll set, the bench's
 * epoll set over its hosts' qp_ctx_fd), and their addresses are already the ones --star
 * and the soft backend's attach= agree on; an eventfd would have to be handed across
 * (SCM_RIGHTS over one more socket) and added to both loops. A doorbell costs one empty
 * datagram, and only when the other side armed its flag before sleeping, so a busy
 * stream rings none. What arrives on the socket is only a wake-up: never parsed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/addr.h"
#include "io.h"

#define SHM_TS_MAX_AGE_NS (100 * QP_NS_PER_MS)
#define SHM_BACKLOG_RINGS 2u     /* the backlog holds this many rings' worth of frames */
#define SHM_BACKLOG_STUCK_NS (100 * QP_NS_PER_MS)   /* a host that took none for this long:
						      * its backlog is dropped (lost) */

/* Frames the model sent while the host's ring was full wait here, in order, and go into
 * the ring as the host drains it: a loop that was away for a few ms (the machine took
 * the CPU) comes back with that long of departures due at once, more than a ring holds,
 * and they are the model's deliveries, not losses to model. Fixed slots, allocated at
 * the first overflow; only what overflows this too is lost (shm_tx_lost). */
struct shm_backlog {
	uint8_t *bytes;              /* cap slots of SHM_FRAME_MAX */
	uint16_t *len;
	uint32_t head, tail, cap;    /* head - tail frames wait; cap a power of two */
	qp_time_ns stuck_since;      /* frames waited and none went in since; 0 = moving */
};

struct sw_io_shm {
	struct shm_region r;
	struct sw_io_shm_stats st;
	struct shm_backlog bl;
	bool armed;
	bool sock_ready;             /* udp+shm: the socket was readable; read it on recv */
	uint32_t attaches_seen;      /* udp+shm: the region's attach count when last read */
	qp_time_ns mode_logged_ns;   /* udp+shm: the last line about datagrams <-> rings */
	qp_time_ns logged_ns;        /* the last bad-ring line */
	uint64_t logged_bad;         /* bad slots and indices as of that line */
};

static void backlog_drain(struct sw_io_shm *s);
static void publish(struct sw_io *io);

/* The port's shm state (shm and udp+shm ports): false when out of memory. */
static bool state_new(struct sw_io *io)
{
	io->shm = calloc(1, sizeof(*io->shm));
	if (io->shm)
		io->shm->logged_ns = io->shm->mode_logged_ns = QP_TIME_NEVER;
	return io->shm != NULL;
}

/* Its region at @path: 0, or -errno with the message in @err and the state freed. */
static int region_open(struct sw_io *io, const struct sw_port_conf *c, const char *path,
		       char *err, size_t len)
{
	int rc = shm_region_create(&io->shm->r, path ? path : "",
				   c->shm_slots ? c->shm_slots : SHM_SLOTS_DEFAULT, err, len);

	if (rc) {
		free(io->shm);
		io->shm = NULL;
	}
	return rc;
}

/* The loop is up again (a doorbell came, or it looks before one could): none needed. */
static void disarm(struct sw_io_shm *s)
{
	if (s->armed) {
		s->armed = false;
		shm_ring_disarm(&s->r.rx);
	}
}

static int port_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
			 char *err, size_t len)
{
	char what[64];
	int rc;

	snprintf(what, sizeof(what), "shm port %s (doorbell)", c->name);
	io->fd = sw_io_udp_socket(&c->local, what, err, len);
	if (io->fd < 0)
		return -1;
	io->remote = c->remote;
	io->port_name = c->name;
	if (!state_new(io))
		return -ENOMEM;
	if ((rc = region_open(io, c, shm_path, err, len)))
		return rc;
	io->shm->st.ring_mode = true;
	return 0;
}

static void shm_close(struct sw_io *io)
{
	if (!io->shm)
		return;
	free(io->shm->bl.bytes);
	free(io->shm->bl.len);
	shm_region_close(&io->shm->r);
	free(io->shm);
	io->shm = NULL;
}

/* A peer that writes garbage into the region: counted by the ring, and a line at most
 * once a second per port with what was counted since. */
static void note_bad(struct sw_io *io, qp_time_ns now)
{
	struct sw_io_shm *s = io->shm;
	uint64_t bad = s->r.rx.st.bad_len + s->r.rx.st.bad_index + s->r.tx.st.bad_index;

	if (bad == s->logged_bad ||
	    (s->logged_ns != QP_TIME_NEVER && now < s->logged_ns + QP_NS_PER_S))
		return;
	fprintf(stderr, "qpace-switch: shm port %s: the host's ring is corrupt: %llu slots of "
		"impossible length, %llu indices out of range so far (skipped; counted)\n",
		io->port_name, (unsigned long long)(s->r.rx.st.bad_len),
		(unsigned long long)(s->r.rx.st.bad_index + s->r.tx.st.bad_index));
	s->logged_ns = now;
	s->logged_bad = bad;
}

static void shm_wake(struct sw_io *io)
{
	struct mmsghdr m[SW_BATCH];
	int n;

	memset(m, 0, sizeof(m));   /* no buffers: every datagram is truncated to nothing */
	do {
		n = recvmmsg(io->fd, m, SW_BATCH, MSG_DONTWAIT, NULL);
		if (n > 0)
			io->shm->st.doorbells_rx += (uint64_t)n;
	} while (n == SW_BATCH);
	disarm(io->shm);
}

/* The ring's frames into io->buf[@buf0..] and @rx (frames the backlog held first move on
 * as the host made room): how many. */
static int ring_take(struct sw_io *io, struct sw_rx_frame *rx, int buf0, uint64_t *skipped)
{
	struct sw_io_shm *s = io->shm;
	qp_time_ns now;
	int k = 0, bad = 0;

	disarm(s);
	if (s->bl.head != s->bl.tail) {   /* the host made room since: move them on */
		backlog_drain(s);
		publish(io);
	}
	while (buf0 + k < SW_BATCH) {
		qp_time_ns ts;
		int len = shm_ring_pop(&s->r.rx, io->buf[buf0 + k], SW_FRAME_MAX, &ts);

		if (len == 0)
			break;
		if (len < 0) {
			(*skipped)++;
			bad++;
			continue;
		}
		rx[k] = (struct sw_rx_frame){ .data = io->buf[buf0 + k], .len = (uint16_t)len,
					      .ts_ns = ts };
		k++;
	}
	shm_ring_release(&s->r.rx);
	/* The host's time of sending, as the kernel's stamp of a udp port: frames that waited
	 * for a late loop keep their arrival. Untrusted: ahead of now (read after the last
	 * pop) or too old, and the frame arrives now. */
	now = qp_now_ns();
	for (int i = 0; i < k; i++) {
		if (rx[i].ts_ns > now || now - rx[i].ts_ns > SHM_TS_MAX_AGE_NS) {
			s->st.ts_bad += rx[i].ts_ns != 0;
			rx[i].ts_ns = 0;
		}
	}
	if (bad)
		note_bad(io, now);
	return k;
}

static int shm_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	return ring_take(io, rx, 0, skipped);
}

static void ring_doorbell(struct sw_io *io)
{
	io->shm->st.doorbells_tx++;
	if (sendto(io->fd, NULL, 0, MSG_DONTWAIT, (const struct sockaddr *)&io->remote,
		   sizeof(io->remote)) < 0)
		io->shm->st.doorbell_errors++;
}

/* The backlog's oldest frames into the ring, as far as it has room. A host that takes
 * none for SHM_BACKLOG_STUCK_NS (gone, or stopped) loses them, so that the loop, which
 * does not sleep while frames wait, sleeps again. */
static void backlog_drain(struct sw_io_shm *s)
{
	struct shm_backlog *b = &s->bl;
	uint32_t before = b->tail;

	while (b->head != b->tail) {
		uint32_t i = b->tail & (b->cap - 1);
		uint8_t *d = shm_ring_slot(&s->r.tx);

		if (!d)
			break;
		memcpy(d, b->bytes + (size_t)i * SHM_FRAME_MAX, b->len[i]);
		shm_ring_commit(&s->r.tx, b->len[i], 0);
		b->tail++;
	}
	if (b->head == b->tail || b->tail != before) {
		b->stuck_since = 0;
		return;
	}
	qp_time_ns now = qp_now_ns();
	if (!b->stuck_since) {
		b->stuck_since = now;
	} else if (now - b->stuck_since > SHM_BACKLOG_STUCK_NS) {
		s->st.lost += b->head - b->tail;
		b->tail = b->head;
		b->stuck_since = 0;
	}
}

/* @f at the backlog's end: false when it is full (or cannot be made). */
static bool backlog_add(struct sw_io_shm *s, const struct iovec *f)
{
	struct shm_backlog *b = &s->bl;
	uint32_t i, waiting;

	if (!b->bytes) {
		b->cap = SHM_BACKLOG_RINGS * s->r.tx.nslots;
		b->bytes = malloc((size_t)b->cap * SHM_FRAME_MAX);
		b->len = malloc((size_t)b->cap * sizeof(*b->len));
		if (!b->bytes || !b->len) {
			free(b->bytes);
			free(b->len);
			b->bytes = NULL;
			b->len = NULL;
			return false;
		}
	}
	if (b->head - b->tail >= b->cap)
		return false;
	i = b->head++ & (b->cap - 1);
	memcpy(b->bytes + (size_t)i * SHM_FRAME_MAX, f->iov_base, f->iov_len);
	b->len[i] = (uint16_t)f->iov_len;
	s->st.deferred++;
	waiting = b->head - b->tail;
	if (waiting > s->st.backlog_max)
		s->st.backlog_max = waiting;
	return true;
}

static void publish(struct sw_io *io)
{
	struct sw_io_shm *s = io->shm;

	if (shm_ring_publish(&s->r.tx))
		ring_doorbell(io);
}

static int shm_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	struct sw_io_shm *s = io->shm;
	uint64_t bad = s->r.tx.st.bad_index;
	int taken = 0;

	backlog_drain(s);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *d = NULL;

		if (frames[i].iov_len > SHM_FRAME_MAX) {   /* a host takes none this long */
			s->st.oversize++;
			continue;
		}
		/* behind frames that wait, or the ring full: wait too (in order) */
		if (s->bl.head != s->bl.tail || !(d = shm_ring_slot(&s->r.tx))) {
			if (!backlog_add(s, &frames[i])) {
				s->st.lost += n - i;   /* the rest are lost, as from a full socket */
				break;
			}
			taken++;
			continue;
		}
		memcpy(d, frames[i].iov_base, frames[i].iov_len);
		shm_ring_commit(&s->r.tx, (uint32_t)frames[i].iov_len, 0);
		taken++;
	}
	publish(io);
	if (s->r.tx.st.bad_index != bad)
		note_bad(io, qp_now_ns());
	return taken;
}

/* Frames to read, or frames in the backlog to move on as the host makes room: the loop
 * calls recv every turn while either holds. */
static bool shm_pending(struct sw_io *io)
{
	return shm_ring_pending(&io->shm->r.rx) || io->shm->bl.head != io->shm->bl.tail;
}

static bool shm_arm(struct sw_io *io)
{
	if (io->shm->bl.head != io->shm->bl.tail)
		return false;   /* not asleep while frames wait for the host's ring */
	io->shm->armed = true;
	return shm_ring_arm(&io->shm->r.rx);
}

const struct sw_io_shm_stats *sw_io_shm_stats(const struct sw_io *io)
{
	if (!io || !io->shm)
		return NULL;
	if (io->shm->st.offered)
		io->shm->st.attaches = shm_region_attaches(&io->shm->r);
	io->shm->st.rx = io->shm->r.rx.st;
	io->shm->st.tx = io->shm->r.tx.st;
	return &io->shm->st;
}

const struct sw_io_ops sw_io_shm_ops = {
	.name = "shm",
	.open = port_open,
	.recv = shm_recv,
	.send = shm_send,
	.pending = shm_pending,
	.arm = shm_arm,
	.wake = shm_wake,
	.close = shm_close,
};

/* udp+shm (io.h): a udp port whose rings are offered too. Which way frames go is the
 * port's mode: rings from when a host attaches or a frame comes through them, datagrams
 * from when a datagram frame is accepted (the same rules as a udp port's learning, so a
 * hostile sender on this machine can do no more than it could to a plain udp port). */
static void set_mode(struct sw_io *io, bool ring, const char *why)
{
	struct sw_io_shm *s = io->shm;
	qp_time_ns now;

	if (s->st.ring_mode == ring)
		return;
	s->st.ring_mode = ring;
	s->st.mode_changes++;
	now = qp_now_ns();
	if (s->mode_logged_ns == QP_TIME_NEVER || now >= s->mode_logged_ns + QP_NS_PER_S) {
		fprintf(stderr, "qpace-switch: port %s: frames %s (%s; change %llu)\n",
			io->port_name, ring ? "through the offered shared-memory rings" :
			"by datagram", why, (unsigned long long)s->st.mode_changes);
		s->mode_logged_ns = now;
	}
}

static void check_attach(struct sw_io *io)
{
	struct sw_io_shm *s = io->shm;
	uint32_t a = shm_region_attaches(&s->r);

	if (a != s->attaches_seen) {
		s->attaches_seen = a;
		set_mode(io, true, "a host attached");
	} else if (s->st.ring_mode && !shm_region_attached(&s->r)) {
		set_mode(io, false, "its host detached");
	}
}

static int hybrid_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
		       char *err, size_t len)
{
	char what[64], e[256];

	snprintf(what, sizeof(what), "udp port %s", c->name);
	if (sw_io_udp_setup(io, c, what, err, len))
		return -1;
	if (!state_new(io))
		return -ENOMEM;
	if (region_open(io, c, shm_path, e, sizeof(e))) {
		/* the rings are an offer: without them the port is what it was asked to be */
		fprintf(stderr, "qpace-switch: port %s: rings not offered (%s): datagrams only\n",
			c->name, e);
		io->ops = &sw_io_udp_ops;
		return 0;
	}
	shm_region_offer(&io->shm->r, &c->local);
	io->shm->st.offered = true;
	return 0;
}

/* Datagrams first when the socket was readable (empty ones are doorbells), then the
 * ring, into the buffers the datagrams left. */
static int hybrid_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	struct sw_io_shm *s = io->shm;
	int n = 0, k = 0, r;

	check_attach(io);
	if (s->sock_ready) {
		n = sw_io_recv_batch(io, 0);
		s->sock_ready = n == SW_BATCH;   /* more may wait; else the fd will say */
		for (int i = 0; i < n; i++) {
			if (io->msg[i].msg_len == 0 && !(io->msg[i].msg_hdr.msg_flags & MSG_TRUNC)) {
				s->st.doorbells_rx++;
				continue;
			}
			if (!sw_io_udp_accept(io, i)) {
				(*skipped)++;
				continue;
			}
			rx[k++] = (struct sw_rx_frame){ .data = io->buf[i],
							.len = (uint16_t)io->msg[i].msg_len,
							.ts_ns = io->ts[i] };
		}
		if (k)
			set_mode(io, false, "a frame by datagram");
	}
	r = ring_take(io, rx + k, n > 0 ? n : 0, skipped);
	if (r && shm_region_attached(&s->r))   /* (not the last frames of a host that left) */
		set_mode(io, true, "a frame in the ring");
	return k + r ? k + r : n < 0 ? n : 0;
}

static int hybrid_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	check_attach(io);
	if (io->shm->st.ring_mode)
		return shm_send(io, frames, n);
	return sw_io_send_batch(io, frames, n, NULL, 0, &io->remote, sizeof(io->remote));
}

/* Readable: datagrams to read (frames or doorbells), on the recv that follows. */
static void hybrid_wake(struct sw_io *io)
{
	io->shm->sock_ready = true;
	disarm(io->shm);
}

const struct sw_io_ops sw_io_hybrid_ops = {
	.name = "udp+shm",
	.open = hybrid_open,
	.recv = hybrid_recv,
	.send = hybrid_send,
	.pending = shm_pending,
	.arm = shm_arm,
	.wake = hybrid_wake,
	.close = shm_close,
};
