/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two soft hosts, one loop, one WRITE stream (see qpace/soft_bw.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "qpace/errmsg.h"
#include "qpace/soft_bw.h"

struct bw_run {
	const struct soft_bw_params *p;
	struct soft_bw_result *r;
	struct qp_ctx *ctx[2];
	struct qp *qp[2];
	struct qp_mr *mr[2];
	uint8_t *src, *dst;
	uint64_t posted, acked, nposted;
	uint32_t inflight;
	uint32_t *len_of;              /* by wr_id modulo sq_depth */
};

static void quiet_log(void *arg, const char *line)
{
	(void)arg;
	(void)line;
}

static int open_side(struct bw_run *b, int i, const char *opts, uint8_t *buf, uint64_t len,
		     unsigned access)
{
	const struct soft_bw_params *p = b->p;
	struct qp_ctx_attr ca = { .options = opts, .rate_table = "",
				  .backend_arg = (void *)(uintptr_t)(i ? p->arg_b : p->arg_a),
				  .log = p->quiet ? quiet_log : NULL };
	struct qp_attr qa = { .sq_depth = p->sq_depth, .rq_depth = 16, .mtu_bytes = p->mtu_bytes,
			      .timeout = p->timeout,
			      .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL,
			      .gate = { .chunk_bytes = p->chunk_bytes, .line_bps = p->rate_bps,
					.safe_permille = QP_GATE_MAX_PERMILLE } };
	char *err = b->r->err;
	size_t el = sizeof(b->r->err);
	int rc = qp_ctx_open_ops(&qp_soft_ops, &ca, &b->ctx[i], err, el);

	if (rc)
		return rc;
	rc = qp_mr_reg(b->ctx[i], buf, len, access, &b->mr[i]);
	if (rc)
		return qp_errmsg(rc, err, el, "soft-bw: register %llu bytes: %s",
				 (unsigned long long)len, strerror(-rc));
	return qp_create(b->ctx[i], &qa, &b->qp[i], err, el);
}

static int connect_pair(struct bw_run *b)
{
	struct qp_conn_info ia, ib;
	int rc;

	qp_local_info(b->qp[0], NULL, &ia);
	qp_local_info(b->qp[1], b->mr[1], &ib);
	rc = qp_connect(b->qp[0], &ib, b->r->err, sizeof(b->r->err));
	return rc ? rc : qp_connect(b->qp[1], &ia, b->r->err, sizeof(b->r->err));
}

/* Post as many WRs as fit; -EAGAIN from the gate is not an error. */
static int post_more(struct bw_run *b)
{
	const struct soft_bw_params *p = b->p;

	while (b->posted < p->bytes && b->inflight < p->sq_depth) {
		uint64_t off = b->posted % p->buf_bytes, left = p->bytes - b->posted;
		uint32_t len = (uint32_t)(left < p->msg_bytes ? left : p->msg_bytes);
		uint64_t id = b->nposted;
		struct qp_wr wr;
		int rc;

		if (len > p->buf_bytes - off)
			len = (uint32_t)(p->buf_bytes - off);
		wr = (struct qp_wr){ .opcode = QP_OP_WRITE, .wr_id = id, .mr = b->mr[0],
				     .addr = b->src + off, .length = len,
				     .remote_addr = (uint64_t)(uintptr_t)b->dst + off,
				     .rkey = b->mr[1]->rkey, .flags = QP_WR_SIGNALED };
		rc = qp_post_send(b->qp[0], &wr);
		if (rc == -EAGAIN)
			return 0;
		if (rc)
			return qp_errmsg(rc, b->r->err, sizeof(b->r->err), "soft-bw: post: %s",
					 strerror(-rc));
		b->len_of[id % p->sq_depth] = len;
		b->posted += len;
		b->nposted++;
		b->inflight++;
	}
	return 0;
}

static int reap(struct bw_run *b)
{
	struct qp_wc wc[16];
	int n = qp_poll(b->qp[0], wc, 16);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != QP_WC_SUCCESS)
			return qp_errmsg(-EIO, b->r->err, sizeof(b->r->err),
					 "soft-bw: WR %llu completed with %s",
					 (unsigned long long)wc[i].wr_id,
					 qp_wc_status_str(wc[i].status));
		b->acked += b->len_of[wc[i].wr_id % b->p->sq_depth];
		b->inflight--;
	}
	return n < 0 ? n : 0;
}

static int transfer(struct bw_run *b)
{
	qp_time_ns t0 = qp_now_ns(), now = t0;
	int rc = 0;

	while (b->acked < b->p->bytes && rc == 0) {
		now = qp_now_ns();
		if (now - t0 > b->p->limit_ns)
			return qp_errmsg(-ETIMEDOUT, b->r->err, sizeof(b->r->err),
					 "soft-bw: %llu of %llu bytes acknowledged after %.1f s",
					 (unsigned long long)b->acked,
					 (unsigned long long)b->p->bytes, (double)(now - t0) / 1e9);
		for (int i = 0; i < 2 && rc >= 0; i++)
			rc = qp_ctx_progress(b->ctx[i], now);
		if (rc >= 0)
			rc = reap(b);
		if (rc >= 0)
			rc = post_more(b);
	}
	b->r->elapsed_ns = qp_now_ns() - t0;
	return rc < 0 ? rc : 0;
}

static void collect(struct bw_run *b)
{
	struct soft_bw_result *r = b->r;

	r->bytes = b->acked;
	r->gbps = r->elapsed_ns ? (double)b->acked * 8 / (double)r->elapsed_ns : 0;
	r->crc_src = (uint32_t)crc32(0, b->src, (uInt)b->p->buf_bytes);
	r->crc_dst = (uint32_t)crc32(0, b->dst, (uInt)b->p->buf_bytes);
	r->exact = memcmp(b->src, b->dst, b->p->buf_bytes) == 0;
	qp_get_stats(b->qp[0], &r->qa);
	r->ra = *qp_soft_rc_stats(b->qp[0]);
	r->rb = *qp_soft_rc_stats(b->qp[1]);
	r->ha = *soft_host_stats(qp_soft_host(b->ctx[0]));
	r->hb = *soft_host_stats(qp_soft_host(b->ctx[1]));
	r->ia = *qp_soft_io_stats(b->ctx[0]);
	r->ib = *qp_soft_io_stats(b->ctx[1]);
	r->qpn_a = b->qp[0]->qpn;
	r->qpn_b = b->qp[1]->qpn;
}

int soft_bw_run(const struct soft_bw_params *in, struct soft_bw_result *r)
{
	struct soft_bw_params p = *in;
	struct bw_run b = { .p = &p, .r = r };
	int rc;

	memset(r, 0, sizeof(*r));
	p.bytes = p.bytes ? p.bytes : 64ull << 20;
	p.buf_bytes = p.buf_bytes ? p.buf_bytes : p.bytes;
	p.msg_bytes = p.msg_bytes ? p.msg_bytes : 1u << 20;
	p.sq_depth = p.sq_depth ? p.sq_depth : 16;
	p.chunk_bytes = p.chunk_bytes ? p.chunk_bytes : 64u << 10;
	p.timeout = p.timeout ? p.timeout : 14;
	p.rate_bps = p.rate_bps ? p.rate_bps : QP_GATE_MAX_BPS;
	p.limit_ns = p.limit_ns ? p.limit_ns : 60 * QP_NS_PER_S;
	b.src = malloc(p.buf_bytes);
	b.dst = calloc(1, p.buf_bytes);
	b.len_of = calloc(p.sq_depth, sizeof(*b.len_of));
	if (!b.src || !b.dst || !b.len_of) {
		rc = qp_errmsg(-ENOMEM, r->err, sizeof(r->err), "soft-bw: out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < p.buf_bytes; i++)
		b.src[i] = (uint8_t)((i * 2654435761u) >> 11);
	rc = open_side(&b, 0, p.opts_a, b.src, p.buf_bytes, QP_ACCESS_LOCAL_WRITE);
	if (!rc)
		rc = open_side(&b, 1, p.opts_b, b.dst, p.buf_bytes,
			       QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE);
	if (!rc)
		rc = connect_pair(&b);
	if (!rc)
		rc = transfer(&b);
	if (b.qp[0] && b.qp[1])
		collect(&b);
out:
	qp_ctx_close(b.ctx[0]);
	qp_ctx_close(b.ctx[1]);
	free(b.src);
	free(b.dst);
	free(b.len_of);
	return rc;
}
