/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the real-time and the virtual-time incast runners share: see incast_priv.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "incast_priv.h"
#include "plot.h"

/* HPCC (and ACC, which is HPCC underneath) with the settings of HPCC's own experiments,
 * max_stage 0 (run.py --mi 0) and W_AI from the paper's rule (below), and a rate floor at
 * which a flow still sends one packet, and so hears one INT report, every 10 base RTTs
 * (the reference's line/1000 is that at 100 Gb/s and ~8 us; at 250 Mb/s and ~0.5 ms a
 * flow at line/1000 hears from the network once per ~33 ms). */
static void incast_hpcc_params(const struct incast *x, qp_rate_bps line_bps, const char *extra,
			       char *buf, size_t len)
{
	qp_rate_bps floor_bps =
		(qp_rate_bps)((double)x->c->mtu_bytes * 8.0 * 1e9 / (10.0 * (double)x->base_rtt_ns));
	/* W_AI = W_init * (1 - eta) / N (HPCC paper, section 3.3) as a rate: N flows that
	 * each add it fill the eta headroom in one step. The default, line/2500, suits many
	 * more flows than this incast has; with it a flow cut to the floor took ~100 ms to
	 * come back (fairness rests on the additive step alone). */
	qp_rate_bps ai_bps =
		(qp_rate_bps)((1.0 - INCAST_HPCC_ETA) * (double)line_bps / (double)x->senders);

	if (floor_bps < x->c->link_bps / 1000)
		floor_bps = x->c->link_bps / 1000;
	if (floor_bps > x->c->link_bps / 4)
		floor_bps = x->c->link_bps / 4;
	snprintf(buf, len, "eta=%g,max_stage=0,min_rate=%llu,rate_ai=%llu%s%s", INCAST_HPCC_ETA,
		 (unsigned long long)floor_bps, (unsigned long long)(ai_bps ? ai_bps : 1),
		 *extra ? "," : "", extra);
}

/* Base RTT of the modelled network: data out over two links and the ACK back, one
 * MTU-sized frame serialized at each hop, plus what the loopback path really adds (kept
 * in virtual time so both clocks register the same RTT, unless c->model_rtt: there is no
 * loopback path there, and at 100 Gb/s the 30 us would be 7x the links' 4 us). */
static qp_time_ns incast_base_rtt(const struct bench_conf *c)
{
	bool loopback = c->clock == BENCH_CLOCK_REAL || !c->model_rtt;

	return 4 * c->delay_ns + 2 * qp_tx_time_ns(c->mtu_bytes + STATS_ROCE_PKT_OVERHEAD,
						    c->link_bps) +
	       2 * qp_tx_time_ns(64, c->link_bps) + (loopback ? 30 * QP_NS_PER_US : 0);
}

int incast_setup(struct incast *x, struct incast_run *run, const char *algo, bool *credits,
		 char *cc, size_t cclen, char *err, size_t errlen)
{
	const struct bench_conf *c = x->c;
	struct incast_result *r = &run->res;
	int rc;

	memset(run, 0, sizeof(*run));
	if ((rc = incast_algo_parse(algo, cc, cclen, credits, err, errlen)))
		return rc;
	x->cc = cc;
	snprintf(r->algorithm, sizeof(r->algorithm), "%s", algo);
	snprintf(r->cc, sizeof(r->cc), "%s", cc);
	snprintf(r->clock, sizeof(r->clock), "%s",
		 c->clock == BENCH_CLOCK_VIRTUAL ? "virtual" : "real");
	snprintf(r->op, sizeof(r->op), "%s", c->op == BENCH_OP_READ ? "read" : "write");
	r->credits = *credits;
	r->senders = (uint32_t)x->senders;
	r->bytes_per_sender = x->bytes;
	r->link_bps = c->link_bps;
	r->mtu_bytes = (uint32_t)c->mtu_bytes;
	r->buffer_bytes = c->buffer_bytes;
	r->qp_timeout = incast_qp_timeout(c);
	r->rounds = (uint32_t)c->rounds;
	x->base_rtt_ns = incast_base_rtt(c);
	/* A notice threshold of one BDP means this network's: the link rate times the
	 * modelled base RTT (the switch alone knows only its own delays and would count half
	 * the path). */
	incast_feedback(cc_find(cc), c->link_bps, qp_bytes_in(c->link_bps, x->base_rtt_ns),
			&x->fb);
	incast_feedback_int(&x->fb, c->int_mode);
	return 0;
}

int incast_alloc(struct incast *x, struct incast_run *run, const char *out_dir, char *err,
		 size_t errlen)
{
	uint64_t senders = x->senders;

	x->fl = calloc(senders + 1, sizeof(*x->fl));
	x->row = calloc(senders, sizeof(*x->row));
	run->nflows = (size_t)(senders * x->c->rounds);
	run->flows = calloc(run->nflows, sizeof(*run->flows));
	if (!x->fl || !x->row || !run->flows ||
	    series_create(&x->rates, (unsigned)senders, out_dir ? INCAST_SERIES_CAP : 1))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	return 0;
}

void incast_host_conf(const struct incast *x, struct host_conf *hc, const char *opts,
		      bool credits, bool cnp)
{
	*hc = (struct host_conf){ .options = opts, .cc = x->cc, .credits = credits,
				  .cnp_from_notice = cnp, .seed = x->c->seed,
				  .quiet = !x->c->verbose,
				  .key = x->c->have_key ? x->c->key : NULL,
				  .clock_offset_ns = qp_wall_offset_ns() };
}

int incast_connect(struct incast *x, char *err, size_t errlen)
{
	size_t wr = x->bytes < INCAST_WR_BYTES ? x->bytes : INCAST_WR_BYTES;
	struct qp_attr qa = { .sq_depth = INCAST_SQ_DEPTH, .rq_depth = 16,
			      .mtu_bytes = (uint32_t)x->c->mtu_bytes, .timeout = incast_qp_timeout(x->c),
			      .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL,
			      /* A NIC paces packets: one packet per piece, at most one more
			       * after idling. 4 KiB pieces put four back to back on a path
			       * whose BDP is ~15 packets, a queue HPCC reads as congestion. */
			      .gate = { .chunk_bytes = x->c->mtu_bytes,
					.burst_bytes = x->c->mtu_bytes } };
	struct host *rh = x->h[0];
	char e[300] = "";
	int rc;

	x->rbuf = calloc(1, wr);
	x->sbuf = calloc(1, wr);
	x->smr = calloc(x->senders + 1, sizeof(*x->smr));
	if (!x->rbuf || !x->sbuf || !x->smr)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	memset(x->sbuf, 0x5a, wr);
	/* WRITE: host 0's buffer is the target; READ: it is where the data lands, and each
	 * host i exposes its own for host 0 to read */
	rc = qp_mr_reg(rh->ctx, x->rbuf, wr, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE,
		       &x->rmr);
	if (rc < 0)
		return qp_errmsg(rc, err, errlen, "receiver: cannot register memory");
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct host *sh = x->h[i];
		struct flow_state *f = &x->fl[i];
		struct qp_conn_info li, ri;
		/* Virtual time: PSNs from the seed, so the frames are the same bytes each run;
		 * and no polling for credits or the window: the engine offers pending pieces to
		 * their gates at each event that can open them (qp_ctx_retry), so the poll
		 * interval is the longest there is. */
		struct qp_attr ra = qa, sa = qa;
		sa.traffic_class = x->fb.tos;   /* ECT(0) when the switch marks */
		/* READs outstanding: as many as rxe allows (perftest's -o there), so what
		 * bounds the requester is its pacing, not the QP (16 one-MTU READs a flow
		 * would be a window of 16 KB) */
		if (incast_reads(x))
			ra.max_rd_atomic = sa.max_dest_rd_atomic = QP_RD_ATOMIC_MAX;
		ra.psn_fixed = sa.psn_fixed = x->virtual_time;
		if (x->virtual_time)
			ra.gate.credit_poll_ns = sa.gate.credit_poll_ns = QP_NS_PER_S;
		ra.psn = (uint32_t)((x->c->seed * 2654435761u + 2 * i) & 0xffffff);
		sa.psn = (uint32_t)((x->c->seed * 2654435761u + 2 * i + 1) & 0xffffff);
		if ((rc = qp_mr_reg(sh->ctx, x->sbuf, wr, QP_ACCESS_LOCAL_WRITE |
				    (incast_reads(x) ? QP_ACCESS_REMOTE_READ : 0), &x->smr[i])) < 0 ||
		    (rc = qp_create(rh->ctx, &ra, &f->rqp, e, sizeof(e))) < 0 ||
		    (rc = qp_create(sh->ctx, &sa, &f->qp, e, sizeof(e))) < 0 ||
		    (rc = qp_local_info(f->rqp, x->rmr, &ri)) < 0 ||
		    (rc = qp_local_info(f->qp, incast_reads(x) ? x->smr[i] : NULL, &li)) < 0 ||
		    (rc = qp_connect(f->rqp, &li, e, sizeof(e))) < 0 ||
		    (rc = qp_connect(f->qp, &ri, e, sizeof(e))) < 0)
			return qp_errmsg(rc, err, errlen, "sender %" PRIu64 ": %s", i, e);
	}
	return 0;
}

/* Register both ends of every flow with their hosts' agents, at the start of each round:
 * each round's flows are new flows to the controllers (HPCC starts a flow at line rate)
 * and to the receiver's credit pacer (n = the flows still sending; a finished flow is
 * unregistered, so its share goes to the others and no credit piles up between rounds).
 * The line rate they get is
 * the link's payload rate: the pacing gate meters payload bytes, so a sender at the
 * link's bit rate would put 1 + 58/MTU of it on the wire (5.7% at MTU 1024), and a credit
 * pacer granting C * RTT of payload would overfill the port it paces. */
/* The receiver's end of flow @f with host 0's agent (under its thread's lock, when on). */
static int incast_register_rx(struct incast *x, struct flow_state *f, qp_rate_bps line,
			      qp_time_ns now, char *e, size_t elen)
{
	incast_rx_enter(x->rx);
	int rc = host_register(x->h[0], f->rqp, line, x->base_rtt_ns, true, "none", NULL, now,
			       e, elen);
	incast_rx_leave(x->rx);
	return rc;
}

int incast_register(struct incast *x, qp_time_ns now, char *err, size_t errlen)
{
	qp_rate_bps line = (qp_rate_bps)stats_payload_bps(x->c->link_bps, (uint32_t)x->c->mtu_bytes,
							  STATS_ROCE_PKT_OVERHEAD);
	char e[300], params[256];
	int rc;
	/* The algorithm's defaults (and the agent's default algorithm, which is it) unless
	 * it takes HPCC's settings or runs with parameters of its own (its feedback's, then
	 * --cc-params). */
	bool own = x->fb.hpcc_settings || x->fb.params || x->c->cc_params;

	params[0] = '\0';
	if (x->fb.hpcc_settings)
		incast_hpcc_params(x, line, x->fb.params ? x->fb.params : "", params, sizeof(params));
	else if (x->fb.params)
		snprintf(params, sizeof(params), "%s", x->fb.params);
	if (x->c->cc_params && *x->c->cc_params) {
		size_t n = strlen(params);
		snprintf(params + n, sizeof(params) - n, "%s%s", n ? "," : "", x->c->cc_params);
	}
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		if (f->lost || f->registered)
			continue;
		f->registered = true;
		if (incast_reads(x))   /* the requester's agent alone: the reader paces itself */
			rc = host_register(x->h[0], f->rqp, line, x->base_rtt_ns, HOST_READER,
					   own ? x->cc : NULL, own ? params : NULL, now, e, sizeof(e));
		else if ((rc = host_register(x->h[i], f->qp, line, x->base_rtt_ns, HOST_SENDER,
					     own ? x->cc : NULL, own ? params : NULL, now, e,
					     sizeof(e))) == 0)
			rc = incast_register_rx(x, f, line, now, e, sizeof(e));
		if (rc)
			return qp_errmsg(rc, err, errlen, "sender %" PRIu64 ": agent: %s", i, e);
		host_flow_start(x->h[i], f->qp->qpn, x->bytes, now);   /* the round's message */
	}
	return 0;
}

int flow_post(struct incast *x, struct flow_state *f, uint64_t i)
{
	size_t wr = x->bytes < INCAST_WR_BYTES ? x->bytes : INCAST_WR_BYTES;

	bool rd = incast_reads(x);
	struct qp *qp = flow_qp(x, f);

	while (f->active && f->posted < x->bytes) {
		uint32_t len = (uint32_t)(x->bytes - f->posted < wr ? x->bytes - f->posted : wr);
		struct qp_wr w = { .opcode = rd ? QP_OP_READ : QP_OP_WRITE, .wr_id = len,
				   .mr = rd ? x->rmr : x->smr[i], .addr = rd ? x->rbuf : x->sbuf,
				   .length = len, .remote_addr = qp->remote.addr,
				   .rkey = qp->remote.rkey, .flags = QP_WR_SIGNALED };
		int rc = qp_post_send(qp, &w);
		if (rc == -EAGAIN || rc == -ENOMEM || rc == -ENOSPC)
			return rc;   /* gate closed, or the queue full until completions are polled */
		if (rc < 0) {
			f->lost = true;
			f->active = false;
			return 0;
		}
		f->posted += len;
	}
	return 0;
}

void flow_leave(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now)
{
	if (!f->registered)
		return;
	if (!incast_reads(x))
		host_unregister(x->h[i], f->qp->qpn, now);
	incast_rx_enter(x->rx);
	host_unregister(x->h[0], f->rqp->qpn, now);
	incast_rx_leave(x->rx);
	f->registered = false;
}

void flow_poll(struct incast *x, struct flow_state *f, uint64_t i, qp_time_ns now)
{
	struct qp_wc wc[32];
	int n = qp_poll(flow_qp(x, f), wc, 32);

	for (int k = 0; k < n; k++) {
		if (wc[k].status != QP_WC_SUCCESS) {
			if (!f->lost)
				fprintf(stderr, "qpace-bench: sender %" PRIu64 " (10.0.0.%u) lost: %s; "
					"the other flows go on\n", i, (unsigned)i + 1,
					qp_wc_status_str(wc[k].status));
			f->lost = true;
			f->active = false;
			flow_leave(x, f, i, now);
			return;
		}
		f->acked += wc[k].wr_id;
	}
	if (f->active && f->acked >= x->bytes) {
		f->active = false;
		f->done_ns = now;
		flow_leave(x, f, i, now);
	}
}

void incast_sample(struct incast *x, qp_time_ns now)
{
	if (!x->registered || now < x->next_sample_ns)
		return;
	x->next_sample_ns = now + incast_sample_ns(x->c);
	if (x->mon.lfd >= 0) {   /* it answers from every agent's state, host 0's too */
		incast_rx_enter(x->rx);
		monitor_serve(&x->mon);
		incast_rx_leave(x->rx);
	}
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct qp_stats st;
		struct flow_state *f = &x->fl[i];
		struct host *h = x->h[flow_host(x, i)];
		struct qp *qp = flow_qp(x, f);

		x->row[i - 1] = f->registered ? host_rate(h, qp->qpn) : 0;
		if (!f->registered)
			continue;
		qp_get_stats(qp, &st);
		agent_qp_stats(h->agent, qp->qpn, st.tx_bytes, st.retransmissions);
	}
	series_add(&x->rates, now, x->row);
}

bool incast_round_busy(const struct incast *x)
{
	for (uint64_t i = 1; i <= x->senders; i++)
		if (x->fl[i].active)
			return true;
	return false;
}

void incast_round_begin(struct incast *x, qp_time_ns now)
{
	(void)now;
	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		f->posted = f->acked = 0;
		f->done_ns = 0;
		f->active = !f->lost;
		qp_get_stats(flow_qp(x, f), &f->base);
	}
}

qp_time_ns incast_round_end(struct incast *x, uint32_t r, qp_time_ns start, qp_time_ns now,
			    struct incast_flow *out)
{
	qp_time_ns end = start;

	for (uint64_t i = 1; i <= x->senders; i++) {
		struct flow_state *f = &x->fl[i];
		struct qp_stats st;
		qp_get_stats(flow_qp(x, f), &st);
		struct incast_flow *o = &out[i - 1];
		*o = (struct incast_flow){ .round = r, .sender = (uint32_t)i, .bytes = x->bytes,
					   .done = f->done_ns != 0,
					   .retransmits = st.retransmissions - f->base.retransmissions,
					   .timeouts = st.timeouts - f->base.timeouts };
		if (o->done) {
			o->fct_ns = f->done_ns - start;
			end = end > f->done_ns ? end : f->done_ns;
		} else {
			f->active = false;
			end = now;
		}
		flow_leave(x, f, i, end);
	}
	return end - start;
}

qp_time_ns incast_rtt_median(const struct incast *x, qp_time_ns *rtt, uint64_t n)
{
	qp_time_ns model = x->base_rtt_ns;

	if (n == 0)
		return model;
	for (uint64_t a = 1; a < n; a++)                /* insertion sort: n <= 127 */
		for (uint64_t b = a; b > 0 && rtt[b - 1] > rtt[b]; b--) {
			qp_time_ns t = rtt[b]; rtt[b] = rtt[b - 1]; rtt[b - 1] = t;
		}
	return rtt[n / 2] > model ? rtt[n / 2] : model;
}

void incast_agent_counters(const struct incast *x)
{
	uint64_t sum[AGENT_C_COUNT] = { 0 }, cnps = 0, sent = 0, failed = 0;

	for (uint64_t i = 0; i <= x->senders; i++) {
		const uint64_t *c = agent_counters(x->h[i]->agent);
		sent += x->h[i]->tx_sent;
		failed += x->h[i]->tx_failed;
		for (int k = 0; k < AGENT_C_COUNT; k++)
			sum[k] += c[k];
		cnps += x->h[i]->cnps;
	}
	fprintf(stderr, "qpace-bench: agents:");
	for (int k = 0; k < AGENT_C_COUNT; k++)
		if (sum[k])
			fprintf(stderr, " %s=%" PRIu64, agent_counter_name(k), sum[k]);
	if (cnps)
		fprintf(stderr, " cnps=%" PRIu64, cnps);
	fprintf(stderr, " datagrams_out=%" PRIu64 " datagrams_not_sent=%" PRIu64, sent, failed);
	fputc('\n', stderr);
}

void incast_outputs(const struct incast *x, struct incast_run *run, const char *dir,
		    qp_time_ns t0, bool have_sw)
{
	char path[4200], e[300];
	qp_time_ns sa = stats_standalone_fct_ns(x->bytes, (uint32_t)x->c->mtu_bytes,
						STATS_ROCE_PKT_OVERHEAD, x->c->link_bps, x->base_rtt_ns);

	snprintf(path, sizeof(path), "%s/flows.csv", dir);
	incast_write_flows_csv(path, run, sa);
	snprintf(path, sizeof(path), "%s/rates.csv", dir);
	series_write_csv(&x->rates, path, t0);
	if (x->c->no_plots)
		return;
	if (plot_rates(dir, run->res.algorithm, (unsigned)x->senders, e, sizeof(e)) == 0 && have_sw)
		plot_queue(dir, run->res.algorithm, (unsigned)x->senders + 1, e, sizeof(e));
}

void incast_free(struct incast *x)
{
	monitor_close(&x->mon);
	free(x->agents);
	free(x->fl);
	free(x->rbuf);
	free(x->sbuf);
	free(x->smr);
	free(x->row);
	free(x->h);
	series_free(&x->rates);
}
