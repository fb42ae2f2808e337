/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP API's TCP connection exchange between two threads over the mock backend
 * (tests/support/qp_mock.h): dial and accept, and peers that send a truncated exchange or
 * speak another version. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "qp_mock.h"

struct side {
	bool dial;
	char port[16];
	struct qp_ctx *ctx;
	struct qp_mr *mr;
	struct qp *qp;
	int rc;
	char err[200];
	uint8_t buf[4096];
};

static void *side_main(void *arg)
{
	struct side *s = arg;

	s->rc = s->dial ? qp_dial(s->ctx, NULL, "127.0.0.1", s->port, s->mr, 5 * QP_NS_PER_S,
				  &s->qp, s->err, sizeof(s->err))
			: qp_accept(s->ctx, NULL, "127.0.0.1", s->port, s->mr, 5 * QP_NS_PER_S,
				    &s->qp, s->err, sizeof(s->err));
	return NULL;
}

static void free_port(char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(buf, len, "%u", ntohs(sa.sin_port));
}

static void test_tcp_dial_accept(void **state)
{
	struct side s[2] = { { .dial = false }, { .dial = true } };
	pthread_t th[2];
	char err[200];
	(void)state;

	free_port(s[0].port, sizeof(s[0].port));
	memcpy(s[1].port, s[0].port, sizeof(s[0].port));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(qp_ctx_open_ops(&mock_ops, &(struct qp_ctx_attr){
			.rate_table = "" }, &s[i].ctx, err, sizeof(err)), 0);
		assert_int_equal(qp_mr_reg(s[i].ctx, s[i].buf, sizeof(s[i].buf),
					   QP_ACCESS_REMOTE_WRITE, &s[i].mr), 0);
	}
	/* The client starts first: it retries until the server listens. */
	pthread_create(&th[1], NULL, side_main, &s[1]);
	usleep(150000);
	pthread_create(&th[0], NULL, side_main, &s[0]);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	print_message("server: %d %s / client: %d %s\n", s[0].rc, s[0].err, s[1].rc, s[1].err);
	assert_int_equal(s[0].rc, 0);
	assert_int_equal(s[1].rc, 0);
	for (int i = 0; i < 2; i++) {
		struct side *me = &s[i], *peer = &s[1 - i];

		assert_true(me->qp->connected);
		assert_int_equal(me->qp->remote.qpn, peer->qp->qpn);
		assert_int_equal(me->qp->remote.psn, peer->qp->local.psn);
		assert_int_equal(me->qp->remote.rkey, peer->mr->rkey);
		assert_int_equal(me->qp->remote.addr, (uintptr_t)peer->buf);
		assert_int_equal(me->qp->remote.len, sizeof(peer->buf));
	}
	for (int i = 0; i < 2; i++)
		qp_ctx_close(s[i].ctx);
}

struct rogue {
	char port[16];
	uint8_t msg[QP_WIRE_CONN_BYTES];
	size_t len;
};

/* A peer that sends @msg (maybe truncated or of another version), then hangs up. */
static void *rogue_main(void *arg)
{
	struct rogue *r = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				  .sin_port = htons((uint16_t)atoi(r->port)) };
	int fd = -1;

	for (int i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(20000);
	}
	if (fd >= 0) {
		/* the server's check is what is tested, not whether the write went */
		ssize_t n = write(fd, r->msg, r->len);

		(void)n;
		usleep(100000);
		close(fd);
	}
	return NULL;
}

static void expect_accept_fails(const struct qp_conn_info *ci, size_t len, uint8_t version,
				int want_rc, const char *word)
{
	struct rogue r;
	struct qp_ctx *ctx;
	struct qp *qp = NULL;
	pthread_t th;
	char err[200] = "";
	int rc;

	free_port(r.port, sizeof(r.port));
	assert_int_equal(qp_wire_conn_encode(ci, r.msg, sizeof(r.msg)), QP_WIRE_CONN_BYTES);
	r.msg[2] = version;
	r.len = len;
	assert_int_equal(qp_ctx_open_ops(&mock_ops, &(struct qp_ctx_attr){ .rate_table = "" },
					 &ctx, err, sizeof(err)), 0);
	pthread_create(&th, NULL, rogue_main, &r);
	rc = qp_accept(ctx, NULL, "127.0.0.1", r.port, NULL, 3 * QP_NS_PER_S, &qp, err,
		       sizeof(err));
	pthread_join(th, NULL);
	print_message("peer sent %zu bytes, version %u: %d %s\n", len, version, rc, err);
	assert_int_equal(rc, want_rc);
	assert_null(qp);
	assert_non_null(strstr(err, word));
	assert_null(ctx->qps); /* the half-made QP was destroyed */
	qp_ctx_close(ctx);
}

static void test_tcp_bad_peers(void **state)
{
	struct qp_conn_info ci = { .qpn = 0x222, .psn = 1, .mtu_bytes = 1024 };
	(void)state;

	expect_accept_fails(&ci, QP_WIRE_CONN_BYTES, 2, -EPROTO, "version 2");
	expect_accept_fails(&ci, 20, 1, -ECONNRESET, "exchange");
	expect_accept_fails(&ci, 3, 1, -ECONNRESET, "exchange");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_dial_accept),
		cmocka_unit_test(test_tcp_bad_peers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
