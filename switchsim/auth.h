/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch's side of signed feedback (qpace/fb_auth.h). With a key, every telemetry
 * message a switch sends (INT reports, notices, levels) is signed: the switch's sender id
 * and a sequence from the wall clock; and the only messages it takes, level
 * acknowledgements, must be signed, with a tag that matches and a sequence new to the
 * acknowledging agent's replay window (qpace/fb_replay.h). Without a key nothing is
 * signed and acknowledgements are taken as they come, as before. */
#ifndef SW_AUTH_H
#define SW_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/fb_auth.h"
#include "qpace/fb_replay.h"

#define SW_AUTH_SENDERS 256u    /* agents whose acknowledgements' windows are kept */

struct sw_auth {
	bool on;
	struct fb_signer signer;
	struct fb_replay replay;
	qp_time_ns clock_offset_ns;   /* model time + this = the sequences' clock */
	uint64_t signed_msgs;         /* telemetry messages signed */
	uint64_t acks_notag, acks_badtag, acks_replay, acks_future;   /* acks refused */
};

/* With @key (NULL: off), sign as @sender; @now + @clock_offset_ns is the wall clock.
 * 0, or -ENOMEM with a message. */
int sw_auth_init(struct sw_auth *a, const uint8_t *key, uint32_t sender, qp_time_ns now,
		 qp_time_ns clock_offset_ns, char *err, size_t errlen);
void sw_auth_fini(struct sw_auth *a);
/* Sign the unsigned message of @len bytes at @buf (room for @cap) at model time @now:
 * the new length, or -EMSGSIZE; @len unchanged when off. */
int sw_auth_sign(struct sw_auth *a, uint8_t *buf, size_t cap, size_t len, qp_time_ns now);
/* May the level acknowledgement at @buf (@len bytes) be taken at @now? 0, or the
 * refusal's errno (counted): -ENOKEY, -EACCES / -EBADMSG, -EALREADY / -ESTALE, -ERANGE. */
int sw_auth_take(struct sw_auth *a, const uint8_t *buf, size_t len, qp_time_ns now);

#endif
