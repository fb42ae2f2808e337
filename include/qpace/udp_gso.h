/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Sending a batch of frames as UDP datagrams with UDP GSO (UDP_SEGMENT, Linux 4.18): a
 * run of frames of one length to one address goes down the stack as one datagram of many
 * segments and is cut into one datagram per frame below the socket (loopback's or a NIC's
 * segmentation), so a receiver still reads one frame per datagram; the syscall, route and
 * socket work is paid once per run instead of once per frame. Used by qpace-switch's udp
 * ports with --gso on (off by default: docs/performance.md): in switch-bench's profile 88% of the switch's CPU was the kernel's, most of it
 * per datagram. Not (yet) by the soft backend's socket: its senders, cheaper by it,
 * overflow the real-time incast's buffer in the first RTT as virtual time's do, but
 * recover by 67 ms timeouts where virtual time's do not (docs/performance.md, "UDP GSO").
 * A run the OS refuses (a device that cannot
 * segment, an MTU below the frames, a socket without UDP checksums) turns GSO off for that
 * sender, which from then on sends a datagram per frame: nothing is lost to the refusal. */
#ifndef QPACE_UDP_GSO_H
#define QPACE_UDP_GSO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define QP_GSO_BATCH_MAX 64u      /* frames per call */
#define QP_GSO_MAX_SEGS 64u       /* the kernel's UDP_MAX_SEGMENTS */
#define QP_GSO_MAX_BYTES 65000u   /* a run's bytes: below what one IPv4 datagram carries */

struct qp_gso {
	struct mmsghdr msg[QP_GSO_BATCH_MAX];
	unsigned first[QP_GSO_BATCH_MAX + 1];   /* msg[i] is frames[first[i]..first[i+1]) */
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(uint16_t))];
	} cmsg[QP_GSO_BATCH_MAX];
	bool off;                 /* refused once: a datagram per frame */
	int refused_errno;        /* why (for the caller's one line) */
	uint64_t runs;            /* sends that carried more than one frame */
};

/* Send @frames[0..@n) (n <= QP_GSO_BATCH_MAX; each at most 64 KiB) on the UDP socket @fd
 * to @name, in runs unless @g->off; MSG_DONTWAIT. How many frames the OS took: a message
 * it refuses for another reason (a full buffer) is stepped over, its frames lost, which
 * the caller counts. Sets @g->off (once; the caller may say so) when a run was refused,
 * and sends that run and the rest a datagram each. */
int qp_udp_send_frames(int fd, struct qp_gso *g, const struct iovec *frames, unsigned n,
		       void *name, socklen_t namelen);

#endif
