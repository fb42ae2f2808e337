/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: signed feedback from outside (qpace/fb_auth.h, qpace/fb_replay.h).
 *   - the input itself goes to fb_auth_verify and, as the agent does, to the replay window
 *     with whatever signer and sequence a valid tag would carry: no crash, no read past it
 *   - then the input drives a stream of messages signed here (sender, sequence steps
 *     forward and back, repeats, the receiver's clock) through verify and a small window
 *     table (so senders are evicted): nothing is ever accepted twice, every window stays
 *     sorted within its floor, and a sequence too far ahead is never taken */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/fb_auth.h"
#include "qpace/fb_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 256
#define START 1000000000000ULL

static const uint8_t key[QP_SIPHASH_KEY_BYTES] = { 7, 7, 7 };

static void check_windows(const struct fb_replay *r)
{
	for (uint32_t i = 0; i < r->nsets * r->ways; i++) {
		const struct fb_replay_sender *s = &r->slots[i];
		uint64_t prev = 0;

		if (!s->used)
			continue;
		if (s->n == 0 || s->n > FB_REPLAY_WINDOW)
			abort();
		for (unsigned k = 0; k < s->n; k++) {
			uint64_t v = s->seen[(s->head + k) % FB_REPLAY_WINDOW];

			if (v < s->floor || (k && v <= prev))
				abort();
			prev = v;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t acc_seq[MAX_OPS];
	static uint32_t acc_sender[MAX_OPS];
	struct qp_siphash_key k;
	struct fb_replay r;
	uint64_t seq = 0, clock = START + 5000, last[8] = { 0 };
	uint32_t sender = 0;
	unsigned nacc = 0;

	qp_siphash_key_load(&k, key);
	if (fb_replay_init(&r, 4, START))
		abort();
	if (fb_auth_verify(data, size, &k, &sender, &seq) == 0)
		(void)fb_replay_check(&r, sender, seq, clock);
	for (size_t i = 0; i + 4 <= size && i / 4 < MAX_OPS; i += 4) {
		struct fb_msg m = { .type = FB_T_CREDIT };
		uint8_t buf[FB_MAX_LEN];
		unsigned s = data[i] & 7;
		int16_t step = (int16_t)(data[i + 1] << 8 | data[i + 2]);
		int n, rc;

		clock += data[i + 3];
		if (data[i] & 0x80)          /* far ahead: beyond the tolerance */
			seq = clock + FB_REPLAY_AHEAD_NS + 1 + (uint64_t)(uint16_t)step;
		else if (data[i] & 0x40)     /* signed now, as a signer would */
			seq = clock;
		else                         /* a step from this sender's last, either way */
			seq = (uint64_t)((int64_t)(last[s] ? last[s] : START) + step);
		last[s] = seq;
		m.u.credit.seq = (uint32_t)i;
		n = fb_encode(buf, sizeof(buf), &m);
		n = fb_auth_sign(buf, sizeof(buf), (size_t)n, &k, s, seq);
		if (n < 0 || fb_auth_verify(buf, (size_t)n, &k, &sender, &seq) || sender != s)
			abort();
		rc = fb_replay_check(&r, sender, seq, clock);
		if (rc == 0) {
			if (seq > clock + FB_REPLAY_AHEAD_NS)
				abort();
			for (unsigned a = 0; a < nacc; a++)
				if (acc_sender[a] == sender && acc_seq[a] == seq)
					abort();   /* accepted twice */
			acc_sender[nacc] = sender;
			acc_seq[nacc++] = seq;
		}
		check_windows(&r);
	}
	fb_replay_fini(&r);
	return 0;
}
