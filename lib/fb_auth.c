/* Feedback message tags (see qpace/fb_auth.h). The header offsets used here are the ones
 * qpace/feedback.h defines: length u16 at 4, auth_len u8 at 7. */
#include <errno.h>

#include "qpace/bytes.h"
#include "qpace/fb_auth.h"
#include "qpace/feedback.h"

#define FB_OFF_LENGTH 4
#define FB_OFF_AUTH_LEN 7

int fb_auth_sign(uint8_t *buf, size_t cap, size_t msg_len, const struct qp_siphash_key *key)
{
	size_t signed_len = msg_len + FB_AUTH_TAG_LEN;

	if (msg_len < FB_HDR_LEN || qp_get16(buf) != FB_MAGIC || buf[FB_OFF_AUTH_LEN] != 0 ||
	    qp_get16(buf + FB_OFF_LENGTH) != msg_len)
		return -EINVAL;
	if (signed_len > cap || signed_len > UINT16_MAX)
		return -EMSGSIZE;
	buf[FB_OFF_AUTH_LEN] = FB_AUTH_TAG_LEN;
	qp_put16(buf + FB_OFF_LENGTH, (uint16_t)signed_len);
	qp_put64(buf + msg_len, qp_siphash24(key, buf, msg_len));
	return (int)signed_len;
}

int fb_auth_verify(const uint8_t *buf, size_t len, const struct qp_siphash_key *key)
{
	size_t mlen, body;
	uint64_t diff;

	if (len < FB_HDR_LEN || qp_get16(buf) != FB_MAGIC)
		return -EBADMSG;
	mlen = qp_get16(buf + FB_OFF_LENGTH);
	if (buf[FB_OFF_AUTH_LEN] == 0)
		return -ENOKEY;
	if (buf[FB_OFF_AUTH_LEN] != FB_AUTH_TAG_LEN || mlen > len ||
	    mlen < FB_HDR_LEN + FB_AUTH_TAG_LEN)
		return -EBADMSG;
	body = mlen - FB_AUTH_TAG_LEN;
	diff = qp_siphash24(key, buf, body) ^ qp_get64(buf + body);
	return diff ? -EACCES : 0;
}
