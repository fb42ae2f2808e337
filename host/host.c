/* An emulated host with its own agent core: see host.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/feedback.h"
#include "qpace/soft.h"
#include "qpace/host.h"

#define HOST_HEARTBEAT_NS QP_NS_PER_MS

uint32_t bench_ip_parse(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1 ? ntohl(a.s_addr) : 0;
}

static void host_log_quiet(void *arg, const char *line)
{
	(void)arg, (void)line;
}

static void host_agent_log(void *arg, enum agent_log_kind kind, const char *line)
{
	const struct bench_host *h = arg;
	char ip[16];

	if (kind == AGENT_LOG_WARN)
		fprintf(stderr, "qpace-bench: host %s agent: %s\n", agent_ip_fmt(h->ip, ip, sizeof(ip)),
			line);
}

/* DCQCN stand-in: an early notice about a flow this host sends is its CNP. */
static void host_notice_cnp(struct bench_host *h, const uint8_t *buf, size_t len,
			    qp_time_ns now)
{
	struct fb_msg m;

	if (fb_decode(&m, buf, len) || m.type != FB_T_NOTICE || m.u.notice.flow.src_ip != h->ip)
		return;
	for (unsigned i = 0; i < h->nqps; i++) {
		if (h->qps[i].peer_qpn == m.u.notice.flow.dest_qp &&
		    h->qps[i].peer_ip == m.u.notice.flow.dst_ip) {
			struct cc_event ev = { .type = CC_EV_CNP };
			if (agent_qp_event(h->agent, h->qps[i].qpn, &ev, now) == 0)
				h->cnps++;
			return;
		}
	}
}

static void host_telemetry(void *arg, uint32_t src_ip, uint16_t src_port,
			   const uint8_t *payload, size_t len, qp_time_ns now)
{
	struct bench_host *h = arg;

	if (h->cnp_from_notice)
		host_notice_cnp(h, payload, len, now);
	agent_feed_datagram(h->agent, payload, len, src_ip, src_port, now);
}

int bench_host_open(struct bench_host *h, const struct bench_host_conf *c, qp_time_ns now,
		    char *err, size_t errlen)
{
	struct agent_params ap;
	struct qp_soft_arg sarg = { .telemetry = host_telemetry, .telemetry_arg = h };
	const char *ipopt = strstr(c->options, "ip=");
	char ipbuf[20] = "";

	memset(h, 0, sizeof(*h));
	if (ipopt)
		sscanf(ipopt + 3, "%19[0-9.]", ipbuf);
	h->ip = bench_ip_parse(ipbuf);
	h->cnp_from_notice = c->cnp_from_notice;
	h->credits = c->credits;
	if (qp_ratetable_create_mem(BENCH_HOST_MAX_QPS, &h->table, err, errlen) < 0)
		return -1;
	qp_ratetable_heartbeat(h->table, now);
	agent_params_default(&ap);
	ap.cc = c->cc;
	ap.credits = c->credits;
	ap.seed = c->seed ^ h->ip;
	ap.max_qps = BENCH_HOST_MAX_QPS;
	ap.allow[0] = (struct agent_net){ 0, 0 };   /* every source: the loopback star is ours */
	ap.nallow = 1;
	ap.log = c->quiet ? NULL : host_agent_log;   /* counted either way; -v prints */
	ap.log_arg = h;
	h->agent = agent_create(&ap, h->table, now, err, errlen);
	if (!h->agent) {
		bench_host_close(h);
		return -1;
	}
	struct qp_ctx_attr attr = {
		.rate_table_mem = h->table,
		.backend_arg = &sarg,
		.options = c->options,
		.log = c->quiet ? host_log_quiet : NULL,
	};
	int rc = qp_ctx_open("soft", &attr, &h->ctx, err, errlen);
	if (rc < 0) {
		bench_host_close(h);
		return -1;
	}
	h->next_heartbeat_ns = now + HOST_HEARTBEAT_NS;
	return 0;
}

void bench_host_close(struct bench_host *h)
{
	qp_ctx_close(h->ctx);
	agent_destroy(h->agent);
	if (h->table)
		qp_ratetable_close(h->table);
	memset(h, 0, sizeof(*h));
}

int bench_host_register(struct bench_host *h, struct qp *qp, qp_rate_bps link_bps,
			qp_time_ns base_rtt_ns, bool receiver, const char *algo,
			const char *params, qp_time_ns now, char *err, size_t errlen)
{
	struct agent_qp_reg r = {
		.qpn = qp->qpn,
		.peer_qpn = qp->remote.qpn,
		.local_ip = h->ip,
		.peer_ip = 0,
		.sport = soft_roce_sport(qp->qpn, qp->remote.qpn),
		.flags = receiver ? AGENT_QP_RECEIVER : 0,
		.mtu_bytes = qp->path_mtu_bytes,
		.link_bps = link_bps,
		.base_rtt_ns = base_rtt_ns,
	};

	if (h->nqps >= BENCH_HOST_MAX_QPS)
		return snprintf(err, errlen, "host: more than %u QPs", BENCH_HOST_MAX_QPS), -1;
	/* The peer's IPv4 address is the low 4 bytes of its IPv4-mapped GID. */
	const uint8_t *g = qp->remote.gid;
	r.peer_ip = (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 | (uint32_t)g[14] << 8 | g[15];
	if (algo)
		snprintf(r.algo, sizeof(r.algo), "%s", algo);
	if (algo && params)
		snprintf(r.params, sizeof(r.params), "%s", params);
	if (agent_register(h->agent, &r, 0, 0, now, err, errlen) < 0)
		return -1;
	/* IA-TCP's senders wait for the receiver's first grant. The agent turns credit gating
	 * on at the first grant, so a sender would start at its full rate for the first
	 * RTT + delta; a sender of a credit-paced run starts gated instead (with no credits).
	 * The table is this host's own, written by this thread only. */
	if (!receiver && h->credits) {
		uint32_t slot = 0;
		struct qp_rate_entry e;
		if (qp_ratetable_lookup(h->table, qp->qpn, &slot, &e) == 0)
			qp_ratetable_set(h->table, slot, e.rate_bps, e.cap_bytes, e.flags | QP_RATE_F_CREDITS, now);
	}
	h->qps[h->nqps++] = (struct bench_host_qp){ qp->qpn, r.peer_qpn, r.peer_ip };
	return 0;
}

int bench_host_unregister(struct bench_host *h, uint32_t qpn, qp_time_ns now)
{
	for (unsigned i = 0; i < h->nqps; i++) {
		if (h->qps[i].qpn == qpn) {
			h->qps[i] = h->qps[--h->nqps];
			return agent_unregister(h->agent, qpn, now);
		}
	}
	return -ENOENT;
}

void bench_host_service(struct bench_host *h, qp_time_ns now)
{
	struct agent_dgram d[16];
	unsigned n;

	if (agent_next_ns(h->agent) <= now)
		agent_poll(h->agent, now);
	if (now >= h->next_heartbeat_ns) {
		qp_ratetable_heartbeat(h->table, now);
		h->next_heartbeat_ns = now + HOST_HEARTBEAT_NS;
	}
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
		}
	}
}

qp_time_ns bench_host_deadline(struct bench_host *h)
{
	return qp_time_min(qp_time_min(qp_ctx_deadline(h->ctx), agent_next_ns(h->agent)),
			   h->next_heartbeat_ns);
}

qp_rate_bps bench_host_rate(const struct bench_host *h, uint32_t qpn)
{
	struct agent_qp_view v;

	return agent_qp_view(h->agent, qpn, &v) == 0 ? v.rate_bps : 0;
}
