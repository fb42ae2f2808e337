/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control-protocol server shape (qpace/ctl_server.h): each request reaches the handler
 * of its type with its id echoed; what is short, too long, unknown, answer-only or without
 * a handler gets a REPLY with the reason; reply texts are made printable; ctl_serve reads a
 * SOCK_SEQPACKET connection until it is drained, closed or @max requests are done. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/ctl_server.h"

#define SENT_MAX 8

/* What the server sent (decoded back), and what the handlers and the malformed hook saw. */
struct sink {
	struct ctl_msg sent[SENT_MAX];
	int nsent;
	int calls[CTL_T_COUNT];
	char malformed[200];
	int nmalformed;
};

static void collect(void *io, const uint8_t *msg, size_t len)
{
	struct sink *k = io;
	char err[200];

	assert_true(k->nsent < SENT_MAX);
	assert_int_equal(ctl_decode(&k->sent[k->nsent++], msg, len, err, sizeof(err)), 0);
}

static void on_show(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	struct ctl_msg q = { .type = CTL_T_QP, .id = 999 };   /* the server sets the id */

	((struct sink *)ctx)->calls[req->type]++;
	q.u.qp.reg.qpn = req->u.qpn;
	snprintf(q.u.qp.reg.algo, sizeof(q.u.qp.reg.algo), "hpcc");
	ctl_out_send(o, &q);
	ctl_out_reply(o, 0, 1, "");
}

static void on_status(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	((struct sink *)ctx)->calls[req->type]++;
	ctl_out_reply(o, -EBUSY, 0, "line one\nline\ttwo \x01\x7f");
}

static void on_event(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	(void)o;                                   /* never answered */
	((struct sink *)ctx)->calls[req->type]++;
}

static void on_bad(void *ctx, const struct ctl_msg *req, struct ctl_out *o)
{
	struct ctl_msg q = { .type = CTL_T_QP };

	((struct sink *)ctx)->calls[req->type]++;
	snprintf(q.u.qp.reg.algo, sizeof(q.u.qp.reg.algo), "NOT A NAME");
	assert_int_equal(ctl_out_send(o, &q), -EINVAL);   /* the peer would refuse it */
	ctl_out_reply(o, 0, 0, NULL);
}

static void note(void *ctx, const char *why)
{
	struct sink *k = ctx;

	snprintf(k->malformed, sizeof(k->malformed), "%s", why);
	k->nmalformed++;
}

static const struct ctl_handlers handlers = {
	.fn = {
		[CTL_T_SHOW] = on_show,
		[CTL_T_STATUS] = on_status,
		[CTL_T_EVENT] = on_event,
		[CTL_T_LIST] = on_bad,
		[CTL_T_QP] = on_show,               /* answer-only: never called */
	},
	.refuse_status = -EPERM,
	.refuse_text = "monitoring only",
	.malformed = note,
};

/* Dispatch @m encoded (its first @cut bytes when @cut > 0); @k collects. */
static void dispatch(struct sink *k, struct ctl_out *o, const struct ctl_msg *m, int cut)
{
	uint8_t buf[CTL_MAX_LEN];
	int n = ctl_encode(buf, sizeof(buf), m);

	assert_true(n > 0);
	memset(k, 0, sizeof(*k));
	*o = (struct ctl_out){ .send = collect, .io = k };
	ctl_dispatch(&handlers, k, buf, (size_t)(cut > 0 ? cut : n), o);
}

static const struct ctl_reply *only_reply(const struct sink *k)
{
	assert_int_equal(k->nsent, 1);
	assert_int_equal(k->sent[0].type, CTL_T_REPLY);
	return &k->sent[0].u.reply;
}

static void test_each_handler(void **state)
{
	struct sink k;
	struct ctl_out o;
	const struct ctl_reply *r;
	(void)state;

	/* SHOW: its QP, then the REPLY, both with the request's id */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_SHOW, .id = 77, .u.qpn = 0x11 }, 0);
	assert_int_equal(k.calls[CTL_T_SHOW], 1);
	assert_int_equal(k.nsent, 2);
	assert_int_equal(k.sent[0].type, CTL_T_QP);
	assert_int_equal(k.sent[0].u.qp.reg.qpn, 0x11);
	assert_int_equal(k.sent[0].id, 77);
	assert_int_equal(k.sent[1].type, CTL_T_REPLY);
	assert_int_equal(k.sent[1].id, 77);
	assert_int_equal(k.sent[1].u.reply.count, 1);
	assert_int_equal(o.requests, 1);
	assert_int_equal(k.nmalformed, 0);

	/* STATUS: an error reply; its text is made printable, never refused by the codec */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_STATUS, .id = 5 }, 0);
	r = only_reply(&k);
	assert_int_equal(r->status, -EBUSY);
	assert_string_equal(r->text, "line one?line?two ??");
	assert_int_equal(k.sent[0].id, 5);

	/* EVENT: handled, not answered */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_EVENT, .u.event = { .qpn = 1,
						.type = 4, .value = 1000 } }, 0);
	assert_int_equal(k.calls[CTL_T_EVENT], 1);
	assert_int_equal(k.nsent, 0);

	/* a message the codec refuses is counted, not sent */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_LIST, .id = 3 }, 0);
	assert_int_equal(o.unsent, 1);
	r = only_reply(&k);
	assert_int_equal(r->status, 0);
	assert_string_equal(r->text, "");
}

static void test_refusals(void **state)
{
	struct ctl_msg reg = { .type = CTL_T_REGISTER, .id = 9,
			       .u.reg = { .qpn = 1, .peer_qpn = 2, .mtu_bytes = 1024 } };
	struct sink k;
	struct ctl_out o;
	const struct ctl_reply *r;
	uint8_t buf[CTL_MAX_LEN + 1];
	(void)state;

	/* no handler: the table's refusal, with the id */
	dispatch(&k, &o, &reg, 0);
	r = only_reply(&k);
	assert_int_equal(r->status, -EPERM);
	assert_string_equal(r->text, "monitoring only");
	assert_int_equal(k.sent[0].id, 9);
	assert_int_equal(k.nmalformed, 0);

	/* answer-only types are no requests, whatever the table says */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_QP, .id = 4 }, 0);
	assert_int_equal(k.calls[CTL_T_QP], 0);
	r = only_reply(&k);
	assert_int_equal(r->status, -EINVAL);
	assert_string_equal(r->text, "not a request");
	assert_non_null(strstr(k.malformed, "a qp message, which only the agent sends"));

	/* short: a body shorter than its type needs names the type; the id is echoed */
	memset(&k, 0, sizeof(k));
	o = (struct ctl_out){ .send = collect, .io = &k };
	int n = ctl_encode(buf, sizeof(buf), &(struct ctl_msg){ .type = CTL_T_SHOW, .id = 12,
								 .u.qpn = 1 });
	buf[5] = CTL_HDR_LEN + 2;                  /* the length field: 2 of its 4 bytes */
	ctl_dispatch(&handlers, &k, buf, (size_t)n, &o);
	r = only_reply(&k);
	assert_int_equal(r->status, -EINVAL);
	assert_non_null(strstr(r->text, "show"));
	assert_int_equal(k.sent[0].id, 12);
	assert_int_equal(k.nmalformed, 1);
	assert_int_equal(o.requests, 0);
	/* shorter than a header: id 0 */
	dispatch(&k, &o, &(struct ctl_msg){ .type = CTL_T_LIST, .id = 12 }, 5);
	r = only_reply(&k);
	assert_int_equal(r->status, -EINVAL);
	assert_int_equal(k.sent[0].id, 0);
	assert_non_null(strstr(r->text, "header"));

	/* unknown type */
	memset(&k, 0, sizeof(k));
	o = (struct ctl_out){ .send = collect, .io = &k };
	n = ctl_encode(buf, sizeof(buf), &(struct ctl_msg){ .type = CTL_T_LIST, .id = 6 });
	buf[3] = 200;
	ctl_dispatch(&handlers, &k, buf, (size_t)n, &o);
	r = only_reply(&k);
	assert_int_equal(r->status, -EINVAL);
	assert_non_null(strstr(r->text, "type 200 unknown"));
	assert_int_equal(k.sent[0].id, 6);

	/* too long: -EMSGSIZE */
	memset(&k, 0, sizeof(k));
	o = (struct ctl_out){ .send = collect, .io = &k };
	ctl_dispatch(&handlers, &k, buf, CTL_MAX_LEN + 500, &o);
	r = only_reply(&k);
	assert_int_equal(r->status, -EMSGSIZE);
	assert_non_null(strstr(k.malformed, "1524 bytes, 1024 at most"));

	/* a table without a refusal of its own still refuses */
	static const struct ctl_handlers bare = { .fn = { [CTL_T_LIST] = on_event } };
	memset(&k, 0, sizeof(k));
	o = (struct ctl_out){ .send = collect, .io = &k };
	n = ctl_encode(buf, sizeof(buf), &reg);
	ctl_dispatch(&bare, &k, buf, (size_t)n, &o);
	r = only_reply(&k);
	assert_true(r->status < 0);
}

/* ctl_serve over a socket pair: drained (0), @max honoured, closed (1). */
static void test_serve(void **state)
{
	struct sink k = { .nsent = 0 };
	struct ctl_out o = { .send = collect, .io = &k };
	uint8_t buf[CTL_MAX_LEN];
	int sv[2], n;
	(void)state;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(ctl_serve(sv[0], 64, &handlers, &k, &o), 0);     /* nothing yet */
	n = ctl_encode(buf, sizeof(buf), &(struct ctl_msg){ .type = CTL_T_EVENT,
				.u.event = { .qpn = 1, .type = 2 } });
	for (int i = 0; i < 3; i++)
		assert_int_equal(send(sv[1], buf, (size_t)n, 0), n);
	assert_int_equal(ctl_serve(sv[0], 2, &handlers, &k, &o), 0);
	assert_int_equal(k.calls[CTL_T_EVENT], 2);
	assert_int_equal(ctl_serve(sv[0], 64, &handlers, &k, &o), 0);
	assert_int_equal(k.calls[CTL_T_EVENT], 3);
	/* a message over CTL_MAX_LEN is seen at its full length */
	uint8_t big[CTL_MAX_LEN + 100] = { 0 };
	assert_int_equal(send(sv[1], big, sizeof(big), 0), (ssize_t)sizeof(big));
	assert_int_equal(ctl_serve(sv[0], 64, &handlers, &k, &o), 0);
	assert_int_equal(only_reply(&k)->status, -EMSGSIZE);
	assert_non_null(strstr(k.malformed, "1124 bytes"));
	close(sv[1]);
	assert_int_equal(ctl_serve(sv[0], 64, &handlers, &k, &o), 1);
	close(sv[0]);
	assert_true(ctl_serve(sv[0], 64, &handlers, &k, &o) < 0);          /* -EBADF */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_handler),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_serve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
