/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A batch of frames as UDP datagrams, in runs with UDP GSO (qpace/udp_gso.h). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#include "qpace/udp_gso.h"

/* The messages for @frames[@from..@n): runs of one length (the last of a run may be
 * shorter, as GSO cuts it) when @runs, else one frame each. How many messages. */
static unsigned build(struct qp_gso *g, const struct iovec *frames, unsigned from, unsigned n,
		      void *name, socklen_t namelen, bool runs)
{
	unsigned m = 0;

	for (unsigned i = from; i < n; m++) {
		size_t seg = frames[i].iov_len, total = seg;
		unsigned j = i + 1;

		while (runs && j < n && j - i < QP_GSO_MAX_SEGS && frames[j].iov_len <= seg &&
		       total + frames[j].iov_len <= QP_GSO_MAX_BYTES) {
			total += frames[j].iov_len;
			if (frames[j++].iov_len < seg)
				break;
		}
		g->first[m] = i;
		g->msg[m].msg_hdr = (struct msghdr){ .msg_name = name, .msg_namelen = namelen,
						     .msg_iov = (struct iovec *)&frames[i],
						     .msg_iovlen = j - i };
		if (j - i > 1) {
			struct cmsghdr *c = &g->cmsg[m].align;
			uint16_t gso = (uint16_t)seg;

			g->msg[m].msg_hdr.msg_control = c;
			g->msg[m].msg_hdr.msg_controllen = sizeof(g->cmsg[m]);
			c->cmsg_level = SOL_UDP;
			c->cmsg_type = UDP_SEGMENT;
			c->cmsg_len = CMSG_LEN(sizeof(gso));
			memcpy(CMSG_DATA(c), &gso, sizeof(gso));
		}
		i = j;
	}
	g->first[m] = n;
	return m;
}

int qp_udp_send_frames(int fd, struct qp_gso *g, const struct iovec *frames, unsigned n,
		       void *name, socklen_t namelen)
{
	unsigned m, done = 0;
	int taken = 0;

	if (n > QP_GSO_BATCH_MAX)
		n = QP_GSO_BATCH_MAX;
	m = build(g, frames, 0, n, name, namelen, !g->off);
	while (done < m) {
		int r = sendmmsg(fd, g->msg + done, m - done, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		/* A run refused for what it is, not for room: GSO off, the rest one by one. */
		if (r < 0 && g->msg[done].msg_hdr.msg_iovlen > 1 && errno != EAGAIN &&
		    errno != EWOULDBLOCK && errno != ENOBUFS) {
			g->off = true;
			g->refused_errno = errno;
			m = build(g, frames, g->first[done], n, name, namelen, false);
			done = 0;
			continue;
		}
		if (r < 0) {
			done++;   /* these frames are lost; the caller counts them */
			continue;
		}
		for (int k = 0; k < r; k++) {
			taken += (int)(g->first[done + k + 1] - g->first[done + k]);
			g->runs += g->msg[done + k].msg_hdr.msg_iovlen > 1;
		}
		done += (unsigned)r;
	}
	return taken;
}
