/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Telemetry codec: round trips of every type, every truncation, bad headers and fields,
 * random bytes, and the INT encoder from parts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fb_samples.h"
#include "qpace/fb_auth.h"
#include "qpace/feedback.h"

static void test_round_trip(void **state)
{
	struct fb_msg msgs[FB_SAMPLES_MAX], back;
	uint8_t buf[FB_MAX_LEN];
	size_t n;
	(void)state;

	fb_samples(msgs, &n);
	for (size_t i = 0; i < n; i++) {
		int len = fb_encode(buf, sizeof(buf), &msgs[i]);
		assert_true(len > FB_HDR_LEN);
		assert_int_equal(fb_decode(&back, buf, (size_t)len), 0);
		assert_int_equal(back.type, msgs[i].type);
		/* the switch's readers skip by the claimed type: it is the decoded one */
		assert_int_equal(fb_claimed_type(buf, (size_t)len), msgs[i].type);
		for (size_t k = 0; k < FB_HDR_LEN; k++)
			assert_int_equal(fb_claimed_type(buf, k), 0);
		assert_int_equal(back.flags, msgs[i].flags);
		assert_int_equal(back.length, len);
		msgs[i].length = back.length;
		assert_memory_equal(&back, &msgs[i], sizeof(back));
	}
	print_message("%zu messages round-tripped (INT 1..%d hops, notice, levels, ack, "
		      "credit, echo)\n", n, QP_INT_MAX_HOPS);
}

static void test_every_truncation(void **state)
{
	struct fb_msg msgs[FB_SAMPLES_MAX], out;
	uint8_t buf[FB_MAX_LEN];
	size_t n;
	(void)state;

	fb_samples(msgs, &n);
	for (size_t i = 0; i < n; i++) {
		int len = fb_encode(buf, sizeof(buf), &msgs[i]);
		for (int cut = 0; cut < len; cut++) {
			uint8_t *b = malloc(cut ? (size_t)cut : 1);
			memcpy(b, buf, (size_t)cut);
			memset(&out, 0x5a, sizeof(out));
			assert_int_equal(fb_decode(&out, b, (size_t)cut), -EMSGSIZE);
			assert_int_equal(out.type, 0x5a);
			free(b);
			/* A length field that agrees with the cut is still too short a body. */
			if (cut >= FB_HDR_LEN) {
				uint8_t c[FB_MAX_LEN];
				memcpy(c, buf, (size_t)cut);
				c[4] = (uint8_t)(cut >> 8);
				c[5] = (uint8_t)cut;
				assert_true(fb_decode(&out, c, (size_t)cut) < 0);
			}
		}
		/* Encoding into too small a buffer fails too. */
		assert_int_equal(fb_encode(buf, (size_t)len - 1, &msgs[i]), -EMSGSIZE);
	}
}

static void test_bad_fields(void **state)
{
	struct fb_msg m = fb_sample_int(2), out;
	uint8_t buf[FB_MAX_LEN];
	int len;
	(void)state;

	len = fb_encode(buf, sizeof(buf), &m);
	buf[2] = 3;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EPROTO);
	buf[2] = FB_VERSION;
	buf[0] ^= 1;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EPROTO);
	buf[0] ^= 1;
	buf[3] = 99;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -ENOMSG);
	buf[3] = 0;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -ENOMSG);
	buf[3] = FB_T_INT;
	buf[FB_HDR_LEN + 20] = 0;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	buf[FB_HDR_LEN + 20] = QP_INT_MAX_HOPS + 1;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	buf[FB_HDR_LEN + 20] = 3;   /* claims more hops than the body holds */
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EMSGSIZE);
	buf[FB_HDR_LEN + 20] = 2;
	buf[7] = 1;                 /* an auth tag of one byte eats into the hops */
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EMSGSIZE);
	buf[7] = FB_AUTH_MAX + 1;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	buf[7] = 0;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), 0);

	m = fb_sample_int(0);
	assert_int_equal(fb_encode(buf, sizeof(buf), &m), -EINVAL);
	m = fb_sample_int(QP_INT_MAX_HOPS + 1);
	assert_int_equal(fb_encode(buf, sizeof(buf), &m), -EINVAL);
	m = (struct fb_msg){ .type = FB_T_LEVEL };
	m.u.level.level = 4;
	assert_int_equal(fb_encode(buf, sizeof(buf), &m), -EINVAL);
	m.u.level.level = 2;
	len = fb_encode(buf, sizeof(buf), &m);
	buf[FB_HDR_LEN + 22] = 5;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	buf[FB_HDR_LEN + 22] = 2;
	buf[FB_HDR_LEN + 23] = 9;   /* reserved unless level 7: ignored (found by fuzzing) */
	assert_int_equal(fb_decode(&out, buf, (size_t)len), 0);
	assert_int_equal(out.u.level.acked, 0);
	buf[FB_HDR_LEN + 22] = FB_LEVEL_ACK;
	buf[FB_HDR_LEN + 23] = 4;   /* acknowledging a level that does not exist */
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	m.type = 77;
	assert_int_equal(fb_encode(buf, sizeof(buf), &m), -EINVAL);
	assert_string_equal(fb_type_name(FB_T_NOTICE), "notice");
	assert_string_equal(fb_type_name(200), "unknown");
}

/* Trailing body bytes (a later minor revision) and an auth tag are skipped. */
static void test_extension_and_auth(void **state)
{
	struct fb_msg m = { .type = FB_T_NOTICE }, out;
	uint8_t buf[FB_MAX_LEN];
	int len;
	(void)state;

	m.u.notice.flow = fb_sample_flow;
	m.u.notice.queue_bytes = 1234;
	len = fb_encode(buf, sizeof(buf), &m);
	memset(buf + len, 0xee, 24);      /* 8 new body bytes + a 16-byte tag */
	buf[4] = 0;
	buf[5] = (uint8_t)(len + 24);
	buf[7] = 16;
	assert_int_equal(fb_decode(&out, buf, (size_t)len + 24), 0);
	assert_int_equal(out.auth_len, 16);
	assert_int_equal(out.u.notice.queue_bytes, 1234);
	/* The datagram may be longer than the message. */
	assert_int_equal(fb_decode(&out, buf, (size_t)len + 30), 0);
}

/* Version 2 (signed): the body after the 20-byte header, the signer's id and sequence
 * read; a version 2 header without a tag, or cut short, is refused; version 3 is not
 * known. (Tags: test_siphash.c.) */
static void test_signed_header(void **state)
{
	struct fb_msg m = { .type = FB_T_NOTICE }, out;
	uint8_t buf[FB_MAX_LEN], key[QP_SIPHASH_KEY_BYTES] = { 0 };
	struct qp_siphash_key k;
	int len;
	(void)state;

	qp_siphash_key_load(&k, key);
	m.u.notice.flow = fb_sample_flow;
	m.u.notice.queue_bytes = 4321;
	len = fb_encode(buf, sizeof(buf), &m);
	len = fb_auth_sign(buf, sizeof(buf), (size_t)len, &k, 0x01020304u, 99);
	assert_int_equal(len, FB_HDR_SIGNED_LEN + FB_NOTICE_LEN + FB_AUTH_TAG_LEN);
	assert_int_equal(fb_decode(&out, buf, (size_t)len), 0);
	assert_int_equal(out.u.notice.queue_bytes, 4321);
	assert_int_equal(out.sender, 0x01020304u);
	assert_int_equal(out.seq, 99);
	assert_int_equal(out.length, len);
	assert_int_equal(fb_decode(&out, buf, FB_HDR_SIGNED_LEN - 1), -EMSGSIZE);
	buf[7] = 0;                       /* signed, but no tag */
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EINVAL);
	buf[7] = FB_AUTH_TAG_LEN;
	buf[2] = 3;
	assert_int_equal(fb_decode(&out, buf, (size_t)len), -EPROTO);
	/* an unsigned message carries no signer */
	len = fb_encode(buf, sizeof(buf), &m);
	assert_int_equal(fb_decode(&out, buf, (size_t)len), 0);
	assert_int_equal(out.sender, 0);
	assert_int_equal(out.seq, 0);
}

/* Several messages in one datagram: each length leads to the next. */
static void test_back_to_back(void **state)
{
	struct fb_msg msgs[FB_SAMPLES_MAX], out;
	uint8_t buf[4096];
	size_t n, len = 0, off = 0, count = 0;
	(void)state;

	fb_samples(msgs, &n);
	for (size_t i = 0; i < n; i++)
		len += (size_t)fb_encode(buf + len, sizeof(buf) - len, &msgs[i]);
	while (off < len && fb_decode(&out, buf + off, len - off) == 0) {
		assert_int_equal(out.type, msgs[count].type);
		off += out.length;
		count++;
	}
	assert_int_equal(count, n);
	assert_int_equal(off, len);
}

static void test_random_bytes(void **state)
{
	unsigned ok = 0, counts[8] = { 0 };
	(void)state;

	srand(4242);
	for (int i = 0; i < 300000; i++) {
		size_t len = (size_t)(rand() % (FB_MAX_LEN + 8));
		uint8_t *b = malloc(len ? len : 1);
		struct fb_msg out;
		int rc;

		for (size_t k = 0; k < len; k++)
			b[k] = (uint8_t)rand();
		if (len >= FB_HDR_LEN && (i % 4)) {   /* a valid header, random body */
			b[0] = 0x51; b[1] = 0x46; b[2] = FB_VERSION;
			b[3] = (uint8_t)(1 + rand() % 6);
			b[4] = (uint8_t)(len >> 8);
			b[5] = (uint8_t)len;
			b[7] = (uint8_t)(rand() % 3 ? 0 : rand() % 80);
			if (b[3] == FB_T_INT)
				b[FB_HDR_LEN + 20 < len ? FB_HDR_LEN + 20 : 0] = (uint8_t)(rand() % 7);
		}
		rc = fb_decode(&out, b, len);
		if (rc == 0) {
			ok++;
			assert_true(out.length <= len);
		}
		counts[-rc < 8 ? 0 : (rc == -EMSGSIZE ? 1 : rc == -EINVAL ? 2 : rc == -ENOMSG ? 3 :
				       rc == -EPROTO ? 4 : 5)]++;
		free(b);
	}
	print_message("random: %u decoded; truncated %u, bad field %u, unknown type %u, "
		      "bad version %u\n", ok, counts[1], counts[2], counts[3], counts[4]);
	assert_true(ok > 1000);
	assert_int_equal(counts[5], 0);
}

/* fb_encode_int (the switch's per-frame encoder) makes exactly fb_encode's bytes, for
 * every hop count and both types, refuses every short buffer without writing past it,
 * and refuses hop counts 0 and above the maximum. */
static void test_encode_int_parts(void **state)
{
	uint8_t a[FB_MAX_LEN], b[FB_MAX_LEN + 1];
	unsigned checked = 0;
	(void)state;

	for (unsigned h = 1; h <= QP_INT_MAX_HOPS; h++) {
		for (int echo = 0; echo <= 1; echo++) {
			struct fb_msg m = fb_sample_int(h);
			const struct fb_int *r = &m.u.int_report;
			int na, nb;

			m.type = echo ? FB_T_ECHO : FB_T_INT;
			m.flags = echo ? FB_F_TO_RECEIVER : 0;
			na = fb_encode(a, sizeof(a), &m);
			memset(b, 0xa5, sizeof(b));
			nb = fb_encode_int(b, sizeof(b) - 1, m.type, m.flags, &r->flow, r->psn,
					   r->hops, r->nhops);
			assert_true(na > 0);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, (size_t)na);
			for (int cap = 0; cap < na; cap++) {
				memset(b, 0xa5, sizeof(b));
				assert_int_equal(fb_encode_int(b, (size_t)cap, m.type, m.flags,
							       &r->flow, r->psn, r->hops,
							       r->nhops), -EMSGSIZE);
				assert_int_equal(b[0], 0xa5);
			}
			checked++;
		}
	}
	struct fb_msg m = fb_sample_int(QP_INT_MAX_HOPS);
	assert_int_equal(fb_encode_int(b, sizeof(b), FB_T_INT, 0, &fb_sample_flow, 1,
				       m.u.int_report.hops, 0), -EINVAL);
	assert_int_equal(fb_encode_int(b, sizeof(b), FB_T_INT, 0, &fb_sample_flow, 1,
				       m.u.int_report.hops, QP_INT_MAX_HOPS + 1), -EINVAL);
	assert_int_equal(fb_encode_int(b, sizeof(b), FB_T_NOTICE, 0, &fb_sample_flow, 1,
				       m.u.int_report.hops, 1), -EINVAL);
	print_message("fb_encode_int: %u reports byte-identical to fb_encode\n", checked);
}

/* FB_F_IPV6: the addresses after the body, refused with IPv4 fields or without them;
 * fb_encode_int makes fb_encode's bytes for an IPv6 flow too. */
static void test_ipv6_flows(void **state)
{
	struct fb_msg m = fb_sample_int(3), out;
	uint8_t a[FB_MAX_LEN], b[FB_MAX_LEN];
	const struct fb_int *r = &m.u.int_report;
	int na, nb;
	(void)state;

	m.flags = FB_F_IPV6;
	m.u.int_report.flow = fb_sample_flow6;
	na = fb_encode(a, sizeof(a), &m);
	assert_int_equal(na, FB_HDR_LEN + FB_INT_FIXED + 3 * FB_HOP_LEN + FB_FLOW6_LEN);
	assert_memory_equal(a + na - 32, fb_sample_flow6.src6, 16);
	assert_memory_equal(a + na - 16, fb_sample_flow6.dst6, 16);
	nb = fb_encode_int(b, sizeof(b), FB_T_INT, FB_F_IPV6, &r->flow, r->psn, r->hops, 3);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, (size_t)na);
	assert_int_equal(fb_encode_int(b, (size_t)na - 1, FB_T_INT, FB_F_IPV6, &r->flow, r->psn,
				       r->hops, 3), -EMSGSIZE);
	assert_int_equal(fb_encode(b, (size_t)na - 1, &m), -EMSGSIZE);
	assert_int_equal(fb_decode(&out, a, (size_t)na), 0);
	assert_memory_equal(out.u.int_report.flow.src6, fb_sample_flow6.src6, 16);
	assert_memory_equal(out.u.int_report.flow.dst6, fb_sample_flow6.dst6, 16);
	assert_int_equal(out.u.int_report.flow.src_ip, 0);
	/* the flag without the addresses: the length says the body ends at the hops */
	memcpy(b, a, (size_t)na);
	b[4] = (uint8_t)((na - FB_FLOW6_LEN) >> 8);
	b[5] = (uint8_t)(na - FB_FLOW6_LEN);
	assert_int_equal(fb_decode(&out, b, (size_t)na), -EMSGSIZE);
	/* an IPv4 address beside the flag */
	memcpy(b, a, (size_t)na);
	b[FB_HDR_LEN + 3] = 1;
	assert_int_equal(fb_decode(&out, b, (size_t)na), -EINVAL);
	m.u.int_report.flow.dst_ip = 1;
	assert_int_equal(fb_encode(a, sizeof(a), &m), -EINVAL);
	assert_int_equal(fb_encode_int(b, sizeof(b), FB_T_INT, FB_F_IPV6, &m.u.int_report.flow,
				       1, r->hops, 3), -EINVAL);
	/* a reader without the flag sees an IPv4 flow of 0.0.0.0: the tail is extension */
	m.flags = 0;
	m.u.int_report.flow = fb_sample_flow6;
	assert_int_equal(fb_encode(a, sizeof(a), &m), FB_HDR_LEN + FB_INT_FIXED + 3 * FB_HOP_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_extension_and_auth),
		cmocka_unit_test(test_signed_header),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_encode_int_parts),
		cmocka_unit_test(test_ipv6_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
