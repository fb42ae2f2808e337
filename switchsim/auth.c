/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Signing telemetry and checking level acknowledgements (see auth.h). */
#include <errno.h>

#include "qpace/errmsg.h"
#include "auth.h"

int sw_auth_init(struct sw_auth *a, const uint8_t *key, uint32_t sender, qp_time_ns now,
		 qp_time_ns clock_offset_ns, char *err, size_t errlen)
{
	*a = (struct sw_auth){ .clock_offset_ns = clock_offset_ns };
	if (!key)
		return 0;
	if (fb_replay_init(&a->replay, SW_AUTH_SENDERS, now + clock_offset_ns))
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory for replay windows");
	fb_signer_init(&a->signer, key, sender);
	a->on = true;
	return 0;
}

void sw_auth_fini(struct sw_auth *a)
{
	fb_replay_fini(&a->replay);
	a->on = false;
}

int sw_auth_sign(struct sw_auth *a, uint8_t *buf, size_t cap, size_t len, qp_time_ns now)
{
	int n;

	if (!a->on)
		return (int)len;
	n = fb_signer_sign(&a->signer, buf, cap, len, now + a->clock_offset_ns);
	if (n > 0)
		a->signed_msgs++;
	return n;
}

int sw_auth_take(struct sw_auth *a, const uint8_t *buf, size_t len, qp_time_ns now)
{
	uint64_t seq;
	uint32_t sender;
	int rc;

	if (!a->on)
		return 0;
	rc = fb_auth_verify(buf, len, &a->signer.key, &sender, &seq);
	if (!rc)
		rc = fb_replay_check(&a->replay, sender, seq, now + a->clock_offset_ns);
	a->acks_notag += rc == -ENOKEY;
	a->acks_badtag += rc == -EACCES || rc == -EBADMSG;
	a->acks_replay += rc == -EALREADY || rc == -ESTALE;
	a->acks_future += rc == -ERANGE;
	return rc;
}
