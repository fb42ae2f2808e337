/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control-protocol server shape: see qpace/ctl_server.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "qpace/bytes.h"
#include "qpace/ctl_server.h"

int ctl_out_send(struct ctl_out *o, struct ctl_msg *m)
{
	uint8_t buf[CTL_MAX_LEN];
	int n;

	m->id = o->id;
	n = ctl_encode(buf, sizeof(buf), m);
	if (n < 0) {
		o->unsent++;
		return n;
	}
	o->send(o->io, buf, (size_t)n);
	return 0;
}

int ctl_out_reply(struct ctl_out *o, int status, uint32_t count, const char *text)
{
	struct ctl_msg m = { .type = CTL_T_REPLY };
	size_t i;

	m.u.reply.status = status;
	m.u.reply.count = count;
	for (i = 0; text && text[i] && i < CTL_TEXT_MAX; i++)
		m.u.reply.text[i] = text[i] >= ' ' && text[i] <= '~' ? text[i] : '?';
	m.u.reply.text[i] = 0;
	return ctl_out_send(o, &m);
}

/* Types only a server sends: a client sending one is confused, not asking. */
static bool answer_only(unsigned type)
{
	return type == CTL_T_REPLY || type == CTL_T_QP || type == CTL_T_AGENT;
}

static void malformed(const struct ctl_handlers *h, void *ctx, const char *why)
{
	if (h->malformed)
		h->malformed(ctx, why);
}

void ctl_dispatch(const struct ctl_handlers *h, void *ctx, const uint8_t *buf, size_t n,
		  struct ctl_out *out)
{
	char err[200];
	struct ctl_msg m;

	out->id = 0;
	if (n > CTL_MAX_LEN) {
		snprintf(err, sizeof(err), "control message of %zu bytes, %d at most", n,
			 CTL_MAX_LEN);
		malformed(h, ctx, err);
		ctl_out_reply(out, -EMSGSIZE, 0, "message too long");
		return;
	}
	if (ctl_decode(&m, buf, n, err, sizeof(err))) {
		malformed(h, ctx, err);
		out->id = n >= CTL_HDR_LEN ? qp_get16(buf + 6) : 0;
		ctl_out_reply(out, -EINVAL, 0, err);
		return;
	}
	out->id = m.id;
	out->requests++;
	if (answer_only(m.type)) {
		snprintf(err, sizeof(err), "a %s message, which only the agent sends",
			 ctl_type_name(m.type));
		malformed(h, ctx, err);
		ctl_out_reply(out, -EINVAL, 0, "not a request");
	} else if (h->fn[m.type]) {
		h->fn[m.type](ctx, &m, out);
	} else {
		ctl_out_reply(out, h->refuse_status ? h->refuse_status : -EOPNOTSUPP, 0,
			      h->refuse_text ? h->refuse_text : "not served here");
	}
}

int ctl_serve(int fd, unsigned max, const struct ctl_handlers *h, void *ctx,
	      struct ctl_out *out)
{
	uint8_t buf[CTL_MAX_LEN + 1];

	for (unsigned i = 0; i < max; i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 1;
		ctl_dispatch(h, ctx, buf, (size_t)n, out);
	}
	return 0;
}
