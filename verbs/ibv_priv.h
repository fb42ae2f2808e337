/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ibv backend's private objects and the helpers its two files share (verbs/ibv.c:
 * device, QPs, posting, completions; verbs/ibv_cm.c: rdma_cm). Not a public header. */
#ifndef QPACE_VERBS_IBV_PRIV_H
#define QPACE_VERBS_IBV_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "qpace/qp.h"

struct ibv_ctx_priv {
	struct qp_ctx pub;
	struct ibv_context *verbs;
	bool verbs_owned;                 /* opened here, not librdmacm's shared context */
	struct ibv_context **cm_list;     /* rdma_get_devices() */
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	uint32_t max_qp_wr;
	uint32_t max_rd_atom;        /* the device's max_qp_rd_atom: a QP's max_dest */
	uint32_t max_init_rd_atom;   /* its max_qp_init_rd_atom: a QP's max_rd_atomic */
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid;
	uint32_t active_mtu_bytes;
	bool roce;
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen_id;
	char listen_port[16];
	char dev_name[64];
};

struct ibv_sig {                          /* one outstanding signaled send WR */
	uint32_t slots;                   /* SQ slots its completion frees */
	bool internal;                    /* forced: swallow its completion on success */
};

struct ibv_qp_priv {
	struct qp pub;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rdma_cm_id *cm_id;
	uint32_t sq_cap, sq_used, unsignaled;
	bool sq_track;                    /* false after an error: flushes are not counted */
	struct ibv_sig *sig;              /* ring of sq_cap */
	uint32_t sig_head, sig_count;
	struct qp_wc *stash;              /* ring of stash_cap */
	uint32_t stash_cap, stash_head, stash_count;
};

struct ibv_mr_priv {
	struct qp_mr pub;
	struct ibv_mr *mr;
};

static inline struct ibv_ctx_priv *to_xctx(struct qp_ctx *c)
{
	return qp_container_of(c, struct ibv_ctx_priv, pub);
}

static inline struct ibv_qp_priv *to_xqp(struct qp *q)
{
	return qp_container_of(q, struct ibv_qp_priv, pub);
}

static inline struct ibv_mr_priv *to_xmr(struct qp_mr *m)
{
	return qp_container_of(m, struct ibv_mr_priv, pub);
}

/* Shared by the plain and the rdma_cm paths (verbs/ibv.c). */
void ibv_qp_release(struct ibv_qp_priv *q);
int ibv_qp_prepare(struct ibv_qp_priv *q, struct ibv_qp_init_attr *ia, char *err,
		   size_t errlen);
void ibv_fill_local(struct ibv_qp_priv *q);
/* After rdma_cm connected the QP: local.psn = the sq_psn it chose. */
void ibv_sync_sq_psn(struct ibv_qp_priv *q);

/* rdma_cm (verbs/ibv_cm.c): the backend's cm_dial and cm_accept. */
int ibv_cm_dial(struct qp *qp, const char *host, const char *port,
		const struct qp_mr *expose, char *err, size_t errlen);
int ibv_cm_accept(struct qp *qp, const char *bind_host, const char *port,
		  const struct qp_mr *expose, char *err, size_t errlen);

#endif
