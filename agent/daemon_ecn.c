/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's side of DCQCN without a CNP-sending switch (docs/enforce.md): the tc ingress
 * program (agent/bpf/tc_ingress.h) on the --enforce device, and what qpaced does with its
 * reports (the translations in cnp.h):
 *
 *   CE   from peer X to local QP L: a CNP to X:4791 for L's peer QPN, through a UDP socket
 *        (unconnected, DF: the kernel writes IP id 0, which the CNP's ICRC assumes), from
 *        the address the CE frame came to; the program sends at most one report per QP
 *        per 50 us, so at most one CNP goes per QP per 50 us
 *   CNP  from X to local QP L: CC_EV_CNP for the agent's flow (local address, X, L's peer
 *        QPN): the QP's DCQCN (or any algorithm that takes CNPs) cuts its rate
 *
 * L's peer QPN: the rdma netlink QP dump (asked again on a miss, at most once a second),
 * else --cnp-peer. Every step is counted (qpace_ecn_total{event} on /metrics), and what
 * could not be mapped too. IPv4 or IPv6, as the frame was: an IPv6 CNP goes through a UDP
 * socket of its own (its port in the ICRC), from the address the CE frame came to on the
 * device (a link-local one is scoped to it), to the sender's flow known by its 16-byte
 * addresses (agent_qp_find_flow6). With --credits ia and --enforce tc the same program
 * also counts the data arriving per receiving flow, for daemon_ia.c (without --cnp it
 * then reports no CE or CNP: conf.no_reports). With --enforce observe|tc it is loaded
 * for RTT samples and NAKs too (conf.rtt, sharing the egress program's stamps), which
 * daemon_rtt.c turns into transport events; without --cnp or --credits ia a program that
 * cannot load or attach then costs only those (a warning, qpaced goes on). */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf/tc_egress.h"
#include "bpf/tc_ingress.h"
#include "cnp.h"
#include "daemon_priv.h"
#include "qpace/errmsg.h"
#include "qpace/frame.h"

#define ECN_DUMP_RETRY_NS QP_NS_PER_S

enum ecn_counter {
	ECN_C_CE,               /* CE reports taken */
	ECN_C_CE_UNMAPPED,      /* ... whose local QP has no known peer QPN */
	ECN_C_CNP_SENT,
	ECN_C_CNP_SEND_ERR,
	ECN_C_CNP_RX,           /* CNP reports taken */
	ECN_C_CNP_UNMAPPED,     /* ... whose local QP has no known peer QPN */
	ECN_C_CNP_NO_FLOW,      /* mapped, but the agent has no such flow */
	ECN_C_CNP_EVENTS,       /* CC_EV_CNP given to a QP */
	ECN_C_IPV6,             /* of the CE and CNP reports: IPv6 frames */
	ECN_C_BAD_ADDR,         /* reports whose addresses are not of their family */
	ECN_C_COUNT
};

static const char *const ecn_names[ECN_C_COUNT] = {
	[ECN_C_CE] = "ce_reports",
	[ECN_C_CE_UNMAPPED] = "ce_unmapped",
	[ECN_C_CNP_SENT] = "cnp_sent",
	[ECN_C_CNP_SEND_ERR] = "cnp_send_errors",
	[ECN_C_CNP_RX] = "cnp_reports",
	[ECN_C_CNP_UNMAPPED] = "cnp_unmapped",
	[ECN_C_CNP_NO_FLOW] = "cnp_no_flow",
	[ECN_C_CNP_EVENTS] = "cnp_events",
	[ECN_C_IPV6] = "ipv6_reports",
	[ECN_C_BAD_ADDR] = "bad_address",
};

struct qpaced_ecn {
	struct qp_tci *prog;
	int fd, fd6;                 /* the CNP sockets, IPv4 and IPv6 (-1: none) */
	uint16_t sport, sport6;
	unsigned ifindex;            /* of the device: an IPv6 CNP's scope and interface */
	ev_io reports_io;
	struct rdma_nl_qp *dump;
	size_t ndump;
	qp_time_ns dump_ns;
	bool dump_said;
	uint64_t c[ECN_C_COUNT];
};

static void dump_load(struct qpaced *d, struct qpaced_ecn *e, qp_time_ns now)
{
	char err[300];
	size_t ndevs;

	free(e->dump);
	e->dump = NULL;
	e->ndump = 0;
	e->dump_ns = now;
	if (rdma_nl_dump_qps(&e->dump, &e->ndump, &ndevs, err, sizeof(err)) && !e->dump_said) {
		qpaced_log(AGENT_LOG_INFO, "tc ingress: peer QPNs only from --cnp-peer (%u "
			   "pairs): %s", d->cfg.n_cnp_pairs, err);
		e->dump_said = true;
	}
}

/* The report's action; on an unknown peer QPN the dump once more (at most once per
 * ECN_DUMP_RETRY_NS). */
static struct cnp_action translate(struct qpaced *d, struct qpaced_ecn *e,
				   const struct qp_tci_report *r, qp_time_ns now)
{
	struct cnp_peers p = { e->dump, e->ndump, d->cfg.cnp_pairs, d->cfg.n_cnp_pairs };
	struct cnp_action a = cnp_translate(r, &p);

	if (a.what != CNP_DO_UNMAPPED || now - e->dump_ns < ECN_DUMP_RETRY_NS)
		return a;
	dump_load(d, e, now);
	p.dump = e->dump;
	p.ndump = e->ndump;
	return cnp_translate(r, &p);
}

static int send_cnp(struct qpaced_ecn *e, uint32_t src_ip, uint32_t dst_ip, uint32_t qpn)
{
	uint8_t pl[CNP_UDP_PAYLOAD];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(FRAME_ROCEV2_PORT),
				  .sin_addr.s_addr = htonl(dst_ip) };
	char cbuf[CMSG_SPACE(sizeof(struct in_pktinfo))] = { 0 };
	struct iovec iov = { pl, sizeof(pl) };
	struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct in_pktinfo pi = { .ipi_spec_dst.s_addr = htonl(src_ip) };

	if (cnp_payload(pl, sizeof(pl), src_ip, e->sport, dst_ip, qpn) < 0)
		return -EINVAL;
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	return sendmsg(e->fd, &m, 0) == (ssize_t)sizeof(pl) ? 0 : -errno;
}

static int send_cnp6(struct qpaced_ecn *e, const uint8_t src[16], const uint8_t dst[16],
		     uint32_t qpn)
{
	uint8_t pl[CNP_UDP_PAYLOAD];
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons(FRAME_ROCEV2_PORT),
				   .sin6_scope_id = e->ifindex };
	char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct iovec iov = { pl, sizeof(pl) };
	struct msghdr m = { .msg_name = &to, .msg_namelen = sizeof(to), .msg_iov = &iov,
			    .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct in6_pktinfo pi = { .ipi6_ifindex = e->ifindex };

	if (e->fd6 < 0)
		return -EAFNOSUPPORT;
	memcpy(&to.sin6_addr, dst, 16);
	memcpy(&pi.ipi6_addr, src, 16);
	if (cnp_payload6(pl, sizeof(pl), src, e->sport6, dst, qpn) < 0)
		return -EINVAL;
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	return sendmsg(e->fd6, &m, 0) == (ssize_t)sizeof(pl) ? 0 : -errno;
}

static void on_report(void *ctx, const struct qp_tci_report *r)
{
	struct qpaced *d = ctx;
	struct qpaced_ecn *e = d->ecn;
	qp_time_ns now = qp_now_ns();
	struct cnp_action a;
	struct cc_event ev = { .type = CC_EV_CNP };
	bool ce = r->kind == QP_TCI_K_CE;
	uint32_t qpn;
	int rc;

	if (r->kind == QP_TCI_K_RTT || r->kind == QP_TCI_K_NAK) {
		qpaced_rtt_report(d, r, now);
		return;
	}
	a = translate(d, e, r, now);
	if (a.what == CNP_DO_BAD_ADDR) {
		e->c[ECN_C_BAD_ADDR]++;
		agent_note(d->agent, AGENT_C_WIRE_SKIPPED, "tc ingress: a %s report with %s "
			   "addresses (QPN 0x%06x): dropped", ce ? "CE" : "CNP",
			   a.ipv6 ? "IPv6 but unspecified or IPv4-mapped" : "IPv4 but not "
			   "IPv4-mapped", r->dqpn & 0xffffffu);
		return;
	}
	e->c[ce ? ECN_C_CE : ECN_C_CNP_RX]++;
	e->c[ECN_C_IPV6] += a.ipv6;
	switch (a.what) {
	case CNP_DO_BAD_ADDR:   /* returned above */
		break;
	case CNP_DO_UNMAPPED:
		e->c[ce ? ECN_C_CE_UNMAPPED : ECN_C_CNP_UNMAPPED]++;
		break;
	case CNP_DO_SEND:
		rc = a.ipv6 ? send_cnp6(e, a.local_ip6, a.peer_ip6, a.peer_qpn)
			    : send_cnp(e, a.local_ip, a.peer_ip, a.peer_qpn);
		e->c[rc ? ECN_C_CNP_SEND_ERR : ECN_C_CNP_SENT]++;
		break;
	case CNP_DO_EVENT:
		if (a.ipv6 ? agent_qp_find_flow6(d->agent, a.local_ip6, a.peer_ip6, a.peer_qpn,
						 &qpn)
			   : agent_qp_find_flow(d->agent, a.local_ip, a.peer_ip, a.peer_qpn, &qpn))
			e->c[ECN_C_CNP_NO_FLOW]++;
		else if (agent_qp_event(d->agent, qpn, &ev, now) == 0)
			e->c[ECN_C_CNP_EVENTS]++;
		break;
	}
}

static void on_reports(struct ev_loop *loop, ev_io *w, int revents)
{
	struct qpaced *d = w->data;

	(void)loop;
	(void)revents;
	qp_tci_reports_take(d->ecn->prog, on_report, d);
	qpaced_after(d);
}

static int udp_open(struct qpaced_ecn *e, char *err, size_t errlen)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int pmtu = IP_PMTUDISC_DO;

	e->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (e->fd < 0)
		return qp_errmsg(-errno, err, errlen, "CNP socket: %s", strerror(errno));
	/* DF, and unconnected: the kernel writes IP id 0, as the ICRC was computed with */
	if (setsockopt(e->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    bind(e->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(e->fd, (struct sockaddr *)&a, &alen))
		return qp_errmsg(-errno, err, errlen, "CNP socket: %s", strerror(errno));
	e->sport = ntohs(a.sin_port);
	return 0;
}

/* The IPv6 CNP socket; without one (a kernel without IPv6) IPv6 CE reports count as send
 * errors, and IPv4 works as before. */
static void udp6_open(struct qpaced_ecn *e, const char *dev)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	socklen_t alen = sizeof(a);
	int on = 1;

	e->ifindex = if_nametoindex(dev);
	e->fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (e->fd6 >= 0 && !setsockopt(e->fd6, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) &&
	    !bind(e->fd6, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(e->fd6, (struct sockaddr *)&a, &alen)) {
		e->sport6 = ntohs(a.sin6_port);
		return;
	}
	qpaced_log(AGENT_LOG_WARN, "tc ingress: no IPv6 CNP socket (%s): CE on IPv6 RoCEv2 "
		   "gets no CNP", strerror(errno));
	if (e->fd6 >= 0)
		close(e->fd6);
	e->fd6 = -1;
}

/* The ingress program could not load or attach (@rc, @msg): true when that fails qpaced
 * (--cnp or --credits ia asked for it); else it was there only for RTT samples: a warning,
 * the program dropped, and false. */
static bool rtt_only(struct qpaced *d, bool needed, int rc, const char *msg)
{
	if (needed)
		return true;
	qpaced_log(AGENT_LOG_WARN, "tc ingress: no RTT samples or NAKs from the wire: %s (%s)",
		   msg, strerror(-rc));
	qpaced_ecn_close(d);
	return false;
}

int qpaced_ecn_open(struct qpaced *d, char *err, size_t errlen)
{
	struct qpaced_ecn *e;
	struct qp_tci_conf conf;
	char msg[300];
	bool ia, rtt;
	int rc;

	if (d->cfg.enforce == QPACED_ENFORCE_OFF && d->cfg.dev[0]) {
		/* what a killed qpaced left (the egress side: qpaced_tc_open) */
		rc = qp_tci_remove(d->cfg.dev);
		if (rc == 1)
			qpaced_log(AGENT_LOG_INFO, "tc ingress: --enforce off on %s: the ingress "
				   "filter removed", d->cfg.dev);
		else if (rc < 0)
			qpaced_log(AGENT_LOG_WARN, "tc ingress: --enforce off on %s: removing the "
				   "ingress filter: %s", d->cfg.dev, strerror(-rc));
		return 0;
	}
	ia = d->cfg.agent.credits && d->cfg.enforce == QPACED_ENFORCE_TC;
	rtt = qpaced_tc_rtt_fd(d) >= 0;
	if (d->cfg.enforce == QPACED_ENFORCE_OFF || (!d->cfg.cnp && !ia && !rtt))
		return 0;
	if (!(e = calloc(1, sizeof(*e))))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	e->fd = e->fd6 = -1;
	d->ecn = e;
	if ((rc = qp_tci_open_rtt(&e->prog, rtt ? qpaced_tc_rtt_fd(d) : -1, msg, sizeof(msg))))
		return rtt_only(d, d->cfg.cnp || ia, rc, msg)
			       ? qp_errmsg(rc, err, errlen, "--cnp on%s: %s",
					   ia ? " or --credits ia" : "", msg)
			       : 0;
	conf = qp_tci_conf_default();
	conf.no_reports = !d->cfg.cnp;   /* IA alone: CE and CNPs counted, not acted on */
	conf.flows = ia;
	conf.rtt = rtt;
	qp_tci_set_conf(e->prog, &conf);
	if ((rc = qp_tci_attach(e->prog, qpaced_tc_dev(d), msg, sizeof(msg))))
		return rtt_only(d, d->cfg.cnp || ia, rc, msg)
			       ? qp_errmsg(rc, err, errlen, "--dev %s: %s", qpaced_tc_dev(d), msg)
			       : 0;
	if (ia && (rc = qpaced_ia_open(d, e->prog, msg, sizeof(msg))))
		return qp_errmsg(rc, err, errlen, "--credits ia: %s", msg);
	if (rtt && (rc = qpaced_rtt_open(d, err, errlen)))
		return rc;
	if (d->cfg.cnp) {
		if ((rc = udp_open(e, err, errlen)))
			return rc;
		udp6_open(e, qpaced_tc_dev(d));
		dump_load(d, e, qp_now_ns());
	}
	if (d->cfg.cnp || rtt) {
		ev_io_init(&e->reports_io, on_reports, qp_tci_reports_fd(e->prog), EV_READ);
		e->reports_io.data = d;
		ev_io_start(d->loop, &e->reports_io);
	}
	if (rtt)
		qpaced_log(AGENT_LOG_INFO, "tc ingress on %s: ACKs matched with the departures "
			   "of the frames that asked for them: RTT samples and NAKs to their QPs' "
			   "cc (at most %llu of each a second)", qpaced_tc_dev(d),
			   (unsigned long long)(QP_NS_PER_S / conf.rtt_gap_ns));
	if (!d->cfg.cnp)
		return 0;
	qpaced_log(AGENT_LOG_INFO, "tc ingress on %s: CE-marked RoCEv2 data gets its sender a "
		   "CNP (from UDP port %u, IPv6 %u, one per QP per 50 us), arriving CNPs go to "
		   "their flow's cc; peer QPNs: %zu QPs from rdma netlink, %u --cnp-peer pairs",
		   qpaced_tc_dev(d), e->sport, e->sport6, e->ndump, d->cfg.n_cnp_pairs);
	return 0;
}

void qpaced_ecn_close(struct qpaced *d)
{
	struct qpaced_ecn *e = d->ecn;

	if (!e)
		return;
	qpaced_ia_close(d);
	qpaced_rtt_close(d);
	if (e->prog && d->loop)
		ev_io_stop(d->loop, &e->reports_io);
	qp_tci_close(e->prog);     /* before the egress loader, which may remove clsact */
	if (e->fd >= 0)
		close(e->fd);
	if (e->fd6 >= 0)
		close(e->fd6);
	free(e->dump);
	free(e);
	d->ecn = NULL;
}

void qpaced_ecn_metrics(struct qpaced *d, struct qp_strbuf *b)
{
	struct qpaced_ecn *e = d->ecn;
	uint64_t c[QP_TCI_C_COUNT];

	if (!e)
		return;
	qpaced_ia_metrics(d, b);
	qpaced_rtt_metrics(d, b);
	qp_strbuf_printf(b, "# HELP qpace_ecn_total DCQCN without a CNP-sending switch: CE "
			 "reports and the CNPs sent for them, CNP reports and the cc events they "
			 "became, and what could not be mapped\n# TYPE qpace_ecn_total counter\n");
	for (unsigned i = 0; i < ECN_C_COUNT; i++)
		qp_strbuf_printf(b, "qpace_ecn_total{event=\"%s\"} %llu\n", ecn_names[i],
				 (unsigned long long)e->c[i]);
	if (qp_tci_counters(e->prog, c))
		return;
	qp_strbuf_printf(b, "# HELP qpace_tc_ingress_frames_total frames the tc ingress "
			 "program saw, by kind\n# TYPE qpace_tc_ingress_frames_total counter\n");
	for (unsigned i = 0; i < QP_TCI_C_COUNT; i++)
		qp_strbuf_printf(b, "qpace_tc_ingress_frames_total{event=\"%s\"} %llu\n",
				 qp_tci_counter_name(i), (unsigned long long)c[i]);
}
