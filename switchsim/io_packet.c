/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* packet ports: AF_PACKET on a local interface (veth, tap).
 *
 * The socket asks for a virtio-net header with every frame (PACKET_VNET_HDR): frames a
 * namespace sends over veth leave their UDP/TCP checksum to offload, and the header says
 * where it goes (NEEDS_CSUM, csum_start, csum_offset); we complete it before forwarding,
 * or the receiver would drop them. Our own transmissions are not read back
 * (PACKET_IGNORE_OUTGOING, and PACKET_OUTGOING frames skipped on older kernels).
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "qpace/bytes.h"
#include "qpace/errmsg.h"
#include "io.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define VNET_HLEN sizeof(struct virtio_net_hdr)

static int packet_open(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
			 char *err, size_t len)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	int on = 1, sz = 32 << 20;

	(void)shm_path;

	io->ifindex = (int)if_nametoindex(c->dev);
	if (!io->ifindex)
		return qp_errmsg(-errno, err, len, "packet port %s: no interface '%s': %s",
				 c->name, c->dev, strerror(errno));
	io->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (io->fd < 0)
		return qp_errmsg(-errno, err, len,
				 "packet port %s on %s: socket(AF_PACKET): %s (needs root or "
				 "CAP_NET_RAW)", c->name, c->dev, strerror(errno));
	if (setsockopt(io->fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)) < 0)
		return qp_errmsg(-errno, err, len, "packet port %s on %s: PACKET_VNET_HDR: %s",
				 c->name, c->dev, strerror(errno));
	setsockopt(io->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &on, sizeof(on));
	sw_io_timestamps(io->fd);
	if (setsockopt(io->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(io->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(io->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(io->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sll.sll_ifindex = io->ifindex;
	if (bind(io->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return qp_errmsg(-errno, err, len, "packet port %s: cannot bind to %s: %s",
				 c->name, c->dev, strerror(errno));
	mr.mr_ifindex = io->ifindex;
	if (setsockopt(io->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return qp_errmsg(-errno, err, len, "packet port %s: promiscuous mode on %s: %s",
				 c->name, c->dev, strerror(errno));
	return 0;
}

/* Finish a checksum the sender left to offload. False when the header is impossible. */
static bool complete_csum(const struct virtio_net_hdr *h, uint8_t *f, size_t len)
{
	size_t start = h->csum_start, at = start + h->csum_offset;
	uint16_t c;

	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return true;
	if (start >= len || at + 2 > len)
		return false;
	c = frame_csum_fold(frame_csum_add(0, f + start, len - start));
	qp_put16(f + at, c ? c : 0xffff);
	return true;
}

static int packet_recv(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped)
{
	int n = sw_io_recv_batch(io, VNET_HLEN), k = 0;

	for (int i = 0; i < n; i++) {
		const struct sockaddr_ll *from = (const struct sockaddr_ll *)&io->name[i];
		struct virtio_net_hdr vh;
		size_t len = io->msg[i].msg_len;

		memcpy(&vh, io->hdr[i], sizeof(vh));
		if (from->sll_pkttype == PACKET_OUTGOING) {
			(*skipped)++;
			continue;
		}
		/* GSO super-frames and truncated reads are larger than a port's MTU: dropped. */
		if (len < VNET_HLEN || (io->msg[i].msg_hdr.msg_flags & MSG_TRUNC) ||
		    vh.gso_type != VIRTIO_NET_HDR_GSO_NONE ||
		    !complete_csum(&vh, io->buf[i], len - VNET_HLEN)) {
			(*skipped)++;
			continue;
		}
		rx[k].ts_ns = io->ts[i];
		rx[k].data = io->buf[i];
		rx[k++].len = (uint16_t)(len - VNET_HLEN);
	}
	return n < 0 ? n : k;
}

static int packet_send(struct sw_io *io, const struct iovec *frames, unsigned n)
{
	static const struct virtio_net_hdr none = { .gso_type = VIRTIO_NET_HDR_GSO_NONE };

	return sw_io_send_batch(io, frames, n, &none, VNET_HLEN, NULL, 0);
}

const struct sw_io_ops sw_io_packet_ops = {
	.name = "packet",
	.open = packet_open,
	.recv = packet_recv,
	.send = packet_send,
};
