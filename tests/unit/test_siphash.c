/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* SipHash-2-4 against the reference vectors, and signed feedback (qpace/fb_auth.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/fb_auth.h"
#include "qpace/feedback.h"

/* SipHash-2-4 with key 00 01 .. 0f of the messages 00, 00 01, ..., 00 01 .. 3e (lengths
 * 0..63): the reference implementation's vectors.h (veorq/SipHash), as 64-bit values. */
static const uint64_t vectors[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
	0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
	0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
	0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL, 0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL,
	0xbed65cf21aa2ee98ULL, 0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL, 0x2f2e6163076bcfadULL,
	0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL, 0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL,
	0x7127512f72f27cceULL, 0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL, 0x9abfd8766a33735cULL,
	0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL, 0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL,
	0xf935451de4f21df2ULL, 0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL, 0xa192d576b245165aULL,
	0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL, 0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL,
	0xb78dbfaf3a8d83bdULL, 0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL, 0x958a324ceb064572ULL,
};

static struct qp_siphash_key ref_key(void)
{
	uint8_t kb[16];
	struct qp_siphash_key k;

	for (unsigned i = 0; i < 16; i++)
		kb[i] = (uint8_t)i;
	qp_siphash_key_load(&k, kb);
	return k;
}

static void test_reference_vectors(void **state)
{
	struct qp_siphash_key k = ref_key();
	uint8_t msg[64];
	(void)state;

	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (unsigned len = 0; len < 64; len++)
		assert_int_equal(qp_siphash24(&k, msg, len), vectors[len]);
	/* the paper's appendix example: 15 bytes 00..0e */
	print_message("SipHash-2-4(00..0e) = %016llx (paper: a129ca6149be45e5)\n",
		      (unsigned long long)qp_siphash24(&k, msg, 15));
}

/* Signing: a version 2 message with the signer's id and sequence under the tag; every
 * byte of it (header, id, sequence, body, tag) is covered, so a changed sequence fails. */
static void test_sign_verify(void **state)
{
	struct qp_siphash_key k = ref_key(), other = k;
	struct fb_msg m = { .type = FB_T_CREDIT }, got;
	uint8_t buf[FB_MAX_LEN], plain[FB_MAX_LEN];
	uint64_t seq = 0;
	uint32_t sender = 0;
	int n, s;
	(void)state;

	other.k1 ^= 1;
	m.u.credit = (struct fb_credit){ { 1, 2, 3, 4 }, 5, 6000, 7000 };
	n = fb_encode(buf, sizeof(buf), &m);
	assert_true(n > 0);
	memcpy(plain, buf, (size_t)n);
	assert_int_equal(fb_auth_verify(buf, (size_t)n, &k, NULL, NULL), -ENOKEY);
	assert_int_equal(fb_auth_sign(buf, (size_t)n + FB_AUTH_OVERHEAD - 1, (size_t)n, &k, 9, 1),
			 -EMSGSIZE);
	assert_int_equal(fb_auth_sign(buf, sizeof(buf), (size_t)n - 1, &k, 9, 1), -EINVAL);
	s = fb_auth_sign(buf, sizeof(buf), (size_t)n, &k, 0xa1b2c3d4u, 0x0102030405060708ULL);
	assert_int_equal(s, n + 20);
	assert_int_equal(buf[2], FB_VERSION_SIGNED);
	assert_int_equal(fb_auth_verify(buf, (size_t)s, &k, &sender, &seq), 0);
	assert_int_equal(sender, 0xa1b2c3d4u);
	assert_true(seq == 0x0102030405060708ULL);
	assert_int_equal(fb_auth_verify(buf, (size_t)s, &other, NULL, NULL), -EACCES);
	/* the body is the unsigned message's, after the 20-byte header */
	assert_memory_equal(buf + FB_HDR_SIGNED_LEN, plain + FB_HDR_LEN, (size_t)n - FB_HDR_LEN);
	/* a signed message still decodes, with its signer; signing twice is refused */
	assert_int_equal(fb_decode(&got, buf, (size_t)s), 0);
	assert_int_equal(got.u.credit.credit_bytes, 6000);
	assert_int_equal(got.sender, 0xa1b2c3d4u);
	assert_true(got.seq == 0x0102030405060708ULL);
	assert_int_equal(got.auth_len, FB_AUTH_TAG_LEN);
	assert_int_equal(fb_auth_sign(buf, sizeof(buf), (size_t)s, &k, 9, 1), -EINVAL);
	/* a replayed message with its sequence moved on (the attacker's way past a window)
	 * fails: the sequence is under the tag */
	buf[FB_HDR_LEN + 4 + 7]++;
	assert_int_equal(fb_auth_verify(buf, (size_t)s, &k, NULL, NULL), -EACCES);
	buf[FB_HDR_LEN + 4 + 7]--;
	/* every truncation and every single-bit flip is refused, never read past the end */
	for (int len = 0; len < s; len++)
		assert_int_not_equal(fb_auth_verify(buf, (size_t)len, &k, NULL, NULL), 0);
	for (int bit = 0; bit < s * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(fb_auth_verify(buf, (size_t)s, &k, NULL, NULL), 0);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	assert_int_equal(fb_auth_verify(buf, (size_t)s, &k, NULL, NULL), 0);
}

/* A signer's sequence: its clock, or one more than the last when the clock did not move
 * on (several messages in one ns, a clock stepped back). */
static void test_signer_sequence(void **state)
{
	static const uint64_t clocks[] = { 1000, 1000, 999, 5000, 4000, 4000, 5003 };
	static const uint64_t want[] = { 1000, 1001, 1002, 5000, 5001, 5002, 5003 };
	uint8_t key[QP_SIPHASH_KEY_BYTES] = { 1, 2, 3 };
	struct fb_msg m = { .type = FB_T_CREDIT };
	struct qp_siphash_key k;
	struct fb_signer sg;
	(void)state;

	fb_signer_init(&sg, key, 77);
	qp_siphash_key_load(&k, key);
	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		uint8_t buf[FB_MAX_LEN];
		uint64_t seq;
		uint32_t sender;
		int n = fb_encode(buf, sizeof(buf), &m);

		n = fb_signer_sign(&sg, buf, sizeof(buf), (size_t)n, clocks[i]);
		assert_true(n > 0);
		assert_int_equal(fb_auth_verify(buf, (size_t)n, &k, &sender, &seq), 0);
		assert_int_equal(sender, 77);
		assert_true(seq == want[i]);
	}
	/* a failed signing does not use up a sequence number */
	{
		uint8_t buf[FB_MAX_LEN];
		int n = fb_encode(buf, sizeof(buf), &m);

		assert_int_equal(fb_signer_sign(&sg, buf, (size_t)n + 1, (size_t)n, 9000),
				 -EMSGSIZE);
		assert_true(sg.seq == 5003);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_vectors),
		cmocka_unit_test(test_sign_verify),
		cmocka_unit_test(test_signer_sequence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
