/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The data path: ingress, forwarding, enqueue with telemetry, and frames leaving ports
 * (see sw.h). Time comes in as an argument; the only I/O is the port backends' send,
 * reached through sw_port_flush. */
#include <errno.h>
#include <string.h>

#include "qpace/feedback.h"
#include "capture.h"
#include "int_want.h"
#include "io.h"
#include "sw.h"

/* ---- the priority band ---- */
static struct sw_ctrl_slot *ctrl_at(const struct sw_port *p, uint32_t i)
{
	return sw_ctrl_at(p, i);
}

static void ctrl_push(struct sw_port *p, const uint8_t *frame, size_t len, qp_time_ns now)
{
	struct sw_ctrl_slot *s;

	if (p->ctrl_tail - p->ctrl_head >= SW_CTRL_SLOTS || len > SW_CTRL_FRAME ||
	    sw_port_ctrl_room(p)) {
		p->st.ctrl_drops++;
		return;
	}
	s = ctrl_at(p, p->ctrl_tail++);
	memcpy(s->frame, frame, len);
	s->len = (uint16_t)len;
	s->leave_ns = now + p->q_delay_ns;
	sw_port_touch(p);
}

void sw_port_send_ctrl(struct sw_port *p, const uint8_t *frame, size_t len, qp_time_ns now)
{
	ctrl_push(p, frame, len, now);
}

/* Where telemetry for the host at @dst_ip goes: its MAC from what the switch learned
 * (else @mac), and the port that MAC was seen on; NULL (counted) when unknown. */
static struct sw_port *telem_route(struct sw_switch *sw, uint32_t dst_ip, const uint8_t *mac,
				   struct frame_addr *dst)
{
	const struct sw_ip_entry *ipe = dst_ip ? sw_fwd_lookup_ip(&sw->fwd, dst_ip) : NULL;
	int out;

	if (!dst_ip) {   /* an IPv6 flow's host with no IPv4 address learned */
		sw->fab->ctrl_unroutable++;
		return NULL;
	}
	*dst = (struct frame_addr){ .ip = dst_ip, .port = FB_PORT };
	memcpy(dst->mac, ipe ? ipe->mac : mac, 6);
	out = sw_fwd_lookup(&sw->fwd, dst->mac);
	if (out < 0) {
		sw->fab->ctrl_unroutable++;
		return NULL;
	}
	return &sw->ports[out];
}

/* One UDP 4792 datagram from the switch with @plen bytes of messages, into the band. */
static void telem_push(struct sw_switch *sw, struct sw_port *out, const struct frame_addr *dst,
		       const uint8_t *payload, size_t plen, qp_time_ns now)
{
	struct frame_addr src = { .ip = sw->conf->ip, .port = FB_PORT };
	struct frame_ip_opts ip = { .tos = 0xb8, .id = sw->ip_id++ };   /* DSCP EF */
	uint8_t frame[SW_CTRL_FRAME];
	int n;

	memcpy(src.mac, sw->conf->mac, 6);
	n = frame_build_udp(frame, sizeof(frame), &src, dst, &ip, payload, plen);
	if (n > 0)
		ctrl_push(out, frame, (size_t)n, now);
}

/* A telemetry message from switch @sw to the host at @dst_ip, in a datagram of its own. */
static void telem_send(struct sw_switch *sw, uint32_t dst_ip, const uint8_t *mac,
		       const struct fb_msg *msg, qp_time_ns now)
{
	struct frame_addr dst;
	struct sw_port *out = telem_route(sw, dst_ip, mac, &dst);
	uint8_t payload[FB_MAX_LEN];
	int plen = fb_encode(payload, sizeof(payload), msg);

	if (plen > 0)
		plen = sw_auth_sign(&sw->auth, payload, sizeof(payload), (size_t)plen, now);
	if (out && plen > 0)
		telem_push(sw, out, &dst, payload, (size_t)plen, now);
}

static void pack_close(struct sw_port *p)
{
	struct frame_addr dst = { .ip = p->pack.dst_ip, .port = FB_PORT };

	memcpy(dst.mac, p->pack.dst_mac, 6);
	telem_push(p->sw, p, &dst, p->pack.payload, p->pack.len, p->pack.t);
	p->pack.open = false;
	p->sw->fab->packs_open--;
}

static void pack_open(struct sw_port *p, uint32_t dst_ip, const uint8_t *mac, qp_time_ns now)
{
	struct sw_pack *k = &p->pack;
	struct sw_fabric *f = p->sw->fab;

	f->packs_open++;
	if (!k->listed) {
		k->listed = true;
		f->packl[f->npackl++] = p;
	}
	k->open = true;
	k->dst_ip = dst_ip;
	memcpy(k->dst_mac, mac, 6);
	k->len = 0;
	k->t = now;
}

/* The port whose open datagram of reports goes to the host at @dst_ip (opened at @now
 * when none is), NULL (counted) when the host cannot be placed. */
static struct sw_port *pack_port(struct sw_switch *sw, uint32_t dst_ip, const uint8_t *mac,
				 qp_time_ns now)
{
	struct frame_addr dst;
	struct sw_port *out = telem_route(sw, dst_ip, mac, &dst);
	struct sw_pack *k;

	if (!out)
		return NULL;
	k = &out->pack;
	if (k->open && (k->dst_ip != dst_ip || memcmp(k->dst_mac, dst.mac, 6)))
		pack_close(out);
	if (!k->open)
		pack_open(out, dst_ip, dst.mac, now);
	return out;
}

/* Close every open pack, in port order (their datagrams' IP IDs follow it): true when
 * any was. Only the ports that opened one since the last close are visited (a pass over
 * every port missed the cache on each: 7% of the 128-host run's misses). */
static bool packs_close(struct sw_fabric *f)
{
	bool any = false;

	if (!f->packs_open)
		return false;
	for (int i = 1; i < f->npackl; i++) {      /* a few at most: insertion sort */
		struct sw_port *p = f->packl[i];
		int j = i;

		for (; j > 0 && f->packl[j - 1]->gidx > p->gidx; j--)
			f->packl[j] = f->packl[j - 1];
		f->packl[j] = p;
	}
	for (int i = 0; i < f->npackl; i++) {
		struct sw_port *p = f->packl[i];

		p->pack.listed = false;
		if (p->pack.open) {
			pack_close(p);
			any = true;
		}
	}
	f->npackl = 0;
	return any;
}

/* Send @frame from switch @sw towards the MAC in its first 6 bytes, in the priority band. */
static void ctrl_send(struct sw_switch *sw, const uint8_t *frame, size_t len, qp_time_ns now)
{
	int out = sw_fwd_lookup(&sw->fwd, frame);

	if (out < 0) {
		sw->fab->ctrl_unroutable++;
		return;
	}
	ctrl_push(&sw->ports[out], frame, len, now);
}

/* A RoCEv2 CNP to the data sender's QP, as the receiver would send it (from the
 * receiver's addresses, BECN set), when that QP is known. */
static bool send_cnp(struct sw_port *p, const struct sw_meta *m, const uint8_t *frame,
		     qp_time_ns now)
{
	bool rd = m->flags & SW_M_READ_RESP;
	const struct sw_qp_entry *qp = rd ? NULL : sw_fwd_lookup_qp(&p->sw->fwd, m->key.src_ip,
								    m->key.dst_ip);
	struct frame_roce_spec s = {
		.src = { .ip = m->key.dst_ip, .port = 0xc000 | (m->key.qp & 0x3fff) },
		.dst = { .ip = m->key.src_ip },
		.bth = { .opcode = FRAME_OP_CNP, .becn = true },
	};
	uint8_t cnp[SW_CTRL_FRAME];
	int n;

	if (m->flags & SW_M_IPV6)   /* the switch's CNPs are IPv4's */
		return false;
	if (rd) {   /* to the requester's QP, the data's destination QP, as if from the responder */
		s.src = (struct frame_addr){ .ip = m->key.src_ip, .port = 0xc000 | (m->key.qp & 0x3fff) };
		s.dst = (struct frame_addr){ .ip = m->key.dst_ip };
		s.bth.dest_qp = m->key.qp;
		memcpy(s.src.mac, frame + 6, 6);
		memcpy(s.dst.mac, frame, 6);
		goto build;
	}
	if (!qp)
		return false;
	s.bth.dest_qp = qp->qp;
	memcpy(s.src.mac, frame, 6);       /* the data frame's destination: the receiver */
	memcpy(s.dst.mac, frame + 6, 6);   /* its source: the sender */
build:
	n = frame_build_roce(cnp, sizeof(cnp), &s);
	if (n > 0)
		ctrl_send(p->sw, cnp, (size_t)n, now);
	return n > 0;
}

/* The flow a message is about: its key, or an IPv6 frame's own addresses (FB_F_IPV6 into
 * @flags). */
static struct fb_flow fb_flow_of(const struct sw_meta *m, const uint8_t *frame, uint8_t *flags)
{
	struct fb_flow f = { .src_ip = m->key.src_ip, .dst_ip = m->key.dst_ip,
			     .sport = m->key.sport, .dest_qp = m->key.qp };

	if (m->flags & SW_M_IPV6) {
		f.src_ip = f.dst_ip = 0;
		memcpy(f.src6, frame + FRAME_ETH_HLEN + 8, 16);
		memcpy(f.dst6, frame + FRAME_ETH_HLEN + 24, 16);
		*flags |= FB_F_IPV6;
	}
	return f;
}

/* The IPv4 address of the host at @mac that the key's @ip names: that one, or for an
 * IPv6 flow the one the switch learned for the MAC (its agent listens on IPv4), 0 none. */
static uint32_t host_ip(struct sw_switch *sw, const struct sw_meta *m, uint32_t ip,
			const uint8_t *mac)
{
	return (m->flags & SW_M_IPV6) ? sw_fwd_ip_of_mac(&sw->fwd, mac) : ip;
}

/* Where the switch's word about a flow goes: its data's sender, or for READ responses
 * their receiver, the requester (flagged so), with the MAC to reach it. */
static uint32_t telem_to(struct sw_switch *sw, const struct sw_meta *m, const uint8_t *frame,
			 const uint8_t **mac, uint8_t *flags)
{
	bool rd = m->flags & SW_M_READ_RESP;

	*mac = rd ? frame : frame + 6;
	*flags = rd ? FB_F_TO_RECEIVER : 0;
	return host_ip(sw, m, rd ? m->key.dst_ip : m->key.src_ip, *mac);
}

static void send_notice(struct sw_port *p, const struct sw_meta *m, const uint8_t *frame,
			const struct sw_enq_out *o)
{
	struct fb_msg msg = { .type = FB_T_NOTICE };
	const uint8_t *mac;
	uint32_t to = telem_to(p->sw, m, frame, &mac, &msg.flags);

	msg.u.notice = (struct fb_notice){
		.flow = fb_flow_of(m, frame, &msg.flags), .psn = m->psn, .switch_id = p->sw->id,
		.port = (uint16_t)p->index, .flows = o->flows,
		.queue_bytes = o->qbytes > UINT32_MAX ? UINT32_MAX : (uint32_t)o->qbytes,
		.link_bps = p->conf->q.rate_bps, .reflected_ts_ns = o->arrival_ns,
	};
	p->st.notices++;
	telem_send(p->sw, to, mac, &msg, o->arrival_ns);
	if (p->telem.cnp && send_cnp(p, m, frame, o->arrival_ns))
		p->st.cnps++;
}

static void send_level(struct sw_port *p, const struct sw_meta *m, const uint8_t *frame,
		       const struct sw_flow *fl, const struct sw_enq_out *o, uint64_t level_q)
{
	struct fb_msg msg = { .type = FB_T_LEVEL };
	const uint8_t *mac;
	uint32_t to = telem_to(p->sw, m, frame, &mac, &msg.flags);

	msg.u.level = (struct fb_level){
		.flow = fb_flow_of(m, frame, &msg.flags), .switch_id = p->sw->id, .port = (uint16_t)p->index,
		.level = fl->level_sent, .seq = fl->level_seq, .psn = m->psn,
		.queue_bytes = level_q > UINT32_MAX ? UINT32_MAX : (uint32_t)level_q,
	};
	p->st.levels++;
	telem_send(p->sw, to, mac, &msg, o->arrival_ns);
}

/* One INT report into @buf, signed when the switch has a key: its length or -EMSGSIZE. */
static int int_report(struct sw_switch *sw, uint8_t *buf, size_t cap, uint8_t flags,
		      const struct fb_flow *flow, const struct sw_meta *m, qp_time_ns now)
{
	int n = fb_encode_int(buf, cap, FB_T_INT, flags, flow, m->psn, m->hops, m->nhops);

	return n > 0 ? sw_auth_sign(&sw->auth, buf, cap, (size_t)n, now) : n;
}

/* An INT report, packed with the other reports of this pass to the same host: encoded
 * straight into the datagram (no struct fb_msg to fill per frame); when it does not fit,
 * the datagram so far is closed and the report starts the next one. */
static void send_int(struct sw_port *p, const struct sw_meta *m, const uint8_t *frame,
		     qp_time_ns now)
{
	bool echo = p->telem.int_mode == SW_INT_ECHO || (m->flags & SW_M_READ_RESP);
	const uint8_t *mac = echo ? frame : frame + 6;
	uint32_t ip = host_ip(p->sw, m, echo ? m->key.dst_ip : m->key.src_ip, mac);
	uint8_t flags = echo ? FB_F_TO_RECEIVER : 0;
	struct fb_flow flow = fb_flow_of(m, frame, &flags);
	struct sw_port *out;
	struct sw_pack *k;
	int n;

	p->st.int_reports++;
	out = pack_port(p->sw, ip, mac, now);
	if (!out)
		return;
	k = &out->pack;
	n = int_report(p->sw, k->payload + k->len, SW_PACK_MAX - k->len, flags, &flow, m, now);
	if (n == -EMSGSIZE && k->len) {
		uint8_t dst_mac[6];
		memcpy(dst_mac, k->dst_mac, 6);
		pack_close(out);
		pack_open(out, ip, dst_mac, now);
		n = int_report(p->sw, k->payload, SW_PACK_MAX, flags, &flow, m, now);
	}
	if (n > 0)
		k->len = (uint16_t)(k->len + n);
}

/* ---- ingress ---- */

/* Level acks travel to the switch (its MAC/IP) or along the data path to the receiver;
 * the switch whose id they name takes them either way (with a key: signed and new). */
static void take_level_ack(struct sw_switch *sw, const uint8_t *f, const struct frame_parsed *p,
			   qp_time_ns now)
{
	struct fb_msg msg;
	struct sw_flow_key k;
	struct sw_port *port;
	uint32_t slot;

	if (fb_claimed_type(f + p->payload_off, p->payload_len) != FB_T_LEVEL ||
	    fb_decode(&msg, f + p->payload_off, p->payload_len) || msg.type != FB_T_LEVEL ||
	    msg.u.level.level != FB_LEVEL_ACK || msg.u.level.switch_id != sw->id ||
	    msg.u.level.port >= sw->nports ||
	    sw_auth_take(&sw->auth, f + p->payload_off, p->payload_len, now))
		return;
	port = &sw->ports[msg.u.level.port];
	k = (struct sw_flow_key){ .src_ip = msg.u.level.flow.src_ip,
				  .dst_ip = msg.u.level.flow.dst_ip,
				  .sport = msg.u.level.flow.sport, .qp = msg.u.level.flow.dest_qp };
	if (msg.flags & FB_F_IPV6) {   /* keyed as classify keys its frames */
		k.src_ip = sw_flow_fold6(msg.u.level.flow.src6);
		k.dst_ip = sw_flow_fold6(msg.u.level.flow.dst6);
	}
	slot = sw_flowtab_find(sw_queue_flows(port->q), &k);
	if (slot != SW_FLOW_NONE &&
	    sw_telem_level_ack(&sw_queue_flows(port->q)->slots[slot], msg.u.level.acked))
		port->st.level_acks++;
}

/* True when the frame was for the switch itself and is consumed. */
static bool to_switch(struct sw_port *in, const uint8_t *f, const struct frame_parsed *p,
		      qp_time_ns now)
{
	struct sw_switch *sw = in->sw;
	bool mine = !memcmp(p->eth.dst, sw->conf->mac, 6);

	if ((p->layers & FRAME_L_UDP) && p->udp.dport == FB_PORT) {
		take_level_ack(sw, f, p, now);
		sw_want_ingress(in, f, p, now);
	}
	if ((p->layers & FRAME_L_ARP) && p->arp.op == FRAME_ARP_REQUEST && sw->conf->ip &&
	    p->arp.tpa == sw->conf->ip) {
		uint8_t reply[FRAME_ETH_MIN];
		int n = frame_build_arp(reply, sizeof(reply), FRAME_ARP_REPLY, sw->conf->mac,
					sw->conf->ip, p->arp.sha, p->arp.spa);
		ctrl_push(in, reply, (size_t)n, now);
		mine = true;
	}
	if (mine)
		in->st.to_switch++;
	return mine;
}

static void classify(struct sw_meta *m, const struct frame_parsed *p)
{
	memset(m, 0, offsetof(struct sw_meta, hops));
	if (!(p->layers & FRAME_L_UDP))
		return;
	m->key = (struct sw_flow_key){ .src_ip = p->ip.src, .dst_ip = p->ip.dst,
				       .sport = p->udp.sport,
				       .qp = SW_FLOW_KEY_UDP | p->udp.dport };
	if (p->layers & FRAME_L_IPV6) {
		m->key.src_ip = sw_flow_fold6(p->ip6.src);
		m->key.dst_ip = sw_flow_fold6(p->ip6.dst);
		m->flags = SW_M_IPV6;
	}
	if ((p->layers & FRAME_L_ROCE) && (p->op->ext & FRAME_X_DATA)) {
		m->flags |= SW_M_ROCE_DATA | (p->bth.opcode >= FRAME_OP_RC_READ_RESP_FIRST &&
					      p->bth.opcode <= FRAME_OP_RC_READ_RESP_ONLY
					      ? SW_M_READ_RESP : 0);
		m->key.qp = p->bth.dest_qp;
		m->psn = p->bth.psn;
	}
}

static void enqueue(struct sw_port *src, struct sw_port *out, const uint8_t *f, size_t len,
		    const struct frame_parsed *p, const struct sw_meta *m, qp_time_ns now)
{
	bool data = m->flags & SW_M_ROCE_DATA;
	struct sw_enq in = {
		.frame = f, .frame_len = (uint16_t)len, .meta = m,
		.meta_len = data ? (uint16_t)SW_META_LEN(m->nhops) : 0,
		.key = (p->layers & FRAME_L_UDP) ? &m->key : NULL,
		.ect = frame_ecn_of(p) == FRAME_ECN_ECT0 || frame_ecn_of(p) == FRAME_ECN_ECT1,
		.ip_off = (uint16_t)p->ip_off,
	};
	struct sw_enq_out o;
	uint64_t level_q;
	unsigned what;

	if (m->flags & SW_M_CTRL) {
		ctrl_push(out, f, len, now);
		return;
	}
	if (!sw_pfc_admit(src, p, &in))
		return;
	if (sw_queue_enqueue(out->q, now, &in, &o)) {
		if (out->sw->pfc_xoff)
			sw_port_touch(out);   /* its model advanced: PFC's next departure may have */
		return;
	}
	if (in.tag)
		sw_pfc_charge(src, o.len, now);
	/* Its key moves only when the frame is the port's next to leave, or while PFC
	 * times the switch's departures (sched.c); else the tree and the hint stand. */
	if (out->sw->pfc_xoff || out->imp || sw_queue_count(out->q) == out->tx_from_queue + 1)
		sw_port_touch(out);
	level_q = o.qbytes;   /* the levels' RED average counts every frame that joins */
	if (out->telem.level_bytes[2])
		level_q = sw_red_avg_update(&out->level_avg, out->telem.level_weight, o.qbytes,
					    o.arrival_ns, o.depart_ns,
					    qp_tx_time_ns(o.len, out->conf->q.rate_bps));
	if (!data || o.flow == SW_FLOW_NONE)
		return;
	struct sw_flow *fl = &sw_queue_flows(out->q)->slots[o.flow];
	/* A falling count means flows left only when it counts flows that stopped sending
	 * (--flow-idle); a queue that drains empties the count of flows with bytes queued. */
	what = sw_telem_enqueue(&out->telem, fl, o.qbytes, level_q,
				out->conf->q.flow_idle_ns ? o.flows : 0, o.arrival_ns);
	if (what & SW_T_NOTICE)
		send_notice(out, m, f, &o);
	if (what & SW_T_LEVEL)
		send_level(out, m, f, fl, &o, level_q);
}

/* Is this RoCEv2 frame one whose ICRC is checked (every --icrc-check-th, the first one
 * included)? */
static bool icrc_due(struct sw_port *in)
{
	uint32_t every = in->sw->fab->conf->icrc_every;

	if (!every)
		return false;
	if (in->icrc_skip) {
		in->icrc_skip--;
		return false;
	}
	in->icrc_skip = every - 1;
	return true;
}

void sw_ingress(struct sw_port *in, const uint8_t *f, size_t len, const struct sw_meta *meta,
		qp_time_ns now)
{
	struct sw_switch *sw = in->sw;
	struct frame_parsed p;
	struct sw_meta m;
	int out;

	in->st.rx_frames++;
	in->st.rx_bytes += len;
	if (len > SW_FRAME_MAX || frame_parse(&p, f, len) < 0) {
		in->st.malformed++;
		return;
	}
	if ((p.layers & FRAME_L_IPV4) && frame_ipv4_csum(f + p.ip_off, p.ip.hlen)) {
		in->st.ip_csum_drops++;
		return;
	}
	if ((p.layers & FRAME_L_ROCE) && icrc_due(in)) {
		in->st.icrc_checked++;
		in->st.icrc_bad += !frame_icrc_ok(f, &p);   /* forwarded: the receiver drops it */
	}
	if (p.eth.ethertype == FRAME_ETHERTYPE_MAC_CONTROL) {   /* link-local: PFC */
		sw_pfc_input(in, &p, now);
		return;
	}
	sw_fwd_learn(&sw->fwd, p.eth.src, in->index, now);
	if (p.layers & FRAME_L_IPV4)
		sw_fwd_learn_ip(&sw->fwd, p.ip.src, p.eth.src, in->index, now);
	else if (p.layers & FRAME_L_ARP)
		sw_fwd_learn_ip(&sw->fwd, p.arp.spa, p.arp.sha, in->index, now);
	/* Responses (ACK, read response) name the requester's QP: remember it for CNPs. */
	if ((p.layers & FRAME_L_ROCE) && (p.layers & FRAME_L_IPV4) && (p.op->ext & FRAME_X_AETH))
		sw_fwd_learn_qp(&sw->fwd, p.ip.dst, p.ip.src, p.bth.dest_qp);
	if (to_switch(in, f, &p, now))
		return;
	if (meta)
		memcpy(&m, meta, SW_META_LEN(meta->nhops));
	else
		classify(&m, &p);
	out = frame_mac_is_multicast(p.eth.dst) ? SW_FWD_NONE : sw_fwd_lookup(&sw->fwd, p.eth.dst);
	if (out == in->index) {
		in->st.filtered++;
		return;
	}
	if (out >= 0) {
		enqueue(in, &sw->ports[out], f, len, &p, &m, now);
		return;
	}
	for (int i = 0; i < sw->nports; i++)   /* broadcast, multicast, unknown: flood */
		if (i != in->index && !sw->ports[i].conf->no_flood)
			enqueue(in, &sw->ports[i], f, len, &p, &m, now);
}

/* ---- leaving ---- */

void sw_port_flush(struct sw_port *p)
{
	int taken;

	if (!p->tx_n)
		return;
	taken = p->io->ops->send(p->io, p->tx_iov, p->tx_n);
	p->st.tx_batches++;
	for (int i = 0; i < taken; i++)
		p->st.tx_bytes += p->tx_iov[i].iov_len;
	p->st.tx_frames += (uint64_t)taken;
	p->st.tx_errors += p->tx_n - (uint32_t)taken;
	sw_queue_pop(p->q, p->tx_from_queue);
	if (p->imp)
		sw_impair_release(p->imp);
	p->ctrl_head += p->tx_from_ctrl;
	if (p->ctrl_head == p->ctrl_tail)   /* reuse the slots the cache holds */
		p->ctrl_head = p->ctrl_tail = 0;
	p->tx_n = p->tx_from_queue = p->tx_from_ctrl = 0;
	sw_port_ctrl_release(p);
	/* The batch's frames were past the port's next already (its key counted them out);
	 * only a pop that let the model's departures go (PFC's XON), or a delay line's
	 * release, may move a key. */
	if (p->sw->pfc_xoff || p->imp)
		sw_port_touch(p);
}

static void tx_add(struct sw_port *p, uint8_t *frame, size_t len, qp_time_ns leave)
{
	if (p->capture)
		sw_capture_frame(p->sw->fab->cap, p, frame, len, leave);
	if (!p->tx_listed) {
		p->tx_listed = true;
		p->sw->fab->txp[p->sw->fab->ntxp++] = p;
	}
	p->tx_leave[p->tx_n] = leave;
	p->tx_iov[p->tx_n++] = (struct iovec){ frame, len };
}

/* The oldest control frame of @p leaves. */
static void leave_ctrl(struct sw_port *p)
{
	static const struct sw_meta ctrl_meta = { .flags = SW_M_CTRL };
	struct sw_ctrl_slot *s = ctrl_at(p, p->ctrl_head + p->tx_from_ctrl);

	if (p->peer) {
		p->ctrl_head++;
		p->st.ctrl_frames++;
		sw_port_touch(p);
		sw_ingress(p->peer, s->frame, s->len, &ctrl_meta, s->leave_ns);
		sw_port_ctrl_release(p);
		return;
	}
	p->tx_from_ctrl++;
	sw_port_touch(p);
	p->st.ctrl_frames++;
	tx_add(p, s->frame, s->len, s->leave_ns);
}

/* @qm with this port's hop appended, into @m. */
static const struct sw_meta *add_hop(struct sw_port *p, uint32_t i, const struct sw_meta *qm,
				     struct sw_meta *m)
{
	memcpy(m, qm, SW_META_LEN(qm->nhops));
	if (m->nhops < QP_INT_MAX_HOPS) {
		struct qp_int_hop *h = &m->hops[m->nhops++];
		sw_queue_hop(p->q, i, h);
		h->switch_id = p->sw->id;
		h->port = (uint16_t)p->index;
	} else {
		p->st.int_hops_full++;
	}
	return m;
}

/* @copies of a frame (with its metadata, onto a link) go out of @p at @leave. */
static void hand_on(struct sw_port *p, uint8_t *frame, uint16_t len, const struct sw_meta *m,
		    unsigned copies, qp_time_ns leave)
{
	for (unsigned c = 0; c < copies; c++) {
		if (!p->peer) {
			tx_add(p, frame, len, leave);
			continue;
		}
		p->st.tx_frames++;
		p->st.tx_bytes += len;
		sw_ingress(p->peer, frame, len, m, leave);   /* the peer copies the frame */
	}
}

/* The link's impairments (impair.h): how many copies leave now; 0 when the frame is lost
 * or held back (it leaves later, by leave_held). */
static unsigned impair(struct sw_port *p, uint8_t *frame, uint16_t len, const struct sw_meta *m,
		       qp_time_ns leave)
{
	unsigned copies;

	if (!p->imp)
		return 1;
	if (!p->peer && p->tx_n >= SW_BATCH - 1)
		sw_port_flush(p);   /* room for a duplicate in this batch */
	copies = sw_impair_frame(p->imp, frame, len, m, m ? (uint16_t)SW_META_LEN(m->nhops) : 0,
				 leave);
	/* Into a delay line: a held frame may now be the port's next (port_next reads the
	 * delay lines, so the driver's hint follows) */
	sw_port_touch(p);
	return copies;
}

/* The oldest data frame of @p leaves: its hop record is written now that every arrival
 * up to its dequeue is known (onto a link: always, for the next switches; out of the
 * process: when a report is due). */
static void leave_data(struct sw_port *p)
{
	uint32_t i = p->tx_from_queue;
	const struct sw_qent *e = sw_queue_peek(p->q, i);
	const struct sw_meta *qm = sw_queue_meta(p->q, e), *hm = NULL;
	uint8_t *frame = sw_queue_frame(p->q, e);
	qp_time_ns leave = e->depart_ns + p->q_delay_ns;
	bool data = qm && (qm->flags & SW_M_ROCE_DATA);
	struct sw_meta m;
	unsigned copies;

	sw_queue_mark(p->q, i);   /* RED at dequeue, before the frame is copied anywhere */
	if (p->peer) {
		hm = data ? add_hop(p, i, qm, &m) : NULL;
	} else if (data) {
		struct sw_flowtab *ft = sw_queue_flows(p->q);
		struct sw_flow *fl = e->flow != SW_FLOW_NONE &&
				     sw_flow_key_eq(&ft->slots[e->flow].key, &qm->key) ?
				     &ft->slots[e->flow] : NULL;
		if (sw_int_report_due(p, fl, &qm->key, leave))
			send_int(p, add_hop(p, i, qm, &m), frame, leave);
	}
	copies = impair(p, frame, e->frame_len, hm, leave);
	if (!p->peer) {
		p->tx_from_queue++;   /* its place in the store is given back at the flush */
		sw_port_touch(p);
		hand_on(p, frame, e->frame_len, NULL, copies, leave);
		return;
	}
	/* The peer copies the frame; only then is its place in the store given back. */
	hand_on(p, frame, e->frame_len, hm, copies, leave);
	sw_queue_pop(p->q, 1);
	sw_port_touch(p);
}

/* The held frame of @p whose time has come leaves (impair.h). */
static void leave_held(struct sw_port *p)
{
	struct sw_impair_out o;

	if (!p->peer && p->tx_n >= SW_BATCH - 1)
		sw_port_flush(p);
	if (!sw_impair_take(p->imp, &o))
		return;
	sw_port_touch(p);   /* the next held frame, if any, is this port's next */
	hand_on(p, o.frame, o.len, o.meta, o.copies, o.leave_ns);
	if (p->peer)
		sw_impair_release(p->imp);
}

void sw_fabric_emit(struct sw_fabric *f, qp_time_ns now)
{
	do {
		for (;;) {
			struct sw_port *best;
			qp_time_ns bt, due;
			bool pfc;

			/* Globally in key order (sched.c), so frames crossing links arrive in
			 * order. I/O ports may hand frames to the OS up to --tx-early before they
			 * leave in the model, so they go out in batches; links never run ahead. */
			if (!sw_fabric_first(f, &best, &due, &bt, &pfc) || due > now)
				break;
			if (pfc) {
				sw_pfc_run(best, bt);
				continue;
			}
			if (best->ctrl_head + best->tx_from_ctrl != best->ctrl_tail &&
			    ctrl_at(best, best->ctrl_head + best->tx_from_ctrl)->leave_ns == bt)
				leave_ctrl(best);
			else if (best->imp && sw_impair_next_ns(best->imp) == bt)
				leave_held(best);
			else
				leave_data(best);
			if (best->tx_n == SW_BATCH)
				sw_port_flush(best);
		}
	} while (packs_close(f));   /* the packed reports may be due now too */
	for (int i = 0; i < f->ntxp; i++) {   /* the I/O ports that took frames */
		sw_port_flush(f->txp[i]);
		f->txp[i]->tx_listed = false;
	}
	f->ntxp = 0;
}
