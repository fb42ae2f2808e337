/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Port backends: how frames get in and out of the process. One small ops table per kind,
 * like Redis's ae backends; the pipeline never sees a socket.
 *
 *   udp     one Ethernet frame per UDP datagram (QEMU -netdev dgram); sends to its
 *           configured remote until a well-formed Ethernet frame (not the switch's own)
 *           comes from another address, then to that one; with learn=off only to and
 *           from the configured remote. Every change is counted and logged (at most a
 *           line a second per port, with the changes it did not log)
 *   vxlan   RFC 7348: 8-byte VXLAN header (flags 0x08, VNI) in UDP, to and from a VTEP;
 *           inner UDP/TCP checksums a local VTEP left to offload are completed
 *   packet  AF_PACKET on a local interface; frames whose checksum the sender left to
 *           offload (veth) are completed from the virtio-net header
 *
 * All of them move up to SW_BATCH frames per system call (recvmmsg/sendmmsg).
 *
 *   shm     a shared-memory region of two frame rings with a soft host on this machine
 *           (qpace/shm_ring.h; io_shm.c): no system call per frame. Its UDP socket on
 *           local= carries only doorbells (empty datagrams, to remote=) for a side that
 *           sleeps. Its ring is read on every turn of the loop (pending), and armed
 *           before the loop sleeps (arm); the socket readable means a doorbell (wake)
 *
 *   udp+shm a udp port that also offers a shm port's rings (qpace-switch --star, unless
 *           --shm-offer off): its region's link is at shm_offer_path(local=), where a
 *           soft host on this machine whose attach= names local= finds it. Frames go by
 *           datagram until a host attaches (the region's attach count moves) or a frame
 *           comes through the ring, and by datagram again when a datagram frame is
 *           accepted (as udp learns a peer); empty datagrams are doorbells. A region
 *           that cannot be made leaves a plain udp port, with a line saying why
 *
 *   sim     no socket: each frame sent is handed to the virtual-time driver's callback
 *           (sim_tx, set after sw_fabric_create) with the model's leave time: at that
 *           time when the driver calls sw_fabric_emit with tx_early_ns 0, up to
 *           tx_early_ns before it otherwise; nothing is received (the driver calls
 *           sw_ingress itself)
 */
#ifndef SW_IO_H
#define SW_IO_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "conf.h"
#include "qpace/shm_ring.h"
#include "qpace/udp_gso.h"
#include "sw.h"

#define SW_IO_HDR 16    /* room before each frame for a backend header */

struct sw_rx_frame {
	uint8_t *data;
	uint16_t len;
	qp_time_ns ts_ns;   /* when the kernel received it (CLOCK_MONOTONIC), 0 unknown */
};

struct sw_io;

struct sw_io_ops {
	const char *name;
	/* @shm_path: an shm port's region link (the others ignore it) */
	int (*open)(struct sw_io *io, const struct sw_port_conf *c, const char *shm_path,
		    char *err, size_t len);
	/* Up to SW_BATCH frames without blocking: count (0 = none) or -errno. Frames that
	 * are not for us (wrong VNI, our own output) are skipped and counted in @skipped. */
	int (*recv)(struct sw_io *io, struct sw_rx_frame *rx, uint64_t *skipped);
	/* Send @n frames: how many the OS took; the rest are the caller's errors. */
	int (*send)(struct sw_io *io, const struct iovec *frames, unsigned n);
	/* Optional (shm). Frames wait that no readable fd announces: the loop calls recv on
	 * every turn while this says so. */
	bool (*pending)(struct sw_io *io);
	/* Optional (shm): the loop is about to sleep; false when frames came meanwhile. */
	bool (*arm)(struct sw_io *io);
	/* Optional (shm): the fd was readable (doorbells): take them, before recv. */
	void (*wake)(struct sw_io *io);
	/* Optional: free what open made beyond the fd and buffers. */
	void (*close)(struct sw_io *io);
};

/* A shm port's state beyond the socket (io_shm.c). */
struct sw_io_shm;

struct sw_io {
	const struct sw_io_ops *ops;
	int fd;
	struct sockaddr_in remote;   /* udp, vxlan */
	uint8_t vxhdr[8];            /* vxlan: the header we send */
	uint32_t vni;
	int ifindex;                 /* packet */
	uint64_t remote_changes;     /* udp: peer address learned */
	uint64_t remote_refused;     /* udp: datagrams from another address not followed */
	const char *port_name;       /* for the log */
	bool learn;                  /* udp: may follow a new peer */
	struct qp_gso gso;           /* udp: sends in runs (qpace/udp_gso.h) */
	uint8_t own_mac[6];          /* the switch's: a frame from it is a loop, not a peer */
	qp_time_ns logged_ns;        /* udp: the last change logged, and those not since */
	uint64_t unlogged;
	uint64_t kernel_drops;       /* dropped by the kernel before we could read them */
	uint32_t drops_seen;         /* the socket's own (32-bit) drop counter when last read */
	struct mmsghdr msg[SW_BATCH];
	struct iovec iov[SW_BATCH][2];
	struct sockaddr_storage name[SW_BATCH];
	uint8_t hdr[SW_BATCH][SW_IO_HDR];
	uint8_t cmsg[SW_BATCH][64];  /* SO_TIMESTAMPNS */
	qp_time_ns ts[SW_BATCH];     /* arrival of each frame of the last batch */
	uint8_t (*buf)[SW_FRAME_MAX];
	struct sw_io_shm *shm;       /* shm */
	/* sim: the driver's callback for each frame sent (with its leave time in the model,
	 * later than now when the driver runs with tx_early_ns), and its argument */
	void (*sim_tx)(void *arg, const uint8_t *frame, size_t len, qp_time_ns leave);
	void *sim_arg;
	const qp_time_ns *sim_leave;  /* the port's tx_leave, beside the iovecs sent */
};

/* Open the backend for @c into *@out (@shm_path: an shm port's region link, else ""). 0, or -errno with a message naming the address and
 * the reason. */
int sw_io_open(const struct sw_port_conf *c, const char *shm_path, struct sw_io **out,
	       char *err, size_t len);
void sw_io_close(struct sw_io *io);

extern const struct sw_io_ops sw_io_udp_ops;
extern const struct sw_io_ops sw_io_vxlan_ops;
extern const struct sw_io_ops sw_io_packet_ops;
extern const struct sw_io_ops sw_io_sim_ops;
extern const struct sw_io_ops sw_io_shm_ops;
extern const struct sw_io_ops sw_io_hybrid_ops;   /* udp+shm */

/* A shm port's counters, for the JSON dump: NULL for other ports. */
const struct sw_io_shm_stats *sw_io_shm_stats(const struct sw_io *io);
struct sw_io_shm_stats {
	struct shm_ring_stats rx, tx;     /* the ring to the switch, the ring from it */
	uint64_t doorbells_rx;            /* datagrams on the doorbell socket */
	uint64_t doorbells_tx;            /* doorbells sent (the host was waiting) */
	uint64_t doorbell_errors;         /* doorbells the OS refused */
	uint64_t oversize;                /* frames too long for a slot: not sent */
	uint64_t deferred;                /* frames that waited in the switch for room in the
					   * host's ring (a full ring), then went in order */
	uint64_t backlog_max;             /* the most that waited at once */
	uint64_t lost;                    /* frames lost: the ring and that backlog full */
	uint64_t ts_bad;                  /* a slot's time stamp ahead or > 100 ms old */
	/* udp+shm */
	bool offered, ring_mode;          /* the rings offered; in use now (else datagrams) */
	uint64_t attaches;                /* hosts that attached to the offered region */
	uint64_t mode_changes;            /* datagrams <-> rings */
};

/* Ask the kernel for receive timestamps on @fd. */
void sw_io_timestamps(int fd);
/* Frames the kernel dropped on @io's socket before we read them, so far (one
 * getsockopt: call when reporting, not per frame). */
uint64_t sw_io_kernel_drops(struct sw_io *io);
/* Shared by udp and vxlan: a non-blocking UDP socket bound to @local. */
int sw_io_udp_socket(const struct sockaddr_in *local, const char *what, char *err,
		     size_t len);
/* udp ports: the socket on c->local, the remote, learning (what: for messages). */
int sw_io_udp_setup(struct sw_io *io, const struct sw_port_conf *c, const char *what,
		    char *err, size_t len);
/* udp ports: may datagram @i of the last sw_io_recv_batch go in? (not truncated; from the
 * peer, or one worth following, which is then followed). 1 or 0. */
int sw_io_udp_accept(struct sw_io *io, int i);
/* recvmmsg into io->buf, the first @hlen bytes of each datagram into io->hdr, the
 * kernel's arrival time into io->ts: count (0 when nothing waits) or -errno. Arrival
 * times come from the kernel so that a process that falls behind does not squeeze
 * frames that arrived apart into one instant of the queue model. */
int sw_io_recv_batch(struct sw_io *io, size_t hlen);
/* sendmmsg of @n frames, each after @hlen bytes of @hdr, to @name (NULL: the bound
 * device), stepping over any the OS refuses: how many it took. */
int sw_io_send_batch(struct sw_io *io, const struct iovec *frames, unsigned n, const void *hdr,
		     size_t hlen, void *name, socklen_t namelen);

#endif
