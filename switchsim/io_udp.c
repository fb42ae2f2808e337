/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* udp and vxlan ports: both are a UDP socket; vxlan adds the RFC 7348 header. A udp port
 * follows a new peer only on a well-formed frame, and never with learn=off (io.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/bytes.h"
#include "qpace/frame.h"
#include "io.h"

#define VXLAN_HLEN 8
#define VXLAN_FLAG_I 0x08

int sw_io_udp_setup(struct sw_io *io, const struct sw_port_conf *c, const char *what,
		    char *err, size_t len)
{
	io->fd = sw_io_udp_socket(&c->local, what, err, len);
	io->remote = c->remote;
	io->port_name = c->name;
	io->learn = !c->no_learn;
	io->logged_ns = QP_TIME_NEVER;
	return io->fd < 0 ? -1 : 0;
}

static int udp_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
			 char *err, size_t len)
{
	char what[64];

	(void)shm_path;
	snprintf(what, sizeof(what), "udp port %s", c->name);
	return sw_io_udp_setup(io, c, what, err, len);
}

static bool same_peer(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_addr.s_addr == b->sin_addr.s_addr && a->sin_port == b->sin_port;
}

/* May the port follow a new peer on this datagram? Only when it learns, and only on a
 * well-formed Ethernet frame from a unicast MAC that is not the switch's own (that would
 * be a loop): a stray or hostile datagram of any other kind must not take the port. */
static bool worth_following(const struct sw_io *io, const uint8_t *f, size_t len)
{
	static const uint8_t zero[6];
	struct frame_parsed p;

	return io->learn && frame_parse(&p, f, len) == 0 && !frame_mac_is_multicast(p.eth.src) &&
	       memcmp(p.eth.src, zero, 6) && memcmp(p.eth.src, io->own_mac, 6);
}

/* Re-point at @to, counted; logged with both addresses, at most once a second per port
 * (the line says how many changes went unlogged since the last). */
static void follow(struct sw_io *io, const struct sockaddr_in *to, qp_time_ns now)
{
	char was[QP_HOSTPORT_STRLEN], is[QP_HOSTPORT_STRLEN];

	io->remote_changes++;
	if (io->logged_ns == QP_TIME_NEVER || now >= io->logged_ns + QP_NS_PER_S) {
		fprintf(stderr, "qpace-switch: port %s: peer %s -> %s (a frame from the new "
			"address; change %llu, %llu not logged since the last line)\n",
			io->port_name,
			qp_sockaddr_fmt(&io->remote, was, sizeof(was)),
			qp_sockaddr_fmt(to, is, sizeof(is)),
			(unsigned long long)io->remote_changes, (unsigned long long)io->unlogged);
		io->logged_ns = now;
		io->unlogged = 0;
	} else {
		io->unlogged++;
	}
	io->remote = *to;
}

int sw_io_udp_accept(struct sw_io *io, int i)
{
	const struct sockaddr_in *from = (const struct sockaddr_in *)&io->name[i];

	if (io->msg[i].msg_hdr.msg_flags & MSG_TRUNC)
		return 0;
	/* A new peer (QEMU -netdev dgram peers may move) is followed on a real frame. */
	if (from->sin_family == AF_INET && !same_peer(from, &io->remote)) {
		if (worth_following(io, io->buf[i], io->msg[i].msg_len)) {
			follow(io, from, io->ts[i]);
		} else {
			io->remote_refused++;
			if (!io->learn)   /* fixed: only the configured peer is heard */
				return 0;
		}
	}
	return 1;
}

static int udp_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	int n = sw_io_recv_batch(io, 0), k = 0;

	for (int i = 0; i < n; i++) {
		if (!sw_io_udp_accept(io, i)) {
			(*skipped)++;
			continue;
		}
		rx[k].ts_ns = io->ts[i];
		rx[k].data = io->buf[i];
		rx[k++].len = (uint16_t)io->msg[i].msg_len;
	}
	return n < 0 ? n : k;
}

static int udp_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	return sw_io_send_batch(io, frames, n, NULL, 0, &io->remote, sizeof(io->remote));
}

const struct sw_io_ops sw_io_udp_ops = {
	.name = "udp",
	.open = udp_open,
	.recv = udp_recv,
	.send = udp_send,
};

static int vxlan_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
			 char *err, size_t len)
{
	char what[64];

	(void)shm_path;

	snprintf(what, sizeof(what), "vxlan port %s", c->name);
	io->fd = sw_io_udp_socket(&c->local, what, err, len);
	io->remote = c->remote;
	io->vni = c->vni;
	memset(io->vxhdr, 0, sizeof(io->vxhdr));
	io->vxhdr[0] = VXLAN_FLAG_I;
	qp_put24(io->vxhdr + 4, c->vni);
	return io->fd < 0 ? -1 : 0;
}

static int vxlan_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	int n = sw_io_recv_batch(io, VXLAN_HLEN), k = 0;

	for (int i = 0; i < n; i++) {
		const struct sockaddr_in *from = (const struct sockaddr_in *)&io->name[i];
		const uint8_t *h = io->hdr[i];
		if ((io->msg[i].msg_hdr.msg_flags & MSG_TRUNC) ||
		    io->msg[i].msg_len < VXLAN_HLEN + FRAME_ETH_HLEN || !(h[0] & VXLAN_FLAG_I) ||
		    qp_get24(h + 4) != io->vni ||
		    (io->remote.sin_addr.s_addr && from->sin_addr.s_addr != io->remote.sin_addr.s_addr)) {
			(*skipped)++;
			continue;
		}
		rx[k].ts_ns = io->ts[i];
		rx[k].data = io->buf[i];
		rx[k].len = (uint16_t)(io->msg[i].msg_len - VXLAN_HLEN);
		/* A VTEP on this machine (a namespace over veth) may leave the inner checksum
		 * to offload that never happens on the way to a socket: finish it. */
		frame_complete_partial_csum(rx[k].data, rx[k].len);
		k++;
	}
	return n < 0 ? n : k;
}

static int vxlan_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	return sw_io_send_batch(io, frames, n, io->vxhdr, VXLAN_HLEN, &io->remote,
				sizeof(io->remote));
}

const struct sw_io_ops sw_io_vxlan_ops = {
	.name = "vxlan",
	.open = vxlan_open,
	.recv = vxlan_recv,
	.send = vxlan_send,
};
