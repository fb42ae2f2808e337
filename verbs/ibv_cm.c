/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ibv backend's rdma_cm path (perftest -R): resolve, create the QP on the CM id,
 * connect or accept; the connection message (qpace/qp_wire.h) rides in the CM private
 * data, so the peer learns the exposed region as it would over TCP. Every wait on the CM
 * event channel has a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "ibv_priv.h"

#define IBV_CM_TIMEOUT_MS 2000
#define IBV_CM_WAIT_NS (10 * QP_NS_PER_S)

/* Wait for the next CM event; it must be @want. Private data is copied out. */
static int cm_wait(struct ibv_ctx_priv *x, enum rdma_cm_event_type want,
		   struct rdma_cm_id **id, uint8_t *priv, size_t *priv_len, char *err,
		   size_t errlen)
{
	qp_time_ns deadline = qp_now_ns() + IBV_CM_WAIT_NS;
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type got;
	int status;

	while (rdma_get_cm_event(x->cm_ch, &ev)) {
		struct pollfd pfd = { .fd = x->cm_ch->fd, .events = POLLIN };
		qp_time_ns now = qp_now_ns();

		if (errno != EAGAIN && errno != EINTR)
			return qp_errmsg(-errno, err, errlen, "rdma_cm: %s", strerror(errno));
		if (now >= deadline)
			return qp_errmsg(-ETIMEDOUT, err, errlen, "rdma_cm: no %s within %llu s",
					 rdma_event_str(want),
					 (unsigned long long)(IBV_CM_WAIT_NS / QP_NS_PER_S));
		poll(&pfd, 1, (int)((deadline - now) / QP_NS_PER_MS) + 1);
	}
	got = ev->event;
	status = ev->status;
	if (id)
		*id = ev->id;
	if (priv) {
		size_t n = ev->param.conn.private_data_len;

		n = n < *priv_len ? n : *priv_len;
		if (ev->param.conn.private_data)
			memcpy(priv, ev->param.conn.private_data, n);
		*priv_len = ev->param.conn.private_data ? n : 0;
	}
	rdma_ack_cm_event(ev);
	if (got != want)
		return qp_errmsg(-ECONNREFUSED, err, errlen, "rdma_cm: expected %s, got %s (status %d)",
				 rdma_event_str(want), rdma_event_str(got), status);
	return 0;
}

static int cm_channel(struct ibv_ctx_priv *x, char *err, size_t errlen)
{
	if (x->cm_ch)
		return 0;
	x->cm_ch = rdma_create_event_channel();
	if (!x->cm_ch)
		return qp_errmsg(-errno, err, errlen, "rdma_cm: no event channel (%s; is rdma_ucm "
				 "loaded?)", strerror(errno));
	return fcntl(x->cm_ch->fd, F_SETFL, fcntl(x->cm_ch->fd, F_GETFL) | O_NONBLOCK) ? -errno : 0;
}

/* On a CM id with a resolved device: CQ, QP, local data, and our message encoded. */
static int cm_make_qp(struct ibv_qp_priv *q, struct rdma_cm_id *id, const struct qp_mr *expose,
		      uint8_t *msg, char *err, size_t errlen)
{
	struct ibv_ctx_priv *x = to_xctx(q->pub.ctx);
	struct qp_conn_info local;
	struct ibv_qp_init_attr ia;
	int rc;

	q->cm_id = id;
	if (id->verbs != x->verbs)
		return qp_errmsg(-EXDEV, err, errlen, "rdma_cm: the address belongs to %s, this "
				 "context uses %s", ibv_get_device_name(id->verbs->device),
				 x->dev_name);
	rc = ibv_qp_prepare(q, &ia, err, errlen);
	if (rc == 0 && rdma_create_qp(id, x->pd, &ia))
		rc = qp_errmsg(-errno, err, errlen, "rdma_cm: create QP: %s", strerror(errno));
	if (rc)
		return rc;
	q->qp = id->qp;
	ibv_fill_local(q);
	qp_local_info(&q->pub, expose, &local);
	return qp_wire_conn_encode(&local, msg, QP_WIRE_CONN_BYTES) < 0 ? -EINVAL : 0;
}

static void cm_param(const struct qp *qp, const uint8_t *msg, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->private_data = msg;
	p->private_data_len = QP_WIRE_CONN_BYTES;
	p->responder_resources = qp->attr.max_dest_rd_atomic;
	p->initiator_depth = qp->attr.max_rd_atomic;
	p->retry_count = qp->attr.retry_cnt;
	p->rnr_retry_count = qp->attr.rnr_retry;
}

/* The peer's message from the CM private data. */
static int cm_remote(struct qp *qp, const uint8_t *priv, size_t len, char *err, size_t errlen)
{
	int rc = qp_wire_conn_decode(&qp->remote, priv, len, err, errlen);

	if (rc == 0)
		qp->path_mtu_bytes = qp->remote.mtu_bytes < qp->local.mtu_bytes
				     ? qp->remote.mtu_bytes : qp->local.mtu_bytes;
	return rc;
}

int ibv_cm_dial(struct qp *qp, const char *host, const char *port,
		const struct qp_mr *expose, char *err, size_t errlen)
{
	struct ibv_ctx_priv *x = to_xctx(qp->ctx);
	struct ibv_qp_priv *q = to_xqp(qp);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	uint8_t msg[QP_WIRE_CONN_BYTES], priv[256];
	size_t priv_len = sizeof(priv);
	struct rdma_conn_param param;
	struct rdma_cm_id *id = NULL;
	int rc = cm_channel(x, err, errlen);

	if (rc == 0 && (rc = getaddrinfo(host, port, &hints, &ai)) != 0)
		rc = qp_errmsg(-EHOSTUNREACH, err, errlen, "rdma_cm: %s:%s: %s", host, port,
			       gai_strerror(rc));
	if (rc == 0 && rdma_create_id(x->cm_ch, &id, q, RDMA_PS_TCP))
		rc = qp_errmsg(-errno, err, errlen, "rdma_cm: create id: %s", strerror(errno));
	if (rc == 0 && rdma_resolve_addr(id, NULL, ai->ai_addr, IBV_CM_TIMEOUT_MS))
		rc = qp_errmsg(-errno, err, errlen, "rdma_cm: resolve %s: %s", host, strerror(errno));
	if (ai)
		freeaddrinfo(ai);
	if (rc == 0)
		rc = cm_wait(x, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL, NULL, err, errlen);
	if (rc == 0 && rdma_resolve_route(id, IBV_CM_TIMEOUT_MS))
		rc = qp_errmsg(-errno, err, errlen, "rdma_cm: route to %s: %s", host, strerror(errno));
	if (rc == 0)
		rc = cm_wait(x, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, NULL, err, errlen);
	if (rc == 0)
		rc = cm_make_qp(q, id, expose, msg, err, errlen);
	if (rc == 0) {
		cm_param(qp, msg, &param);
		if (rdma_connect(id, &param))
			rc = qp_errmsg(-errno, err, errlen, "rdma_cm: connect: %s", strerror(errno));
	}
	if (rc == 0)
		rc = cm_wait(x, RDMA_CM_EVENT_ESTABLISHED, NULL, priv, &priv_len, err, errlen);
	if (rc == 0)
		rc = cm_remote(qp, priv, priv_len, err, errlen);
	if (rc == 0)
		ibv_sync_sq_psn(q);
	if (rc) {
		q->cm_id = id;
		ibv_qp_release(q);
	}
	return rc;
}

static int cm_listen(struct ibv_ctx_priv *x, const char *bind_host, const char *port,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	int rc;

	if (x->listen_id && strcmp(x->listen_port, port) == 0)
		return 0;
	if (x->listen_id)
		rdma_destroy_id(x->listen_id);
	x->listen_id = NULL;
	rc = getaddrinfo(bind_host, port, &hints, &ai);
	if (rc)
		return qp_errmsg(-EHOSTUNREACH, err, errlen, "rdma_cm: %s:%s: %s",
				 bind_host ? bind_host : "*", port, gai_strerror(rc));
	if (rdma_create_id(x->cm_ch, &x->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(x->listen_id, ai->ai_addr) || rdma_listen(x->listen_id, 8))
		rc = qp_errmsg(-errno, err, errlen, "rdma_cm: listen on port %s: %s", port,
			       strerror(errno));
	freeaddrinfo(ai);
	snprintf(x->listen_port, sizeof(x->listen_port), "%s", port);
	return rc;
}

int ibv_cm_accept(struct qp *qp, const char *bind_host, const char *port,
		  const struct qp_mr *expose, char *err, size_t errlen)
{
	struct ibv_ctx_priv *x = to_xctx(qp->ctx);
	struct ibv_qp_priv *q = to_xqp(qp);
	uint8_t msg[QP_WIRE_CONN_BYTES], priv[256];
	size_t priv_len = sizeof(priv);
	struct rdma_conn_param param;
	struct rdma_cm_id *id = NULL;
	bool accepted = false;
	int rc = cm_channel(x, err, errlen);

	if (rc == 0)
		rc = cm_listen(x, bind_host, port, err, errlen);
	if (rc == 0)
		rc = cm_wait(x, RDMA_CM_EVENT_CONNECT_REQUEST, &id, priv, &priv_len, err, errlen);
	if (rc == 0)
		rc = cm_make_qp(q, id, expose, msg, err, errlen);
	if (rc == 0)
		rc = cm_remote(qp, priv, priv_len, err, errlen);
	if (rc == 0) {
		cm_param(qp, msg, &param);
		if (rdma_accept(id, &param))
			rc = qp_errmsg(-errno, err, errlen, "rdma_cm: accept: %s", strerror(errno));
		else
			accepted = true;
	}
	if (rc == 0)
		rc = cm_wait(x, RDMA_CM_EVENT_ESTABLISHED, NULL, NULL, NULL, err, errlen);
	if (rc == 0)
		ibv_sync_sq_psn(q);
	if (rc && id) {
		if (!accepted)
			rdma_reject(id, NULL, 0);
		q->cm_id = id;
		ibv_qp_release(q);
	}
	return rc;
}
