/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One shape for a server of the control protocol (qpace/ctl.h): what qpaced's socket and
 * qpace-bench's monitoring socket share. A table of handlers, one per message type; the
 * server reads each request from a non-blocking SOCK_SEQPACKET connection, refuses what is
 * too long or does not decode (with a REPLY carrying the reason and the request's id), and
 * calls the handler of its type, which answers through a struct ctl_out.
 *
 * The I/O around it stays the caller's: when to read (a libev watcher, a poll loop) and
 * where messages go (queued for later, sent at once) — ctl_out's @send gets each encoded
 * message. Nothing here depends on the agent or on libev.
 *
 *     static const struct ctl_handlers h = {
 *             .fn = { [CTL_T_LIST] = on_list, [CTL_T_STATUS] = on_status },
 *             .refuse_status = -EPERM, .refuse_text = "monitoring only",
 *     };
 *     struct ctl_out out = { .send = deliver, .io = conn };
 *     rc = ctl_serve(fd, 64, &h, ctx, &out);
 */
#ifndef QPACE_CTL_SERVER_H
#define QPACE_CTL_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/ctl.h"

/* Where a request's answers go. */
struct ctl_out {
	/* Deliver one encoded message (queue it, or send it). */
	void (*send)(void *io, const uint8_t *msg, size_t len);
	void *io;
	uint16_t id;            /* set by the server: the request's id, echoed in answers */
	unsigned requests;      /* messages that decoded (answered, refused or ignored) */
	unsigned unsent;        /* messages that could not be encoded (counted, not sent) */
};

/* Send @m (its id set to the request's). 0, or the ctl_encode error (counted in unsent). */
int ctl_out_send(struct ctl_out *o, struct ctl_msg *m);
/* The REPLY that ends a request: @text cut to CTL_TEXT_MAX, unprintable bytes as '?'. */
int ctl_out_reply(struct ctl_out *o, int status, uint32_t count, const char *text);

typedef void (*ctl_handler)(void *ctx, const struct ctl_msg *req, struct ctl_out *out);

struct ctl_handlers {
	/* One per type; a handler sends what the request asks and its REPLY (or nothing:
	 * EVENT and STATS are never answered). */
	ctl_handler fn[CTL_T_COUNT];
	/* A type without a handler is answered with this status and text. */
	int refuse_status;
	const char *refuse_text;
	/* Told about each message that is too long or does not decode (may be NULL). */
	void (*malformed)(void *ctx, const char *why);
};

/* One received message of @n bytes (@n beyond CTL_MAX_LEN: it was that long and cut): a
 * message too long is answered -EMSGSIZE, one that does not decode -EINVAL with the
 * reason (with its id when the header is there), the rest go to their handler. */
void ctl_dispatch(const struct ctl_handlers *h, void *ctx, const uint8_t *buf, size_t n,
		  struct ctl_out *out);

/* Read and dispatch up to @max requests waiting on the non-blocking SOCK_SEQPACKET socket
 * @fd. 0: none left, or @max done; 1: the peer closed the connection; -errno: it failed. */
int ctl_serve(int fd, unsigned max, const struct ctl_handlers *h, void *ctx,
	      struct ctl_out *out);

#endif
