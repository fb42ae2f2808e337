/* udp and vxlan ports: both are a UDP socket; vxlan adds the RFC 7348 header. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/frame.h"
#include "io.h"

#define VXLAN_HLEN 8
#define VXLAN_FLAG_I 0x08

static int udp_open(struct sw_io *io, const struct sw_port_conf *c, char *err, size_t len)
{
	char what[64];

	snprintf(what, sizeof(what), "udp port %s", c->name);
	io->fd = sw_io_udp_socket(&c->local, what, err, len);
	io->remote = c->remote;
	return io->fd < 0 ? -1 : 0;
}

static int udp_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	int n = sw_io_recv_batch(io, 0), k = 0;
	const struct sockaddr_in *last = NULL;

	for (int i = 0; i < n; i++) {
		if (io->msg[i].msg_hdr.msg_flags & MSG_TRUNC) {
			(*skipped)++;
			continue;
		}
		rx[k].ts_ns = io->ts[i];
		rx[k].data = io->buf[i];
		rx[k++].len = (uint16_t)io->msg[i].msg_len;
		last = (const struct sockaddr_in *)&io->name[i];
	}
	/* Send to whoever spoke last (QEMU -netdev dgram peers may move). */
	if (last && last->sin_family == AF_INET &&
	    (last->sin_addr.s_addr != io->remote.sin_addr.s_addr ||
	     last->sin_port != io->remote.sin_port)) {
		io->remote = *last;
		io->remote_changes++;
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

static int vxlan_open(struct sw_io *io, const struct sw_port_conf *c, char *err, size_t len)
{
	char what[64];

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
