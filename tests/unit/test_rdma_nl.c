/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The rdma netlink QP dump's parser over crafted datagrams: devices, QP entries of user and
 * kernel QPs (PID or kernel name, peer QPN, type, state, port), nests with and without
 * NLA_F_NESTED, unknown attributes skipped, NLMSG_DONE and NLMSG_ERROR; every truncation of
 * a good datagram refused or short of whole messages, attributes too short for their type,
 * an entry without its QPN and a string without its NUL refused with a message; the
 * request's bytes; on this host, the dump itself (no RDMA netlink: one line). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "qpace/rdma_nl.h"
#include "qp_print.h"

/* ---- a small netlink writer ---- */
struct w { uint8_t b[4096]; size_t n; size_t msg; size_t nest[4]; int depth; };

static void put(struct w *w, const void *p, size_t n)
{
	assert_true(w->n + n <= sizeof(w->b));
	if (n)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void align(struct w *w)
{
	static const uint8_t z[4];

	put(w, z, (4 - w->n % 4) % 4);
}

static void msg_begin(struct w *w, uint16_t type)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_MULTI, .nlmsg_seq = 2 };

	w->msg = w->n;
	put(w, &h, sizeof(h));
}

static void msg_end(struct w *w)
{
	uint32_t len = (uint32_t)(w->n - w->msg);

	memcpy(w->b + w->msg, &len, 4);
	align(w);
}

static void attr(struct w *w, uint16_t type, const void *p, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(4 + n), .nla_type = type };

	put(w, &a, sizeof(a));
	put(w, p, n);
	align(w);
}

static void a32(struct w *w, uint16_t type, uint32_t v) { attr(w, type, &v, 4); }
static void a8(struct w *w, uint16_t type, uint8_t v) { attr(w, type, &v, 1); }
static void astr(struct w *w, uint16_t type, const char *s) { attr(w, type, s, strlen(s) + 1); }

static void nest_begin(struct w *w, uint16_t type)
{
	struct nlattr a = { .nla_type = type };

	w->nest[w->depth++] = w->n;
	put(w, &a, sizeof(a));
}

static void nest_end(struct w *w)
{
	size_t at = w->nest[--w->depth];
	uint16_t len = (uint16_t)(w->n - at);

	memcpy(w->b + at, &len, 2);
}

static void done_msg(struct w *w)
{
	int32_t zero = 0;

	msg_begin(w, NLMSG_DONE);
	put(w, &zero, 4);
	msg_end(w);
}

#define QP_MSG RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET)
#define DEV_MSG RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)

/* A QP dump of rxe0: a user RC QP (perftest's), the kernel's GSI QP, in one message; a
 * second message with a UD QP whose nests carry NLA_F_NESTED; then DONE. */
static void qp_dump(struct w *w, bool done)
{
	memset(w, 0, sizeof(*w));
	msg_begin(w, QP_MSG);
	a32(w, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	astr(w, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
	nest_begin(w, RDMA_NLDEV_ATTR_RES_QP);
	nest_begin(w, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
	a32(w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	a32(w, RDMA_NLDEV_ATTR_RES_LQPN, 0x11);
	a32(w, RDMA_NLDEV_ATTR_RES_RQPN, 0x12);
	a32(w, RDMA_NLDEV_ATTR_RES_RQ_PSN, 0xabc);            /* skipped */
	a32(w, RDMA_NLDEV_ATTR_RES_SQ_PSN, 0xdef);            /* skipped */
	a8(w, RDMA_NLDEV_ATTR_RES_TYPE, 2);
	a8(w, RDMA_NLDEV_ATTR_RES_STATE, 3);
	a32(w, RDMA_NLDEV_ATTR_RES_PID, 4242);
	nest_end(w);
	nest_begin(w, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
	a32(w, RDMA_NLDEV_ATTR_RES_LQPN, 1);
	a8(w, RDMA_NLDEV_ATTR_RES_TYPE, 1);
	a8(w, RDMA_NLDEV_ATTR_RES_STATE, 3);
	astr(w, RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core");
	nest_end(w);
	nest_end(w);
	msg_end(w);
	msg_begin(w, QP_MSG);
	a32(w, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	astr(w, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
	a32(w, 999, 7);                                        /* unknown: skipped */
	nest_begin(w, RDMA_NLDEV_ATTR_RES_QP | NLA_F_NESTED);
	nest_begin(w, RDMA_NLDEV_ATTR_RES_QP_ENTRY | NLA_F_NESTED);
	a32(w, RDMA_NLDEV_ATTR_RES_LQPN, 0x20);
	a8(w, RDMA_NLDEV_ATTR_RES_TYPE, 4);
	a8(w, RDMA_NLDEV_ATTR_RES_STATE, 3);
	a32(w, RDMA_NLDEV_ATTR_RES_PID, 1);
	nest_end(w);
	nest_end(w);
	msg_end(w);
	if (done)
		done_msg(w);
}

struct got { struct rdma_nl_qp q[16]; size_t n; struct rdma_nl_dev d[4]; size_t nd; };

static void on_qp(void *ctx, const struct rdma_nl_qp *q)
{
	struct got *g = ctx;

	if (g->n < 16)
		g->q[g->n] = *q;
	g->n++;
}

static void on_dev(void *ctx, const struct rdma_nl_dev *d)
{
	struct got *g = ctx;

	if (g->nd < 4)
		g->d[g->nd] = *d;
	g->nd++;
}

static int parse(const uint8_t *b, size_t n, struct got *g, bool *done, char *err)
{
	const struct rdma_nl_sink s = { on_dev, on_qp, g };

	memset(g, 0, sizeof(*g));
	*done = false;
	err[0] = '\0';
	return rdma_nl_parse(b, n, &s, done, err, 300);
}

static void test_qp_dump(void **state)
{
	struct w w;
	struct got g;
	bool done;
	char err[300];

	(void)state;
	qp_dump(&w, true);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), 3);
	assert_true(done);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.q[0].dev, "rxe0");
	assert_int_equal(g.q[0].dev_index, 3);
	assert_int_equal(g.q[0].port, 1);
	assert_int_equal(g.q[0].lqpn, 0x11);
	assert_int_equal(g.q[0].rqpn, 0x12);
	assert_string_equal(rdma_nl_qp_type_name(g.q[0].type), "RC");
	assert_string_equal(rdma_nl_qp_state_name(g.q[0].state), "RTS");
	assert_int_equal(g.q[0].pid, 4242);
	assert_int_equal(g.q[0].has, RDMA_NL_HAS_PORT | RDMA_NL_HAS_RQPN | RDMA_NL_HAS_TYPE |
			 RDMA_NL_HAS_STATE | RDMA_NL_HAS_PID);
	assert_int_equal(g.q[1].lqpn, 1);
	assert_string_equal(rdma_nl_qp_type_name(g.q[1].type), "GSI");
	assert_string_equal(g.q[1].comm, "ib_core");
	assert_true(g.q[1].has & RDMA_NL_HAS_COMM);
	assert_false(g.q[1].has & (RDMA_NL_HAS_PID | RDMA_NL_HAS_RQPN));
	assert_int_equal(g.q[2].lqpn, 0x20);
	assert_string_equal(rdma_nl_qp_type_name(g.q[2].type), "UD");
	assert_int_equal(g.q[2].pid, 1);
	assert_string_equal(g.q[2].dev, "rxe0");

	/* find: by local QPN, else by the peer's */
	assert_ptr_equal(rdma_nl_find(g.q, 3, 0x20, 0), &g.q[2]);
	assert_ptr_equal(rdma_nl_find(g.q, 3, 0xf00000, 0x12), &g.q[0]);
	assert_null(rdma_nl_find(g.q, 3, 0xf00000, 0x99));
	assert_null(rdma_nl_find(g.q, 3, 0xf00000, 0));
	assert_string_equal(rdma_nl_qp_type_name(7), "?");
	assert_string_equal(rdma_nl_qp_state_name(7), "?");
}

static void test_devices_and_errors(void **state)
{
	struct w w = { 0 };
	struct got g;
	bool done;
	char err[300];
	int32_t e[5] = { -EINVAL };
	int32_t ack[5] = { 0 };

	(void)state;
	msg_begin(&w, DEV_MSG);
	a32(&w, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	astr(&w, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
	a32(&w, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	msg_end(&w);
	msg_begin(&w, DEV_MSG);
	a32(&w, RDMA_NLDEV_ATTR_DEV_INDEX, 1);
	astr(&w, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	msg_end(&w);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), 2);
	assert_false(done);                     /* no DONE yet: the caller reads on */
	assert_int_equal(g.nd, 2);
	assert_string_equal(g.d[1].name, "mlx5_0");
	assert_int_equal(g.d[1].index, 1);

	memset(&w, 0, sizeof(w));               /* an ACK is no error; an error is */
	msg_begin(&w, NLMSG_ERROR);
	put(&w, ack, sizeof(ack));
	msg_end(&w);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), 0);
	msg_begin(&w, NLMSG_ERROR);
	put(&w, e, sizeof(e));
	msg_end(&w);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), -EINVAL);
	assert_non_null(strstr(err, "refused the dump: Invalid argument"));
	memset(&w, 0, sizeof(w));               /* a code no errno has (found by the fuzzer) */
	e[0] = INT32_MIN;
	msg_begin(&w, NLMSG_ERROR);
	put(&w, e, sizeof(e));
	msg_end(&w);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), -EBADMSG);
	assert_non_null(strstr(err, "accepted -4095..0"));

	memset(&w, 0, sizeof(w));               /* another netlink family's type: skipped */
	msg_begin(&w, RDMA_NL_GET_TYPE(RDMA_NL_LS, 1));
	a32(&w, 1, 1);
	msg_end(&w);
	done_msg(&w);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), 0);
	assert_true(done);
}

/* Every prefix of a good datagram: either whole messages (a record count no larger than
 * the whole one's) or -EMSGSIZE with a message naming the byte; never more. */
static void test_truncated(void **state)
{
	struct w w;
	struct got g;
	bool done;
	char err[300];
	size_t whole = 0, refused = 0, msg1;

	(void)state;
	qp_dump(&w, true);
	memcpy(&msg1, w.b, 4);
	msg1 &= 0xffffffffu;
	for (size_t n = 0; n < w.n; n++) {
		int rc = parse(w.b, n, &g, &done, err);

		if (rc >= 0) {
			/* only at message boundaries: 0 bytes, after message 1, after message 2 */
			assert_true(n == 0 || n == msg1 || n == w.n - 20);
			assert_true(rc <= 3);
			assert_false(done);
			whole++;
		} else {
			assert_int_equal(rc, -EMSGSIZE);
			assert_non_null(strstr(err, "byte"));
			assert_null(strchr(err, '\n'));
			refused++;
		}
	}
	printf("  %zu prefixes of a %zu-byte dump: %zu refused (-EMSGSIZE), %zu whole messages\n",
	       w.n, w.n, refused, whole);
	assert_int_equal(whole, 3);
	/* A message length that claims the inner attributes are shorter than they are: an
	 * attribute runs past the message. */
	qp_dump(&w, false);
	{
		uint32_t short_len = 16 + 8 + 6;    /* header, DEV_INDEX, part of the name */

		memcpy(w.b, &short_len, 4);
		assert_true(parse(w.b, w.n, &g, &done, err) == -EMSGSIZE);
		assert_non_null(strstr(err, "message at byte 0"));
	}
}

/* Attributes too short for their type, an entry without its QPN, a name without its NUL. */
static void test_bad_attributes(void **state)
{
	struct w w;
	struct got g;
	bool done;
	char err[300];
	uint16_t two = 7;

	(void)state;
	for (int c = 0; c < 4; c++) {
		memset(&w, 0, sizeof(w));
		msg_begin(&w, QP_MSG);
		a32(&w, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
		if (c == 3)
			attr(&w, RDMA_NLDEV_ATTR_DEV_NAME, "rxe0", 4);      /* no NUL */
		nest_begin(&w, RDMA_NLDEV_ATTR_RES_QP);
		nest_begin(&w, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
		if (c == 0)
			attr(&w, RDMA_NLDEV_ATTR_RES_LQPN, &two, 2);    /* u32 in 2 bytes */
		else
			a32(&w, c == 1 ? RDMA_NLDEV_ATTR_RES_RQPN : RDMA_NLDEV_ATTR_RES_LQPN, 5);
		if (c == 2)
			attr(&w, RDMA_NLDEV_ATTR_RES_TYPE, NULL, 0);    /* u8 in 0 bytes */
		nest_end(&w);
		nest_end(&w);
		msg_end(&w);
		assert_int_equal(parse(w.b, w.n, &g, &done, err), -EBADMSG);
		assert_int_equal(g.n, 0);
		assert_non_null(strstr(err, "rdma netlink: message at byte 0"));
		printf("  case %d: %s\n", c, err);
	}
}

static void test_request(void **state)
{
	uint8_t b[64];
	struct nlmsghdr h;
	struct nlattr a;
	uint32_t v;

	(void)state;
	assert_int_equal(rdma_nl_request(b, sizeof(b), RDMA_NLDEV_CMD_RES_QP_GET, 9, 3), 24);
	memcpy(&h, b, sizeof(h));
	assert_int_equal(h.nlmsg_len, 24);
	assert_int_equal(h.nlmsg_type, QP_MSG);
	assert_int_equal(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
	assert_int_equal(h.nlmsg_seq, 9);
	memcpy(&a, b + 16, sizeof(a));
	assert_int_equal(a.nla_type, RDMA_NLDEV_ATTR_DEV_INDEX);
	assert_int_equal(a.nla_len, 8);
	memcpy(&v, b + 20, 4);
	assert_int_equal(v, 3);
	assert_int_equal(rdma_nl_request(b, sizeof(b), RDMA_NLDEV_CMD_GET, 1, -1), 16);
	assert_int_equal(rdma_nl_request(b, 20, RDMA_NLDEV_CMD_RES_QP_GET, 1, 0), -EMSGSIZE);
}

/* On this host: the dump works (0) or says in one line why there is nothing to dump. */
static void test_dump_here(void **state)
{
	struct rdma_nl_qp *qps;
	size_t n, ndevs;
	char err[300] = "";
	int rc = rdma_nl_dump_qps(&qps, &n, &ndevs, err, sizeof(err));

	(void)state;
	if (rc == 0) {
		printf("  rdma netlink: %zu devices, %zu QPs\n", ndevs, n);
		free(qps);
		return;
	}
	printf("  %s\n", err);
	assert_null(qps);
	assert_int_equal(n, 0);
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n'));
	if (rc == -EPROTONOSUPPORT)
		assert_non_null(strstr(err, "no RDMA netlink family"));
}

/* qpacectl's OWNER: a registered QP by its own QPN, one found on the wire (a made-up QPN)
 * by the peer QPN it is connected to; the cell of a user, a kernel and no QP. */
static void test_owner_of_view(void **state)
{
	struct w w;
	struct got g;
	bool done;
	char err[300], cell[96];
	struct agent_qp_view reg = { .reg = { .qpn = 0x11, .peer_qpn = 0x99 } };
	struct agent_qp_view wire = { .reg = { .qpn = 0xf00000, .peer_qpn = 0x12 },
				      .wire = { .seen = true, .discovered = true } };
	struct agent_qp_view wire_gsi = { .reg = { .qpn = 1, .peer_qpn = 0x77 },
					  .wire = { .discovered = true } };

	(void)state;
	qp_dump(&w, true);
	assert_int_equal(parse(w.b, w.n, &g, &done, err), 3);
	snprintf(g.q[0].comm, sizeof(g.q[0].comm), "ib_write_bw");
	g.q[0].has |= RDMA_NL_HAS_COMM;
	assert_ptr_equal(qp_view_owner(&reg, g.q, 3), &g.q[0]);
	assert_ptr_equal(qp_view_owner(&wire, g.q, 3), &g.q[0]);
	assert_null(qp_view_owner(&wire_gsi, g.q, 3));   /* its made-up QPN is no local one */
	assert_string_equal(qp_owner_cell(&g.q[0], cell, sizeof(cell)), "4242/ib_write_bw");
	assert_string_equal(qp_owner_cell(&g.q[1], cell, sizeof(cell)), "[ib_core]");
	assert_string_equal(qp_owner_cell(&g.q[2], cell, sizeof(cell)), "1/?");
	assert_string_equal(qp_owner_cell(NULL, cell, sizeof(cell)), "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qp_dump),
		cmocka_unit_test(test_devices_and_errors),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_attributes),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_dump_here),
		cmocka_unit_test(test_owner_of_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
