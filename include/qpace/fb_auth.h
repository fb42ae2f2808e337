/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Authentication of feedback messages (qpace/feedback.h) with a shared key.
 *
 * For networks that are not private, every agent and switch of a deployment shares one
 * 128-bit key. A signed message is a version 2 message: its header names the signer
 * (sender, u32) and carries the signer's sequence number (seq, u64), and the message ends
 * with an 8-byte tag (auth_len = 8, counted in length). The tag is SipHash-2-4
 * (qpace/siphash.h) under the key of every byte before it, header included (so length,
 * type, flags, sender and seq are covered), stored big-endian like every other field.
 *
 * Sequence numbers. A signer's seq is max(previous + 1, its clock in ns): strictly
 * increasing, and near the signer's wall clock at the time it signed, so a signer that
 * restarts continues above everything it signed before, and a receiver can tell a message
 * signed before it started (a replay into a fresh receiver) from a new one. Receivers keep
 * a window per sender (qpace/fb_replay.h).
 *
 * What it gives: a sender without the key cannot forge or alter a message, nor replay one
 * that a receiver has accepted or that was signed before the receiver started. What it
 * does not: confidentiality (nothing is encrypted), and no protection of the data path.
 */
#ifndef QPACE_FB_AUTH_H
#define QPACE_FB_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "qpace/feedback.h"
#include "qpace/siphash.h"

#define FB_AUTH_TAG_LEN 8
/* How much longer signing makes a message: the signed header's 12 bytes and the tag. */
#define FB_AUTH_OVERHEAD (FB_HDR_SIGNED_LEN - FB_HDR_LEN + FB_AUTH_TAG_LEN)

/* Sign the unsigned (version 1) message of @msg_len bytes at @buf, as fb_encode wrote it,
 * in place: the body moves 12 bytes on, the header becomes version 2 with @sender and
 * @seq, the tag is appended. Returns the new length (@msg_len + FB_AUTH_OVERHEAD), or
 * -EMSGSIZE when @cap cannot hold it or the length field would overflow, -EINVAL when the
 * message is not an unsigned feedback message of exactly @msg_len bytes. */
int fb_auth_sign(uint8_t *buf, size_t cap, size_t msg_len, const struct qp_siphash_key *key,
		 uint32_t sender, uint64_t seq);

/* Check the message at the start of @buf (@len bytes received). 0 when it is signed and
 * its tag matches, with its signer and sequence in *@sender and *@seq (either may be
 * NULL); -ENOKEY when it is unsigned (version 1), -EBADMSG when its header is malformed
 * or its tag has another length, -EACCES when the tag does not match. Never reads past
 * @len; compares in constant time. */
int fb_auth_verify(const uint8_t *buf, size_t len, const struct qp_siphash_key *key,
		   uint32_t *sender, uint64_t *seq);

/* A signer: the key, who it signs as, and the last sequence number it used. */
struct fb_signer {
	struct qp_siphash_key key;
	uint32_t sender;
	uint64_t seq;
};

void fb_signer_init(struct fb_signer *s, const uint8_t key[QP_SIPHASH_KEY_BYTES],
		    uint32_t sender);
/* fb_auth_sign with the next sequence number: max(last + 1, @clock_ns). */
int fb_signer_sign(struct fb_signer *s, uint8_t *buf, size_t cap, size_t msg_len,
		   uint64_t clock_ns);

#endif
