/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Backend selection and the parts every backend shares. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/udp_gso.h"
#include "io.h"

static const struct sw_io_ops *const io_ops[] = {
	[SW_PORT_UDP] = &sw_io_udp_ops,
	[SW_PORT_VXLAN] = &sw_io_vxlan_ops,
	[SW_PORT_PACKET] = &sw_io_packet_ops,
	[SW_PORT_SIM] = &sw_io_sim_ops,
	[SW_PORT_SHM] = &sw_io_shm_ops,
};

int sw_io_udp_socket(const struct sockaddr_in *local, const char *what, char *err, size_t len)
{
	char a[64];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), sz = 32 << 20;

	if (fd < 0)
		return qp_errmsg(-errno, err, len, "%s: socket: %s", what, strerror(errno));
	/* Large enough to ride out a stall of tens of ms at a few 100k frames/s (root may
	 * exceed rmem_max). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sw_io_timestamps(fd);
	/* Bound to 127/8, the socket can only send over loopback (64 KB MTU), so none of its
	 * datagrams is ever fragmented: DF changes nothing but the carrier's IP ID (0, an
	 * atomic datagram, RFC 6864). Without DF the kernel draws every ID from its shared
	 * hashed counters, one atomic per datagram on a cache line that every other sender
	 * between the same two loopback addresses writes too (6.7% of the switch's CPU in
	 * the switch-bench profile, where the load generator sends on the other core). */
	if ((ntohl(local->sin_addr.s_addr) >> 24) == 127) {
		int probe = IP_PMTUDISC_PROBE;
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &probe, sizeof(probe));
	}
	if (bind(fd, (const struct sockaddr *)local, sizeof(*local)) < 0) {
		int e = errno;

		close(fd);
		return qp_errmsg(-e, err, len, "%s: cannot bind %s: %s", what,
				 qp_sockaddr_fmt(local, a, sizeof(a)), strerror(e));
	}
	return fd;
}

void sw_io_timestamps(int fd)
{
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
}

/* The socket's drop counter (sk_drops, the figure SO_RXQ_OVFL would attach to every
 * datagram once the first drop happened: a second control message per frame), read when
 * the counters are reported instead. It is 32 bits wide: deltas are accumulated. */
uint64_t sw_io_kernel_drops(struct sw_io *io)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (io->fd >= 0 && !getsockopt(io->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) &&
	    len > SK_MEMINFO_DROPS * sizeof(mem[0])) {
		io->kernel_drops += (uint32_t)(mem[SK_MEMINFO_DROPS] - io->drops_seen);
		io->drops_seen = mem[SK_MEMINFO_DROPS];
	}
	return io->kernel_drops;
}

/* Kernel timestamps are CLOCK_REALTIME: moved onto CLOCK_MONOTONIC with the offset read
 * now, and never later than now. */
static void arrival_times(struct sw_io *io, int n)
{
	struct timespec rt;
	qp_time_ns mono = qp_now_ns(), real;

	clock_gettime(CLOCK_REALTIME, &rt);
	real = (qp_time_ns)rt.tv_sec * QP_NS_PER_S + (qp_time_ns)rt.tv_nsec;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &io->msg[i].msg_hdr;
		io->ts[i] = mono;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;
				qp_time_ns t;
				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				t = (qp_time_ns)ts.tv_sec * QP_NS_PER_S + (qp_time_ns)ts.tv_nsec;
				if (t <= real && real - t < mono)
					io->ts[i] = mono - (real - t);
			}
		}
	}
}

int sw_io_recv_batch(struct sw_io *io, size_t hlen)
{
	int n;

	for (unsigned i = 0; i < SW_BATCH; i++) {
		struct msghdr *h = &io->msg[i].msg_hdr;
		io->iov[i][0] = (struct iovec){ io->hdr[i], hlen };
		io->iov[i][1] = (struct iovec){ io->buf[i], SW_FRAME_MAX };
		*h = (struct msghdr){ .msg_name = &io->name[i], .msg_namelen = sizeof(io->name[i]),
				      .msg_iov = hlen ? io->iov[i] : io->iov[i] + 1,
				      .msg_iovlen = hlen ? 2 : 1, .msg_control = io->cmsg[i],
				      .msg_controllen = sizeof(io->cmsg[i]) };
	}
	do
		n = recvmmsg(io->fd, io->msg, SW_BATCH, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	arrival_times(io, n);
	return n;
}

/* sendmmsg, stepping over a datagram the OS refuses. Bare frames to an address (udp
 * ports) go through qp_udp_send_frames, in runs when GSO is on and one by one when not;
 * frames behind a header (vxlan, packet) are stepped here. */
int sw_io_send_batch(struct sw_io *io, const struct iovec *frames, unsigned n, const void *hdr,
		     size_t hlen, void *name, socklen_t namelen)
{
	unsigned done = 0;
	int taken = 0;

	if (!hlen && name) {   /* udp (qpace/udp_gso.h) */
		bool was_off = io->gso.off;

		taken = qp_udp_send_frames(io->fd, &io->gso, frames, n, name, namelen);
		if (io->gso.off && !was_off)
			fprintf(stderr, "qpace-switch: port %s: the OS refused a segmented send "
				"(UDP_SEGMENT: %s): a datagram per frame from now on\n",
				io->port_name ? io->port_name : "?", strerror(io->gso.refused_errno));
		return taken;
	}

	for (unsigned i = 0; i < n; i++) {
		io->iov[i][0] = (struct iovec){ (void *)hdr, hlen };
		io->iov[i][1] = frames[i];
		io->msg[i].msg_hdr = (struct msghdr){
			.msg_name = name, .msg_namelen = namelen,
			.msg_iov = hlen ? io->iov[i] : io->iov[i] + 1, .msg_iovlen = hlen ? 2 : 1 };
	}
	while (done < n) {
		int r = sendmmsg(io->fd, io->msg + done, n - done, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			done++;   /* this one is lost; the caller counts it */
			continue;
		}
		done += (unsigned)r;
		taken += r;
	}
	return taken;
}

int sw_io_open(const struct sw_port_conf *c, const char *shm_path, struct sw_io **out,
	       char *err, size_t len)
{
	struct sw_io *io;
	int rc;

	if ((size_t)c->kind >= sizeof(io_ops) / sizeof(io_ops[0]) || !io_ops[c->kind])
		return qp_errmsg(-EINVAL, err, len, "port %s: not an I/O port", c->name);
	io = calloc(1, sizeof(*io));
	if (io && c->kind != SW_PORT_SIM)   /* receive buffers: a sim port receives nothing */
		io->buf = malloc(SW_BATCH * sizeof(*io->buf));
	if (!io || (!io->buf && c->kind != SW_PORT_SIM)) {
		free(io);
		return qp_errmsg(-ENOMEM, err, len, "port %s: out of memory", c->name);
	}
	/* a udp port given a region's path offers its rings too */
	io->ops = c->kind == SW_PORT_UDP && shm_path && *shm_path ? &sw_io_hybrid_ops
								 : io_ops[c->kind];
	io->fd = -1;
	rc = io->ops->open(io, c, shm_path, err, len);
	if (rc < 0) {
		sw_io_close(io);
		return rc;
	}
	*out = io;
	return 0;
}

void sw_io_close(struct sw_io *io)
{
	if (!io)
		return;
	if (io->ops && io->ops->close)
		io->ops->close(io);
	if (io->fd >= 0)
		close(io->fd);
	free(io->buf);
	free(io);
}
