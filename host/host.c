/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An emulated host with its own agent core: see host.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/feedback.h"
#include "qpace/soft.h"
#include "qpace/host.h"

#define HOST_HEARTBEAT_NS QP_NS_PER_MS

static void host_log_quiet(void *arg, const char *line)
{
	(void)arg, (void)line;
}

static void host_agent_log(void *arg, enum agent_log_kind kind, const char *line)
{
	const struct host *h = arg;
	char ip[16];

	if (kind == AGENT_LOG_WARN)
		fprintf(stderr, "qpace-bench: host %s agent: %s\n", qp_ipv4_fmt(h->ip, ip, sizeof(ip)),
			line);
}

/* DCQCN stand-in: an early notice about a flow this host sends is its CNP; one about READ
 * responses it receives (FB_F_TO_RECEIVER) is its reader's. */
static void host_notice_cnp(struct host *h, const uint8_t *buf, size_t len,
			    qp_time_ns now)
{
	const struct fb_flow *f;
	struct fb_msg m;
	bool rd;

	if (fb_decode(&m, buf, len) || m.type != FB_T_NOTICE)
		return;
	f = &m.u.notice.flow;
	rd = m.flags & FB_F_TO_RECEIVER;
	if ((rd ? f->dst_ip : f->src_ip) != h->ip)
		return;
	for (unsigned i = 0; i < h->nqps; i++) {
		if (rd ? h->qps[i].qpn == f->dest_qp && h->qps[i].peer_ip == f->src_ip
		       : h->qps[i].peer_qpn == f->dest_qp && h->qps[i].peer_ip == f->dst_ip) {
			struct cc_event ev = { .type = CC_EV_CNP };
			if (agent_qp_event(h->agent, h->qps[i].qpn, &ev, now) == 0)
				h->cnps++;
			return;
		}
	}
}

/* A CNP the soft host's QP took (the receiver's NP made it from CE marks, rc.h): DCQCN's
 * CNP event for that QP, when the QP is registered. */
static void host_cnp(void *arg, uint32_t qpn, qp_time_ns now)
{
	struct host *h = arg;
	struct cc_event ev = { .type = CC_EV_CNP };

	if (agent_qp_event(h->agent, qpn, &ev, now) == 0)
		h->cnps++;
}

/* A window algorithm that takes the transport's losses (tcp, dctcp, ffd, swift) bounds
 * what its QP's RC has unacknowledged, retransmissions included (rc_set_window_cap): its
 * published cap in packets. Others keep the RC's own window (their outputs as before). */
static void host_window(struct host *h, uint32_t qpn)
{
	struct soft_host *sh = h->ctx ? qp_soft_host(h->ctx) : NULL;
	struct agent_qp_view v;
	uint32_t pkts = 0;

	if (!sh || !(agent_qp_needs(h->agent, qpn) & CC_NEED_LOSS) ||
	    agent_qp_view(h->agent, qpn, &v))
		return;
	if (v.cap_bytes && v.reg.mtu_bytes)
		pkts = v.cap_bytes / v.reg.mtu_bytes ? (uint32_t)(v.cap_bytes / v.reg.mtu_bytes) : 1;
	soft_host_qp_window(sh, qpn, pkts);
}

/* The soft RC's transport events (qpace/rc.h) for its agent core, in both clocks: each
 * ACK with the bytes it acknowledged, its ECN echo and RTT sample, each NAK and timeout.
 * The agent hands a controller only the events its algorithm takes. */
static void host_transport(void *arg, uint32_t qpn, const struct rc_event *ev, qp_time_ns now)
{
	static const uint8_t type[] = { [RC_EV_ACK] = AGENT_TP_ACK, [RC_EV_NAK] = AGENT_TP_NAK,
					[RC_EV_TIMEOUT] = AGENT_TP_TIMEOUT };
	struct host *h = arg;
	struct agent_tp_event e = {
		.type = ev->type < sizeof(type) ? type[ev->type] : 0,
		.ecn = h->ecn_echo ? (ev->ce ? CC_ECN_CE : CC_ECN_CLEAR) : CC_ECN_NONE,
		.flags = AGENT_TP_F_PSN | AGENT_TP_F_SND, .psn = ev->psn, .snd_psn = ev->snd_psn,
		.bytes = ev->bytes, .rtt_ns = ev->rtt_ns, .count = ev->count,
	};

	agent_qp_transport(h->agent, qpn, &e, now);
	host_window(h, qpn);
}

/* HPCC's snd_nxt from the sender's RC QP itself (qpace/agent.h). */
static bool host_snd_psn(void *arg, uint32_t qpn, uint32_t *psn)
{
	struct host *h = arg;
	struct soft_host *sh = h->ctx ? qp_soft_host(h->ctx) : NULL;

	return sh && soft_host_qp_snd_psn(sh, qpn, psn) == 0;
}

/* The agent checks the datagram (allow-list, and with a key tag and replay window) before
 * a notice in it stands in for a CNP. */
static void host_telemetry(void *arg, uint32_t src_ip, uint16_t src_port,
			   const uint8_t *payload, size_t len, qp_time_ns now)
{
	struct host *h = arg;
	unsigned res = agent_feed_datagram(h->agent, payload, len, src_ip, src_port, now);

	if (h->cnp_from_notice && (res & AGENT_RX_ACCEPTED))
		host_notice_cnp(h, payload, len, now);
}

/* IA credits are clocked by what the receiving host got: its soft RC's accepted payload,
 * at the time the frame reached it, goes straight to its agent (in-process), in both
 * clocks and whatever the cc and the switch's INT mode. Not echo INT: that is the
 * switch's dequeue, a link's delay before the data arrives, and exists only when the
 * switch runs --int echo. */
static void host_rx_data(void *arg, uint32_t qpn, uint32_t bytes, qp_time_ns now)
{
	struct host *h = arg;

	agent_qp_arrived(h->agent, qpn, bytes, now);
}

int host_open(struct host *h, const struct host_conf *c, qp_time_ns now,
		    char *err, size_t errlen)
{
	struct agent_params ap;
	struct qp_soft_arg sarg = { .telemetry = host_telemetry, .telemetry_arg = h,
				    .tx_ready = c->tx_ready, .tx_ready_arg = c->tx_ready_arg,
				    .rx_data = c->credits ? host_rx_data : NULL, .rx_data_arg = h,
				    .cnp = host_cnp, .cnp_arg = h,
				    .transport = host_transport, .transport_arg = h };
	const char *ipopt = strstr(c->options, "ip="), *end;
	uint32_t ip;
	int rc;

	memset(h, 0, sizeof(*h));
	if (ipopt && qp_ipv4_scan(ipopt + 3, &end, &ip) == 0 && (!*end || *end == ','))
		h->ip = ip;    /* else 0, and the soft context refuses the options */
	h->cnp_from_notice = c->cnp_from_notice;
	h->ecn_echo = strstr(c->options, "ecn_echo=on") != NULL;
	h->socket_io = !c->tx_ready;
	h->credits = c->credits;
	if ((rc = qp_ratetable_create_mem(HOST_MAX_QPS, &h->table, err, errlen)) < 0)
		return rc;
	qp_ratetable_heartbeat(h->table, now);
	agent_params_default(&ap);
	ap.cc = c->cc;
	ap.credits = c->credits;
	ap.arrivals = c->credits;   /* host_rx_data reports them */
	/* The base RTT registered is the modelled network's (qpace-bench: 4 link delays and
	 * the serialisations); in real time the loopback path to the switch has no link
	 * delay, so the measured RTT is two link delays shorter than the network the run
	 * models. With that as the pacer's RTT, the ACK delay would idle the link whenever the
	 * loop is a little late; with the model's, the two missing delays become a standing
	 * queue of that length at the bottleneck, as in virtual time where they are links. */
	ap.rtt_floor = true;
	ap.seed = c->seed ^ h->ip;
	ap.max_qps = HOST_MAX_QPS;
	ap.allow[0] = (struct agent_net){ 0, 0 };   /* every source: the loopback star is ours */
	ap.nallow = 1;
	if (c->key) {
		ap.have_key = true;
		memcpy(ap.key, c->key, sizeof(ap.key));
		ap.sender_id = h->ip;   /* unique among the emulated hosts */
		ap.clock_offset_ns = c->clock_offset_ns;
	}
	ap.snd_psn = host_snd_psn;
	ap.snd_psn_arg = h;
	ap.log = c->quiet ? NULL : host_agent_log;   /* counted either way; -v prints */
	ap.log_arg = h;
	h->agent = agent_create(&ap, h->table, now, err, errlen);
	if (!h->agent) {
		host_close(h);
		return -EINVAL;   /* agent_create said which parameter */
	}
	struct qp_ctx_attr attr = {
		.rate_table_mem = h->table,
		.backend_arg = &sarg,
		.options = c->options,
		.log = c->quiet ? host_log_quiet : NULL,
		.clock = c->clock,
		.clock_arg = c->clock_arg,
	};
	rc = qp_ctx_open("soft", &attr, &h->ctx, err, errlen);
	if (rc < 0) {
		host_close(h);
		return rc;
	}
	h->next_heartbeat_ns = now + HOST_HEARTBEAT_NS;
	return 0;
}

void host_close(struct host *h)
{
	qp_ctx_close(h->ctx);
	agent_destroy(h->agent);
	if (h->table)
		qp_ratetable_close(h->table);
	memset(h, 0, sizeof(*h));
}

/* The agent's datagrams into the soft host's output queue; how many went. */
static unsigned host_agent_out(struct host *h, qp_time_ns now)
{
	struct agent_dgram d[16];
	unsigned n, queued = 0;

	while ((n = agent_tx_take(h->agent, d, 16)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct soft_host *sh = qp_soft_host(h->ctx);
			int rc = soft_host_send_udp(sh, d[i].dst_ip, FB_PORT, d[i].dst_port,
						    d[i].buf, d[i].len, now);
			if (rc == -ENOBUFS) {       /* the host's output queue: flush, retry */
				qp_ctx_progress(h->ctx, now);
				rc = soft_host_send_udp(sh, d[i].dst_ip, FB_PORT, d[i].dst_port,
							d[i].buf, d[i].len, now);
			}
			if (rc == 0)
				h->tx_sent++;
			else
				h->tx_failed++;
			queued += rc == 0;
		}
	}
	return queued;
}

int host_register(struct host *h, struct qp *qp, qp_rate_bps link_bps,
			qp_time_ns base_rtt_ns, enum host_role role, const char *algo,
			const char *params, qp_time_ns now, char *err, size_t errlen)
{
	static const uint16_t role_flags[] = { [HOST_SENDER] = 0,
					       [HOST_RECEIVER] = AGENT_QP_RECEIVER,
					       [HOST_READER] = AGENT_QP_READER };
	struct agent_qp_reg r = {
		.qpn = qp->qpn,
		.peer_qpn = qp->remote.qpn,
		.local_ip = h->ip,
		.peer_ip = 0,
		.sport = soft_roce_sport(qp->qpn, qp->remote.qpn),
		.flags = (unsigned)role < 3 ? role_flags[role] : 0,
		.mtu_bytes = qp->path_mtu_bytes,
		.link_bps = link_bps,
		.base_rtt_ns = base_rtt_ns,
	};
	int rc;

	if (h->nqps >= HOST_MAX_QPS)
		return qp_errmsg(-ENOSPC, err, errlen, "host: more than %u QPs",
				 HOST_MAX_QPS);
	/* The peer's IPv4 address, from its IPv4-mapped GID (the soft backend connects no
	 * other kind). */
	qp_ipv6_v4mapped(qp->remote.gid, &r.peer_ip);
	if (algo)
		snprintf(r.algo, sizeof(r.algo), "%s", algo);
	if (algo && params)
		snprintf(r.params, sizeof(r.params), "%s", params);
	if ((rc = agent_register(h->agent, &r, 0, 0, now, err, errlen)) < 0)
		return rc;
	host_window(h, qp->qpn);
	/* Real time: what registering queued (the INT want of an INT-driven sender) leaves
	 * now, ahead of the QP's first data. Left to the loop's next host_service, it went
	 * after the first frames when the caller posted at once, and the switch let those
	 * go without a report (int_unwanted). Virtual time starts its flows after setup. */
	if (h->socket_io && host_agent_out(h, now))
		qp_ctx_progress(h->ctx, now);
	/* IA-TCP's senders wait for the receiver's first grant. The agent turns credit gating
	 * on at the first grant, so a sender would start at its full rate for the first
	 * RTT + delta; a sender of a credit-paced run starts gated instead (with no credits).
	 * The table is this host's own, written by this thread only. */
	if (role != HOST_RECEIVER && h->credits) {   /* a reader is its own sender */
		uint32_t slot = 0;
		struct qp_rate_entry e;
		if (qp_ratetable_lookup(h->table, qp->qpn, &slot, &e) == 0)
			qp_ratetable_set(h->table, slot, e.rate_bps, e.cap_bytes, e.flags | QP_RATE_F_CREDITS, now);
	}
	h->qps[h->nqps++] = (struct host_reg){ qp->qpn, r.peer_qpn, r.peer_ip };
	return 0;
}

int host_flow_start(struct host *h, uint32_t qpn, uint64_t bytes, qp_time_ns now)
{
	struct cc_event ev = { .type = CC_EV_FLOW_START, .u.flow_bytes = bytes };

	if (!(agent_qp_needs(h->agent, qpn) & CC_NEED_FLOW))
		return 0;
	return agent_qp_event(h->agent, qpn, &ev, now);
}

static void cc_add(const struct cc *cc, uint64_t *sum)
{
	size_t n = cc_counter_count(cc->ops);

	for (size_t i = 0; i < n && i < HOST_CC_COUNTERS; i++)
		sum[i] += cc_counter_value(cc, i);
}

void host_cc_counters(const struct host *h, const struct cc_ops *ops, uint64_t *sum)
{
	size_t n = cc_counter_count(ops);

	for (size_t i = 0; h->cc_sum_ops == ops && i < n && i < HOST_CC_COUNTERS; i++)
		sum[i] += h->cc_sum[i];
	for (unsigned i = 0; i < h->nqps; i++) {
		const struct cc *cc = agent_qp_cc(h->agent, h->qps[i].qpn);

		if (cc && cc->ops == ops)
			cc_add(cc, sum);
	}
}

int host_unregister(struct host *h, uint32_t qpn, qp_time_ns now)
{
	for (unsigned i = 0; i < h->nqps; i++) {
		if (h->qps[i].qpn == qpn) {
			const struct cc *cc = agent_qp_cc(h->agent, qpn);

			if (cc && cc->ops->counters && (!h->cc_sum_ops || h->cc_sum_ops == cc->ops)) {
				h->cc_sum_ops = cc->ops;
				cc_add(cc, h->cc_sum);
			}
			h->qps[i] = h->qps[--h->nqps];
			return agent_unregister(h->agent, qpn, now);
		}
	}
	return -ENOENT;
}

void host_service(struct host *h, qp_time_ns now)
{
	if (agent_next_ns(h->agent) <= now)
		agent_poll(h->agent, now);
	if (now >= h->next_heartbeat_ns) {
		qp_ratetable_heartbeat(h->table, now);
		h->next_heartbeat_ns = now + HOST_HEARTBEAT_NS;
	}
	/* Real time: the datagrams sit in the soft host's queue until its context makes
	 * progress, which a loop does on input or a due timer. A receiver whose senders wait
	 * for its grant has neither: the grant would wait for the next frame in, and grants
	 * held back so go out together. Send them now. (Virtual time: the driver's NIC pulls
	 * them after this turn.) */
	if (host_agent_out(h, now) && h->socket_io)
		qp_ctx_progress(h->ctx, now);
}

qp_time_ns host_deadline(struct host *h)
{
	return qp_time_min(qp_time_min(qp_ctx_deadline(h->ctx), agent_next_ns(h->agent)),
			   h->next_heartbeat_ns);
}

qp_rate_bps host_rate(const struct host *h, uint32_t qpn)
{
	struct agent_qp_view v;

	return agent_qp_view(h->agent, qpn, &v) == 0 ? v.rate_bps : 0;
}
