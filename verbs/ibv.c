/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ibv backend: RC QPs on rdma-core (libibverbs + librdmacm) — Soft-RoCE (rxe) or a
 * hardware NIC. The common layer (verbs/qp.c) splits and paces every send WR; this file
 * posts the pieces, polls completions, and connects QPs from exchanged connection data
 * (RTR/RTS by hand, as perftest without -R); verbs/ibv_cm.c connects through rdma_cm
 * (perftest -R).
 *
 * Rate limits: where the device limits RC QPs' rates itself (ibv_query_device_ex's
 * packet_pacing_caps: mlx5, bnxt_re), rate_caps reports the range and rate_limit sets a
 * QP's limit (ibv_modify_qp_rate_limit, kbit/s); verbs/qp_enforce.c then has the NIC
 * enforce the rate the gate decides. rxe reports no caps (and refuses the call with
 * EOPNOTSUPP): the gate paces.
 *
 * Send queue: a split WRITE posts more WRs than the caller did, mostly unsignaled. Each
 * signaled WR retires itself and the unsignaled ones before it, so a ring records how many
 * slots each outstanding signaled WR frees; a WR is forced signaled when half the queue is
 * unsignaled, and its completion is swallowed on success. When the queue is full the CQ is
 * drained into a stash that qp_poll returns first. rdma-core returns positive errno values;
 * they become -errno here, at the edge.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qpace/addr.h"
#include "qpace/errmsg.h"
#include "qpace/qp.h"
#include "ibv_priv.h"

#define IBV_REAP_WAIT_NS (10 * QP_NS_PER_S)
#define IBV_POLL_BATCH 16

/* ---- context ---- */

static int no_device(int why, char *err, size_t errlen)
{
	return qp_errmsg(-ENODEV, err, errlen,
			 "ibv: no RDMA device (%s): use the soft backend (--backend soft), or set "
			 "up Soft-RoCE as docs/soft-roce.md shows",
			 why == ENOSYS ? "this kernel has no RDMA support" : "none found");
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static enum ibv_mtu mtu_enum(uint32_t bytes)
{
	enum ibv_mtu m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && mtu_bytes(m) < bytes)
		m++;
	return m;
}

static bool gid_is_ipv4_mapped(const union ibv_gid *g)
{
	return qp_ipv6_v4mapped(g->raw, NULL);
}

/* "gid=N" from the options; -1 when absent. */
static int parse_options(const char *opts, int *gid_index, char *err, size_t errlen)
{
	char buf[128], *save = NULL, *tok;

	*gid_index = -1;
	if (!opts || !*opts)
		return 0;
	snprintf(buf, sizeof(buf), "%s", opts);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		if (strncmp(tok, "gid=", 4) != 0)
			return qp_errmsg(-EINVAL, err, errlen,
					 "ibv: unknown option '%s'; accepted: gid=N", tok);
		v = strtol(tok + 4, &end, 10);
		if (end == tok + 4 || *end || v < 0 || v > 255)
			return qp_errmsg(-EINVAL, err, errlen,
					 "ibv: gid '%s': a GID index 0..255", tok + 4);
		*gid_index = (int)v;
	}
	return 0;
}

/* The GID to use: the asked index, else the first RoCEv2 IPv4-mapped one (0 on IB). */
static int pick_gid(struct ibv_ctx_priv *x, const struct ibv_port_attr *pa, int want,
		    char *err, size_t errlen)
{
	struct ibv_gid_entry e;
	int rc;

	if (want >= 0 || !x->roce) {
		x->gid_index = want >= 0 ? want : 0;
		rc = ibv_query_gid(x->verbs, x->port, x->gid_index, &x->gid);
		return rc ? qp_errmsg(-(rc > 0 ? rc : EINVAL), err, errlen,
				      "ibv: %s port %u has no GID at index %d", x->dev_name,
				      x->port, x->gid_index)
			  : 0;
	}
	for (int i = 0; i < pa->gid_tbl_len; i++) {
		if (ibv_query_gid_ex(x->verbs, x->port, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && gid_is_ipv4_mapped(&e.gid)) {
			x->gid_index = i;
			x->gid = e.gid;
			return 0;
		}
	}
	return qp_errmsg(-EADDRNOTAVAIL, err, errlen,
			 "ibv: %s port %u has no RoCEv2 GID with an IPv4 address (is the netdev "
			 "up with an address?); choose one with gid=N", x->dev_name, x->port);
}

/* The device context: librdmacm's shared one when it knows the device (so rdma_cm ids
 * and our PD match), else our own. */
static int open_device(struct ibv_ctx_priv *x, const char *want, char *err, size_t errlen)
{
	struct ibv_device **list, *dev = NULL;
	int n = 0, m = 0;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		int why = errno;

		if (list)
			ibv_free_device_list(list);
		return no_device(why, err, errlen);
	}
	for (int i = 0; i < n && !dev; i++)
		if (!want || strcmp(ibv_get_device_name(list[i]), want) == 0)
			dev = list[i];
	if (!dev) {
		ibv_free_device_list(list);
		return qp_errmsg(-ENODEV, err, errlen, "ibv: no RDMA device named '%s'", want);
	}
	snprintf(x->dev_name, sizeof(x->dev_name), "%s", ibv_get_device_name(dev));
	x->cm_list = rdma_get_devices(&m);
	for (int i = 0; x->cm_list && i < m && !x->verbs; i++)
		if (strcmp(ibv_get_device_name(x->cm_list[i]->device), x->dev_name) == 0)
			x->verbs = x->cm_list[i];
	if (!x->verbs) {
		x->verbs = ibv_open_device(dev);
		x->verbs_owned = true;
	}
	ibv_free_device_list(list);
	if (!x->verbs)
		return qp_errmsg(-errno, err, errlen, "ibv: open %s: %s", x->dev_name,
				 strerror(errno));
	return 0;
}

static void ibv_ctx_fini(struct qp_ctx *c)
{
	struct ibv_ctx_priv *x = to_xctx(c);

	if (x->listen_id)
		rdma_destroy_id(x->listen_id);
	if (x->cm_ch)
		rdma_destroy_event_channel(x->cm_ch);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->chan)
		ibv_destroy_comp_channel(x->chan);
	if (x->verbs && x->verbs_owned)
		ibv_close_device(x->verbs);
	if (x->cm_list)
		rdma_free_devices(x->cm_list);
}

static int ibv_ctx_init(struct qp_ctx *c, char *err, size_t errlen)
{
	struct ibv_ctx_priv *x = to_xctx(c);
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	int gid_want, rc = parse_options(c->attr.options, &gid_want, err, errlen);

	if (rc == 0)
		rc = open_device(x, c->attr.device, err, errlen);
	if (rc)
		goto fail;
	x->port = c->attr.port ? c->attr.port : 1;
	rc = ibv_query_device(x->verbs, &da);
	if (rc == 0)
		rc = ibv_query_port(x->verbs, x->port, &pa);
	if (rc) {
		rc = qp_errmsg(-(rc > 0 ? rc : EINVAL), err, errlen, "ibv: %s port %u: %s",
			       x->dev_name, x->port, strerror(rc > 0 ? rc : EINVAL));
		goto fail;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		rc = qp_errmsg(-ENETDOWN, err, errlen, "ibv: %s port %u is %s, not ACTIVE",
			       x->dev_name, x->port, ibv_port_state_str(pa.state));
		goto fail;
	}
	x->max_qp_wr = (uint32_t)da.max_qp_wr;
	x->max_rd_atom = (uint32_t)da.max_qp_rd_atom;
	x->max_init_rd_atom = (uint32_t)da.max_qp_init_rd_atom;
	x->lid = pa.lid;
	x->active_mtu_bytes = mtu_bytes(pa.active_mtu);
	x->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	rc = pick_gid(x, &pa, gid_want, err, errlen);
	if (rc)
		goto fail;
	x->pd = ibv_alloc_pd(x->verbs);
	x->chan = x->pd ? ibv_create_comp_channel(x->verbs) : NULL;
	if (!x->chan || fcntl(x->chan->fd, F_SETFL, fcntl(x->chan->fd, F_GETFL) | O_NONBLOCK)) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "ibv: %s: cannot allocate a PD or channel",
			       x->dev_name);
		goto fail;
	}
	return 0;
fail:
	ibv_ctx_fini(c);
	return rc;
}

static int ibv_ctx_fd(struct qp_ctx *c)
{
	return to_xctx(c)->chan->fd;
}

/* Acknowledge CQ events and re-arm; the caller polls its QPs. */
static int ibv_ctx_progress(struct qp_ctx *c, qp_time_ns now)
{
	struct ibv_ctx_priv *x = to_xctx(c);
	struct ibv_cq *cq;
	void *cq_ctx;
	int n = 0;

	(void)now;
	while (ibv_get_cq_event(x->chan, &cq, &cq_ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
		n++;
	}
	return n;
}

/* ---- memory ---- */

static int ibv_mr_init(struct qp_mr *m)
{
	struct ibv_ctx_priv *x = to_xctx(m->ctx);
	int access = 0;

	if (m->access & (QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE | QP_ACCESS_REMOTE_ATOMIC))
		access |= IBV_ACCESS_LOCAL_WRITE; /* verbs requires it with remote write, atomic */
	if (m->access & QP_ACCESS_REMOTE_WRITE)
		access |= IBV_ACCESS_REMOTE_WRITE;
	if (m->access & QP_ACCESS_REMOTE_READ)
		access |= IBV_ACCESS_REMOTE_READ;
	if (m->access & QP_ACCESS_REMOTE_ATOMIC)
		access |= IBV_ACCESS_REMOTE_ATOMIC;
	to_xmr(m)->mr = ibv_reg_mr(x->pd, m->addr, m->length, access);
	if (!to_xmr(m)->mr)
		return -errno;
	m->lkey = to_xmr(m)->mr->lkey;
	m->rkey = to_xmr(m)->mr->rkey;
	return 0;
}

static void ibv_mr_fini(struct qp_mr *m)
{
	if (to_xmr(m)->mr)
		ibv_dereg_mr(to_xmr(m)->mr);
}

/* ---- QPs ---- */

void ibv_qp_release(struct ibv_qp_priv *q)
{
	if (q->cm_id) {
		if (q->cm_id->qp)
			rdma_disconnect(q->cm_id);
		if (q->cm_id->qp)
			rdma_destroy_qp(q->cm_id);
		rdma_destroy_id(q->cm_id);
	} else if (q->qp) {
		ibv_destroy_qp(q->qp);
	}
	if (q->cq)
		ibv_destroy_cq(q->cq);
	free(q->sig);
	free(q->stash);
	q->cm_id = NULL;
	q->qp = NULL;
	q->cq = NULL;
	q->sig = NULL;
	q->stash = NULL;
}

/* CQ, rings and the QP's init attributes (shared by the plain and the CM paths). */
int ibv_qp_prepare(struct ibv_qp_priv *q, struct ibv_qp_init_attr *ia, char *err,
		   size_t errlen)
{
	struct ibv_ctx_priv *x = to_xctx(q->pub.ctx);
	const struct qp_attr *a = &q->pub.attr;

	if (a->sq_depth > x->max_qp_wr || a->rq_depth > x->max_qp_wr)
		return qp_errmsg(-EINVAL, err, errlen,
				 "ibv: sq_depth %u / rq_depth %u: %s allows up to %u", a->sq_depth,
				 a->rq_depth, x->dev_name, x->max_qp_wr);
	if (a->max_rd_atomic > x->max_init_rd_atom || a->max_dest_rd_atomic > x->max_rd_atom)
		return qp_errmsg(-EINVAL, err, errlen,
				 "ibv: max_rd_atomic %u / max_dest_rd_atomic %u: %s allows up to "
				 "%u / %u", a->max_rd_atomic, a->max_dest_rd_atomic, x->dev_name,
				 x->max_init_rd_atom, x->max_rd_atom);
	q->sq_cap = a->sq_depth;
	q->stash_cap = a->sq_depth + a->rq_depth;
	q->sig = calloc(q->sq_cap, sizeof(*q->sig));
	q->stash = calloc(q->stash_cap, sizeof(*q->stash));
	q->cq = q->sig && q->stash ? ibv_create_cq(x->verbs, (int)q->stash_cap, q, x->chan, 0)
				   : NULL;
	if (!q->cq)
		return qp_errmsg(-ENOMEM, err, errlen, "ibv: %s: cannot create a CQ of %u",
				 x->dev_name, q->stash_cap);
	ibv_req_notify_cq(q->cq, 0);
	q->sq_track = true;
	memset(ia, 0, sizeof(*ia));
	ia->send_cq = q->cq;
	ia->recv_cq = q->cq;
	ia->qp_type = IBV_QPT_RC;
	ia->cap.max_send_wr = a->sq_depth;
	ia->cap.max_recv_wr = a->rq_depth;
	ia->cap.max_send_sge = 1;
	ia->cap.max_recv_sge = 1;
	ia->cap.max_inline_data = a->max_inline;
	return 0;
}

void ibv_fill_local(struct ibv_qp_priv *q)
{
	struct ibv_ctx_priv *x = to_xctx(q->pub.ctx);
	uint32_t mtu = q->pub.attr.mtu_bytes;

	q->pub.qpn = q->qp->qp_num;
	q->pub.local.qpn = q->qp->qp_num;
	q->pub.local.psn = qp_initial_psn(&q->pub);
	q->pub.local.lid = x->lid;
	memcpy(q->pub.local.gid, x->gid.raw, sizeof(q->pub.local.gid));
	q->pub.local.mtu_bytes = mtu && mtu < x->active_mtu_bytes ? mtu : x->active_mtu_bytes;
}

static int modify(struct ibv_qp_priv *q, struct ibv_qp_attr *qa, int mask, const char *what,
		  char *err, size_t errlen)
{
	int rc = ibv_modify_qp(q->qp, qa, mask);

	if (rc == 0)
		return 0;
	rc = rc > 0 ? rc : EINVAL;
	return qp_errmsg(-rc, err, errlen, "ibv: qp 0x%06x to %s: %s", q->pub.qpn, what,
			 strerror(rc));
}

static int ibv_qp_init(struct qp *qp, char *err, size_t errlen)
{
	struct ibv_qp_priv *q = to_xqp(qp);
	struct ibv_ctx_priv *x = to_xctx(qp->ctx);
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT,
		.port_num = x->port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	int rc = ibv_qp_prepare(q, &ia, err, errlen);

	if (rc == 0 && !(q->qp = ibv_create_qp(x->pd, &ia)))
		rc = qp_errmsg(-errno, err, errlen, "ibv: %s: create QP: %s", x->dev_name,
			       strerror(errno));
	if (rc == 0) {
		ibv_fill_local(q);
		rc = modify(q, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS, "INIT", err, errlen);
	}
	if (rc)
		ibv_qp_release(q);
	return rc;
}

static void ibv_qp_fini(struct qp *qp)
{
	ibv_qp_release(to_xqp(qp));
}

static int ibv_qp_connect(struct qp *qp, char *err, size_t errlen)
{
	struct ibv_qp_priv *q = to_xqp(qp);
	struct ibv_ctx_priv *x = to_xctx(qp->ctx);
	const struct qp_conn_info *r = &qp->remote;
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu_enum(qp->path_mtu_bytes),
		.dest_qp_num = r->qpn,
		.rq_psn = r->psn,
		.max_dest_rd_atomic = qp->attr.max_dest_rd_atomic,
		.min_rnr_timer = qp->attr.min_rnr_timer,
		.ah_attr = {
			.dlid = r->lid,
			.port_num = x->port,
			.is_global = x->roce,
			.grh = {
				.sgid_index = (uint8_t)x->gid_index,
				.hop_limit = 64,
				.traffic_class = qp->attr.traffic_class,
			},
		},
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = qp->attr.timeout,
		.retry_cnt = qp->attr.retry_cnt,
		.rnr_retry = qp->attr.rnr_retry,
		.sq_psn = qp->local.psn,
		.max_rd_atomic = qp->attr.max_rd_atomic,
	};
	int rc;

	memcpy(rtr.ah_attr.grh.dgid.raw, r->gid, sizeof(r->gid));
	rc = modify(q, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		    "RTR", err, errlen);
	if (rc == 0)
		rc = modify(q, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
			    "RTS", err, errlen);
	return rc;
}

/* The initial send PSN rdma_cm chose at RTS (it takes no sq_psn from us). */
void ibv_sync_sq_psn(struct ibv_qp_priv *q)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	if (q->qp && ibv_query_qp(q->qp, &qa, IBV_QP_SQ_PSN, &ia) == 0)
		q->pub.local.psn = qa.sq_psn & QP_PSN_MAX;
}

/* ---- rate limits ---- */

static int ibv_rate_caps(struct qp_ctx *c, struct qp_rate_caps *caps)
{
	struct ibv_ctx_priv *x = to_xctx(c);
	struct ibv_device_attr_ex ax;
	int rc;

	memset(&ax, 0, sizeof(ax));
	rc = ibv_query_device_ex(x->verbs, NULL, &ax);
	if (rc)
		return -(rc > 0 ? rc : EOPNOTSUPP);
	if (!(ax.packet_pacing_caps.supported_qpts & (1u << IBV_QPT_RC)) ||
	    !ax.packet_pacing_caps.qp_rate_limit_max)
		return -EOPNOTSUPP;
	caps->min_kbps = ax.packet_pacing_caps.qp_rate_limit_min;
	caps->max_kbps = ax.packet_pacing_caps.qp_rate_limit_max;
	return 0;
}

static int ibv_rate_limit(struct qp *qp, uint32_t kbps)
{
	struct ibv_qp_rate_limit_attr ra = { .rate_limit = kbps };
	int rc = ibv_modify_qp_rate_limit(to_xqp(qp)->qp, &ra);

	return rc ? -(rc > 0 ? rc : EINVAL) : 0;
}

/* ---- completions ---- */

static const uint8_t wc_status_map[IBV_WC_GENERAL_ERR + 1] = {
	[IBV_WC_SUCCESS] = QP_WC_SUCCESS,
	[IBV_WC_LOC_LEN_ERR] = QP_WC_LOC_LEN_ERR,
	[IBV_WC_LOC_QP_OP_ERR] = QP_WC_LOC_QP_OP_ERR,
	[IBV_WC_LOC_EEC_OP_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_LOC_PROT_ERR] = QP_WC_LOC_PROT_ERR,
	[IBV_WC_WR_FLUSH_ERR] = QP_WC_WR_FLUSH_ERR,
	[IBV_WC_MW_BIND_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_BAD_RESP_ERR] = QP_WC_BAD_RESP_ERR,
	[IBV_WC_LOC_ACCESS_ERR] = QP_WC_LOC_ACCESS_ERR,
	[IBV_WC_REM_INV_REQ_ERR] = QP_WC_REM_INV_REQ_ERR,
	[IBV_WC_REM_ACCESS_ERR] = QP_WC_REM_ACCESS_ERR,
	[IBV_WC_REM_OP_ERR] = QP_WC_REM_OP_ERR,
	[IBV_WC_RETRY_EXC_ERR] = QP_WC_RETRY_EXC_ERR,
	[IBV_WC_RNR_RETRY_EXC_ERR] = QP_WC_RNR_RETRY_EXC_ERR,
	[IBV_WC_LOC_RDD_VIOL_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_REM_INV_RD_REQ_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_REM_ABORT_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_INV_EECN_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_INV_EEC_STATE_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_FATAL_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_RESP_TIMEOUT_ERR] = QP_WC_GENERAL_ERR,
	[IBV_WC_GENERAL_ERR] = QP_WC_GENERAL_ERR,
};

/* Convert one completion; false when it is internal (swallowed). */
static bool wc_convert(struct ibv_qp_priv *q, const struct ibv_wc *in, struct qp_wc *out)
{
	bool recv = in->opcode & IBV_WC_RECV;

	memset(out, 0, sizeof(*out));
	out->wr_id = in->wr_id;
	out->status = (unsigned)in->status < sizeof(wc_status_map) ? wc_status_map[in->status]
								    : QP_WC_GENERAL_ERR;
	out->vendor_err = in->vendor_err;
	if (in->status != IBV_WC_SUCCESS) {
		q->sq_track = false; /* the QP is in error; flushes follow for every WR */
		return true;
	}
	out->byte_len = in->byte_len;
	out->has_imm = in->wc_flags & IBV_WC_WITH_IMM;
	out->imm = out->has_imm ? ntohl(in->imm_data) : 0;
	if (recv) {
		out->opcode = in->opcode == IBV_WC_RECV_RDMA_WITH_IMM ? QP_WC_RECV_WRITE_IMM
								      : QP_WC_RECV;
		return true;
	}
	out->opcode = in->opcode == IBV_WC_RDMA_WRITE ? QP_WC_WRITE :
		      in->opcode == IBV_WC_RDMA_READ ? QP_WC_READ :
		      in->opcode == IBV_WC_COMP_SWAP ? QP_WC_COMP_SWAP :
		      in->opcode == IBV_WC_FETCH_ADD ? QP_WC_FETCH_ADD : QP_WC_SEND;
	if (q->sq_track && q->sig_count) {
		struct ibv_sig s = q->sig[q->sig_head];

		q->sig_head = (q->sig_head + 1) % q->sq_cap;
		q->sig_count--;
		q->sq_used -= s.slots < q->sq_used ? s.slots : q->sq_used;
		return !s.internal;
	}
	return true;
}

/* Poll the CQ once (up to a batch); user-visible completions go to dst (up to max). */
static int cq_poll_into(struct ibv_qp_priv *q, struct qp_wc *dst, int max)
{
	struct ibv_wc wc[IBV_POLL_BATCH];
	int n = ibv_poll_cq(q->cq, max < IBV_POLL_BATCH ? max : IBV_POLL_BATCH, wc), got = 0;

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++)
		if (wc_convert(q, &wc[i], &dst[got]))
			got++;
	return got;
}

/* Make room in the send queue: drain the CQ into the stash until a slot frees. */
static int sq_reap(struct ibv_qp_priv *q)
{
	qp_time_ns deadline = qp_now_ns() + IBV_REAP_WAIT_NS;

	while (q->sq_track && q->sq_used >= q->sq_cap) {
		struct qp_wc tmp[IBV_POLL_BATCH];
		uint32_t room = q->stash_cap - q->stash_count;
		int n;

		if (room == 0)
			return -ENOSPC; /* the caller left sq_depth completions unpolled */
		n = cq_poll_into(q, tmp, room < IBV_POLL_BATCH ? (int)room : IBV_POLL_BATCH);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			q->stash[(q->stash_head + q->stash_count) % q->stash_cap] = tmp[i];
			q->stash_count++;
		}
		if (n == 0 && qp_now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

static const enum ibv_wr_opcode wr_opcode_map[QP_OP_COUNT] = {
	[QP_OP_WRITE] = IBV_WR_RDMA_WRITE,
	[QP_OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[QP_OP_SEND] = IBV_WR_SEND,
	[QP_OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	[QP_OP_READ] = IBV_WR_RDMA_READ,
	[QP_OP_CMP_SWAP] = IBV_WR_ATOMIC_CMP_AND_SWP,
	[QP_OP_FETCH_ADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static int ibv_post_send_piece(struct qp *qp, const struct qp_wr *wr)
{
	struct ibv_qp_priv *q = to_xqp(qp);
	bool signaled = wr->flags & QP_WR_SIGNALED;
	bool forced = !signaled && q->unsignaled + 1 >= q->sq_cap / 2;
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)wr->addr,
		.length = wr->length,
		.lkey = wr->mr ? wr->mr->lkey : 0,
	};
	struct ibv_send_wr swr = {
		.wr_id = wr->wr_id,
		.sg_list = &sge,
		.num_sge = wr->length ? 1 : 0,
		.opcode = wr_opcode_map[wr->opcode],
		.send_flags = (signaled || forced ? IBV_SEND_SIGNALED : 0) |
			      (wr->flags & QP_WR_INLINE ? IBV_SEND_INLINE : 0),
		.imm_data = htonl(wr->imm),
		.wr.rdma = { .remote_addr = wr->remote_addr, .rkey = wr->rkey },
	}, *bad = NULL;
	int rc = sq_reap(q);

	if (rc)
		return rc;
	if (qp_op_is_atomic(wr->opcode)) {
		swr.wr.atomic.remote_addr = wr->remote_addr;
		swr.wr.atomic.compare_add = wr->compare_add;
		swr.wr.atomic.swap = wr->swap;
		swr.wr.atomic.rkey = wr->rkey;
	}
	rc = ibv_post_send(q->qp, &swr, &bad);
	if (rc)
		return -(rc > 0 ? rc : EINVAL);
	q->sq_used++;
	if (signaled || forced) {
		q->sig[(q->sig_head + q->sig_count) % q->sq_cap] =
			(struct ibv_sig){ .slots = q->unsignaled + 1, .internal = forced };
		q->sig_count++;
		q->unsignaled = 0;
	} else {
		q->unsignaled++;
	}
	return 0;
}

static int ibv_post_recv_wr(struct qp *qp, const struct qp_recv_wr *wr)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)wr->addr,
		.length = wr->length,
		.lkey = wr->mr ? wr->mr->lkey : 0,
	};
	struct ibv_recv_wr rwr = { .wr_id = wr->wr_id, .sg_list = &sge,
				   .num_sge = wr->length ? 1 : 0 }, *bad = NULL;
	int rc = ibv_post_recv(to_xqp(qp)->qp, &rwr, &bad);

	return rc ? -(rc > 0 ? rc : EINVAL) : 0;
}

static int ibv_poll_wc(struct qp *qp, struct qp_wc *wc, int n)
{
	struct ibv_qp_priv *q = to_xqp(qp);
	int got = 0;

	while (got < n && q->stash_count) {
		wc[got++] = q->stash[q->stash_head];
		q->stash_head = (q->stash_head + 1) % q->stash_cap;
		q->stash_count--;
	}
	while (got < n) {
		int k = cq_poll_into(q, wc + got, n - got);

		if (k < 0)
			return got ? got : k;
		if (k == 0)
			break;
		got += k;
	}
	return got;
}

const struct qp_backend_ops qp_ibv_ops = {
	.name = "ibv",
	.summary = "rdma-core verbs: Soft-RoCE (rxe) or an RDMA NIC",
	.ctx_size = sizeof(struct ibv_ctx_priv),
	.qp_size = sizeof(struct ibv_qp_priv),
	.mr_size = sizeof(struct ibv_mr_priv),
	.ctx_init = ibv_ctx_init,
	.ctx_fini = ibv_ctx_fini,
	.ctx_fd = ibv_ctx_fd,
	.ctx_progress = ibv_ctx_progress,
	.mr_init = ibv_mr_init,
	.mr_fini = ibv_mr_fini,
	.qp_init = ibv_qp_init,
	.qp_fini = ibv_qp_fini,
	.qp_connect = ibv_qp_connect,
	.cm_dial = ibv_cm_dial,
	.cm_accept = ibv_cm_accept,
	.post_send = ibv_post_send_piece,
	.post_recv = ibv_post_recv_wr,
	.poll = ibv_poll_wc,
	.rate_caps = ibv_rate_caps,
	.rate_limit = ibv_rate_limit,
};
