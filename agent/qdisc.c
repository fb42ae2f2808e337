/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A device's qdiscs through rtnetlink: dump, put back, delete, fq (qdisc.h). */
#include "qdisc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "qpace/errmsg.h"

#define ALIGN4(x) (((x) + 3u) & ~(size_t)3u)
#define NLA_HDR ((size_t)NLA_HDRLEN)
#define MSG_MAX (QD_OPTS_MAX + 256)

/* ---- the dump's parser (pure) ---- */

static int parse_qdisc(const uint8_t *p, size_t len, int ifindex, struct qd *out,
		       unsigned max, unsigned *n)
{
	struct tcmsg tcm;
	struct qd q = { 0 };
	size_t off = NLMSG_ALIGN(sizeof(tcm));

	if (len < sizeof(tcm))
		return -EPROTO;
	memcpy(&tcm, p, sizeof(tcm));
	if (tcm.tcm_ifindex != ifindex)
		return 0;
	q.handle = tcm.tcm_handle;
	q.parent = tcm.tcm_parent;
	while (off + NLA_HDR <= len) {
		struct nlattr a;
		size_t plen;

		memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < NLA_HDR || a.nla_len > len - off)
			return -EPROTO;
		plen = a.nla_len - NLA_HDR;
		switch (a.nla_type & NLA_TYPE_MASK) {
		case TCA_KIND:
			if (!plen || plen > QD_KIND_MAX || p[off + NLA_HDR + plen - 1] != '\0')
				return -EPROTO;
			memcpy(q.kind, p + off + NLA_HDR, plen);
			break;
		case TCA_OPTIONS:
			q.has_opts = true;
			q.opts_type = a.nla_type;
			if (plen > QD_OPTS_MAX) {
				q.opts_cut = true;
				break;
			}
			q.opts_len = (uint16_t)plen;
			memcpy(q.opts, p + off + NLA_HDR, plen);
			break;
		}
		off += ALIGN4(a.nla_len);
	}
	if (!q.kind[0])
		return -EPROTO;
	if (!strcmp(q.kind, "ingress") || !strcmp(q.kind, "clsact"))
		return 0;
	if (*n >= max)
		return -ENOSPC;
	out[(*n)++] = q;
	return 0;
}

int qd_parse(const void *buf, size_t len, int ifindex, struct qd *out, unsigned max,
	     unsigned *n, bool *done)
{
	const uint8_t *p = buf;
	size_t off = 0;

	while (off + NLMSG_HDRLEN <= len) {
		struct nlmsghdr h;
		int rc;

		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
			return -EPROTO;
		switch (h.nlmsg_type) {
		case NLMSG_DONE:
			*done = true;
			return 0;
		case NLMSG_ERROR: {
			struct nlmsgerr e;

			if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
				return -EPROTO;
			memcpy(&e, p + off + NLMSG_HDRLEN, sizeof(e));
			if (e.error)
				return e.error < 0 ? e.error : -EPROTO;
			break;
		}
		case RTM_NEWQDISC:
			rc = parse_qdisc(p + off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN, ifindex,
					 out, max, n);
			if (rc)
				return rc;
			break;
		}
		off += NLMSG_ALIGN(h.nlmsg_len);
	}
	return off == len || len - off < NLMSG_HDRLEN ? 0 : -EPROTO;
}

/* ---- requests ---- */

struct req {
	uint8_t b[MSG_MAX];
	size_t len;
};

static void req_init(struct req *r, uint16_t type, uint16_t flags, int ifindex,
		     uint32_t parent, uint32_t handle)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_REQUEST | flags,
			      .nlmsg_seq = 1 };
	struct tcmsg t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex,
			   .tcm_parent = parent, .tcm_handle = handle };

	memset(r->b, 0, sizeof(r->b));
	memcpy(r->b + NLMSG_HDRLEN, &t, sizeof(t));
	r->len = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(t));
	memcpy(r->b, &h, sizeof(h));
}

/* Append an attribute (the caller keeps within MSG_MAX: kinds and options are bounded). */
static size_t attr(struct req *r, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDR + len), .nla_type = type };
	size_t at = r->len;

	memcpy(r->b + at, &a, sizeof(a));
	if (len)
		memcpy(r->b + at + NLA_HDR, data, len);
	r->len = at + ALIGN4(NLA_HDR + len);
	return at;
}

static void attr_end(struct req *r, size_t at)   /* a nest's length, now its content is in */
{
	uint16_t l = (uint16_t)(r->len - at);

	memcpy(r->b + at, &l, 2);
}

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* Send @r; with @out, collect a dump's qdiscs of @ifindex, else wait for the ACK. */
static int exchange(struct req *r, int ifindex, struct qd *out, unsigned max, unsigned *n)
{
	static uint8_t buf[32768];
	struct nlmsghdr h;
	bool done = false;
	int fd = nl_open(), rc = 0;

	if (fd < 0)
		return fd;
	memcpy(&h, r->b, sizeof(h));
	h.nlmsg_len = (uint32_t)r->len;
	memcpy(r->b, &h, sizeof(h));
	if (send(fd, r->b, r->len, 0) != (ssize_t)r->len) {
		rc = -errno;
		goto out;
	}
	while (!done) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);

		if (got < 0) {
			rc = -errno;
			break;
		}
		if (out) {
			if ((rc = qd_parse(buf, (size_t)got, ifindex, out, max, n, &done)))
				break;
			continue;
		}
		/* an ACK: NLMSG_ERROR with error 0, or the kernel's error */
		rc = qd_parse(buf, (size_t)got, ifindex, NULL, 0, n, &done);
		done = true;
	}
out:
	close(fd);
	return rc;
}

int qd_dump(int ifindex, struct qd *out, unsigned max, unsigned *n, char *err, size_t errlen)
{
	struct req r;
	int rc;

	*n = 0;
	req_init(&r, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0);
	rc = exchange(&r, ifindex, out, max, n);
	return rc ? qp_errmsg(rc, err, errlen, "the qdiscs of device %d: %s", ifindex,
			      strerror(-rc)) : 0;
}

int qd_put(int ifindex, const struct qd *q, bool replace, char *err, size_t errlen)
{
	struct req r;
	unsigned n = 0;
	char p[16], h[16];
	int rc;

	if (q->opts_cut)
		return qp_errmsg(-E2BIG, err, errlen, "qdisc %s at %s: options longer than %d "
				 "bytes", q->kind, qd_handle_fmt(q->parent, p, sizeof(p)),
				 QD_OPTS_MAX);
	req_init(&r, RTM_NEWQDISC, NLM_F_ACK | NLM_F_CREATE | (replace ? NLM_F_REPLACE :
								 NLM_F_EXCL), ifindex,
		 q->parent, q->handle);
	attr(&r, TCA_KIND, q->kind, strlen(q->kind) + 1);
	if (q->has_opts)
		attr(&r, q->opts_type, q->opts, q->opts_len);
	rc = exchange(&r, ifindex, NULL, 0, &n);
	return rc ? qp_errmsg(rc, err, errlen, "%s %s at %s (handle %s): %s", replace ?
			      "replace with" : "add", q->kind,
			      qd_handle_fmt(q->parent, p, sizeof(p)),
			      qd_handle_fmt(q->handle, h, sizeof(h)), strerror(-rc)) : 0;
}

int qd_del(int ifindex, uint32_t parent, uint32_t handle, char *err, size_t errlen)
{
	struct req r;
	unsigned n = 0;
	char p[16];
	int rc;

	req_init(&r, RTM_DELQDISC, NLM_F_ACK, ifindex, parent, handle);
	rc = exchange(&r, ifindex, NULL, 0, &n);
	return rc ? qp_errmsg(rc, err, errlen, "delete the qdisc at %s: %s",
			      qd_handle_fmt(parent, p, sizeof(p)), strerror(-rc)) : 0;
}

int qd_fq(int ifindex, uint32_t parent, uint32_t handle, qp_rate_bps maxrate, bool change,
	  char *err, size_t errlen)
{
	struct req r;
	unsigned n = 0;
	uint32_t plimit = 100000, flow_plimit = 1000, horizon_us = 2000000;
	uint32_t max_Bps = !maxrate ? ~0u : maxrate / 8 >= ~0u ? ~0u - 1 : (uint32_t)(maxrate / 8);
	uint8_t drop = 0;
	char p[16];
	size_t nest;
	int rc;

	req_init(&r, RTM_NEWQDISC, NLM_F_ACK | (change ? 0 : NLM_F_CREATE | NLM_F_REPLACE),
		 ifindex, parent, handle);
	attr(&r, TCA_KIND, "fq", 3);
	nest = attr(&r, TCA_OPTIONS, NULL, 0);
	if (!change) {
		attr(&r, TCA_FQ_PLIMIT, &plimit, 4);
		attr(&r, TCA_FQ_FLOW_PLIMIT, &flow_plimit, 4);
		attr(&r, TCA_FQ_HORIZON, &horizon_us, 4);
		attr(&r, TCA_FQ_HORIZON_DROP, &drop, 1);
	}
	attr(&r, TCA_FQ_FLOW_MAX_RATE, &max_Bps, 4);
	attr_end(&r, nest);
	rc = exchange(&r, ifindex, NULL, 0, &n);
	return rc ? qp_errmsg(rc, err, errlen, "%s fq at %s: %s", change ? "change" : "put",
			      qd_handle_fmt(parent, p, sizeof(p)), strerror(-rc)) : 0;
}

const char *qd_handle_fmt(uint32_t h, char *buf, size_t len)
{
	if (h == TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (!TC_H_MIN(h))
		snprintf(buf, len, "%x:", TC_H_MAJ(h) >> 16);
	else
		snprintf(buf, len, "%x:%x", TC_H_MAJ(h) >> 16, TC_H_MIN(h));
	return buf;
}
