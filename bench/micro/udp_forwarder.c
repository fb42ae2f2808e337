/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A plain recvmmsg/sendmmsg UDP forwarder (see udp_forwarder.h). */
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp_forwarder.h"

#define BATCH 32
#define FRAME 2048

void bench_udp_forward(int in, const struct sockaddr_in *to)
{
	static unsigned char buf[BATCH][FRAME];
	struct mmsghdr rx[BATCH], tx[BATCH];
	struct iovec iov[BATCH];

	signal(SIGTERM, SIG_DFL);
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], FRAME };
			rx[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(in, rx, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			iov[i].iov_len = rx[i].msg_len;
			tx[i].msg_hdr = (struct msghdr){ .msg_name = (void *)to,
							 .msg_namelen = sizeof(*to),
							 .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		for (int done = 0; done < n;) {
			int r = sendmmsg(in, tx + done, (unsigned)(n - done), 0);
			done += r > 0 ? r : 1;
		}
	}
}
