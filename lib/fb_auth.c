/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Feedback message tags (see qpace/fb_auth.h). The header offsets used here are the ones
 * qpace/feedback.h defines: version u8 at 2, length u16 at 4, auth_len u8 at 7, and in
 * version 2 sender u32 at 8, seq u64 at 12. */
#include <errno.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/fb_auth.h"

#define FB_OFF_VERSION 2
#define FB_OFF_LENGTH 4
#define FB_OFF_AUTH_LEN 7
#define FB_OFF_SENDER 8
#define FB_OFF_SEQ 12

_Static_assert(FB_OFF_SEQ + 8 == FB_HDR_SIGNED_LEN, "the signed header's fields");

int fb_auth_sign(uint8_t *buf, size_t cap, size_t msg_len, const struct qp_siphash_key *key,
		 uint32_t sender, uint64_t seq)
{
	size_t signed_len = msg_len + FB_AUTH_OVERHEAD, tag_at = signed_len - FB_AUTH_TAG_LEN;

	if (msg_len < FB_HDR_LEN || qp_get16(buf) != FB_MAGIC ||
	    buf[FB_OFF_VERSION] != FB_VERSION || buf[FB_OFF_AUTH_LEN] != 0 ||
	    qp_get16(buf + FB_OFF_LENGTH) != msg_len)
		return -EINVAL;
	if (signed_len > cap || signed_len > UINT16_MAX)
		return -EMSGSIZE;
	memmove(buf + FB_HDR_SIGNED_LEN, buf + FB_HDR_LEN, msg_len - FB_HDR_LEN);
	buf[FB_OFF_VERSION] = FB_VERSION_SIGNED;
	buf[FB_OFF_AUTH_LEN] = FB_AUTH_TAG_LEN;
	qp_put16(buf + FB_OFF_LENGTH, (uint16_t)signed_len);
	qp_put32(buf + FB_OFF_SENDER, sender);
	qp_put64(buf + FB_OFF_SEQ, seq);
	qp_put64(buf + tag_at, qp_siphash24(key, buf, tag_at));
	return (int)signed_len;
}

int fb_auth_verify(const uint8_t *buf, size_t len, const struct qp_siphash_key *key,
		   uint32_t *sender, uint64_t *seq)
{
	size_t mlen, body;
	uint64_t diff;

	if (len < FB_HDR_LEN || qp_get16(buf) != FB_MAGIC)
		return -EBADMSG;
	if (buf[FB_OFF_VERSION] == FB_VERSION)
		return -ENOKEY;
	mlen = qp_get16(buf + FB_OFF_LENGTH);
	if (buf[FB_OFF_VERSION] != FB_VERSION_SIGNED || buf[FB_OFF_AUTH_LEN] != FB_AUTH_TAG_LEN ||
	    mlen > len || mlen < FB_HDR_SIGNED_LEN + FB_AUTH_TAG_LEN)
		return -EBADMSG;
	body = mlen - FB_AUTH_TAG_LEN;
	diff = qp_siphash24(key, buf, body) ^ qp_get64(buf + body);
	if (diff)
		return -EACCES;
	if (sender)
		*sender = qp_get32(buf + FB_OFF_SENDER);
	if (seq)
		*seq = qp_get64(buf + FB_OFF_SEQ);
	return 0;
}

void fb_signer_init(struct fb_signer *s, const uint8_t key[QP_SIPHASH_KEY_BYTES],
		    uint32_t sender)
{
	qp_siphash_key_load(&s->key, key);
	s->sender = sender;
	s->seq = 0;
}

int fb_signer_sign(struct fb_signer *s, uint8_t *buf, size_t cap, size_t msg_len,
		   uint64_t clock_ns)
{
	uint64_t seq = clock_ns > s->seq ? clock_ns : s->seq + 1;
	int n = fb_auth_sign(buf, cap, msg_len, &s->key, s->sender, seq);

	if (n > 0)
		s->seq = seq;
	return n;
}
