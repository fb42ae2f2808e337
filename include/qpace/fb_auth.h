/* Authentication of feedback messages (qpace/feedback.h) with a shared key.
 *
 * For networks that are not private, every agent and switch of a deployment shares one
 * 128-bit key. A signed message carries an 8-byte tag at its end and says so in its header:
 * auth_len = 8, and length counts the tag. The tag is SipHash-2-4 (qpace/siphash.h) under
 * the key of every byte before it, header included (so length, type and flags are
 * covered), stored big-endian like every other field.
 *
 * What it gives: a sender without the key cannot forge or alter a message. What it does
 * not: replay protection (a captured message can be sent again; the messages carry PSNs
 * and sequence numbers, not nonces) and confidentiality.
 */
#ifndef QPACE_FB_AUTH_H
#define QPACE_FB_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/siphash.h"

#define FB_AUTH_TAG_LEN 8

/* Sign the unsigned message of @msg_len bytes at @buf (as fb_encode wrote it) in place:
 * header updated, tag appended. Returns the new length, or -EMSGSIZE when @cap cannot hold
 * the tag or the length field would overflow, -EINVAL when the message is not an unsigned
 * feedback message of exactly @msg_len bytes. */
int fb_auth_sign(uint8_t *buf, size_t cap, size_t msg_len, const struct qp_siphash_key *key);

/* Check the tag of the message at the start of @buf (@len bytes received). 0 when the
 * message is signed and its tag matches; -ENOKEY when it carries no tag (auth_len 0),
 * -EBADMSG when its header is malformed or the tag has another length, -EACCES when the
 * tag does not match. Never reads past @len; compares in constant time. */
int fb_auth_verify(const uint8_t *buf, size_t len, const struct qp_siphash_key *key);

#endif
