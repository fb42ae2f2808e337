/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The queue's memory follows what it holds (switchsim/queue.c): its store and entries
 * start small and double, copying what is held, up to the limits its buffer sets. Two
 * things must not change with that: every byte of every frame and its metadata comes out
 * as it went in, also a frame the caller still points at while the rings grow under it
 * (ASan in the SAN=1 build would see the old ring freed too soon); and every verdict is
 * the one a store and an entry ring of the full size take, which a model of those rings
 * here (the wrap rule: a record that does not fit before the end starts again at 0, the
 * bytes it skipped held until it leaves) decides beside the queue, frame by frame. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/rng.h"
#include "../../switchsim/queue.h"

#define BUFFER (64u * 1024)
#define NMAX 4096

/* The limit rings of a queue with BUFFER, no lossless allowance and no delay: a store of
 * 2 x BUFFER + 64 KiB bytes and next_pow2(BUFFER / 60 + 64) entries. */
struct model {
	uint64_t cap, used, wpos, ents;
	uint32_t span[NMAX];
	unsigned head, n;
};

static bool model_enq(struct model *m, uint32_t bytes)
{
	uint64_t need = (bytes + 7u) & ~7u, skip = 0;
	bool wrap = m->wpos + need > m->cap;

	if (m->n >= m->ents)
		return false;
	if (wrap)
		skip = m->cap - m->wpos;
	if (m->used + skip + need > m->cap)
		return false;
	m->wpos = (wrap ? 0 : m->wpos) + need;
	m->used += skip + need;
	m->span[(m->head + m->n++) % NMAX] = (uint32_t)(skip + need);
	return true;
}

static void model_pop(struct model *m)
{
	m->used -= m->span[m->head];
	m->head = (m->head + 1) % NMAX;
	if (!--m->n)
		m->wpos = 0;
}

/* Frame @seq: @len bytes, each a function of seq and place; its metadata likewise. */
static void fill(uint8_t *b, unsigned len, uint64_t seq, unsigned salt)
{
	for (unsigned k = 0; k < len; k++)
		b[k] = (uint8_t)(seq * 131 + k * 7 + salt);
}

static void check(const uint8_t *b, unsigned len, uint64_t seq, unsigned salt)
{
	for (unsigned k = 0; k < len; k++)
		if (b[k] != (uint8_t)(seq * 131 + k * 7 + salt))
			fail_msg("frame %llu byte %u: %u, expected %u", (unsigned long long)seq, k,
				 b[k], (uint8_t)(seq * 131 + k * 7 + salt));
}

struct held {
	uint64_t seq;
	uint16_t len, meta;
};

static void test_grow_intact_and_same_verdicts(void **state)
{
	struct sw_queue_params p = { .rate_bps = QP_GBPS, .buffer_bytes = BUFFER,
				     .flow_slots = 64, .seed = 1 };
	static struct model m;
	static struct held h[NMAX];
	static uint8_t fr[2048], meta[64];
	struct sw_enq_out out;
	char err[200];
	struct sw_queue *q = sw_queue_create(&p, err, sizeof(err));
	struct qp_rng rng;
	uint64_t seq = 0, drops = 0, stored = 0;
	unsigned hh = 0, hn = 0, peak = 0;
	(void)state;

	assert_non_null(q);
	qp_rng_seed(&rng, 42);
	memset(&m, 0, sizeof(m));
	m.cap = 2ull * BUFFER + 65536;
	m.ents = 2048;   /* next_pow2(65536 / 60 + 64) */
	for (unsigned round = 0; round < 400; round++) {
		uint64_t r = qp_rng_next(&rng);
		/* Bursts that fill the store or the entries (small frames), then drains. */
		unsigned burst = (unsigned)(r % 4 == 0 ? 3000 : r % 40);
		unsigned small = (r >> 8) % 3 == 0;
		const uint8_t *pinned = NULL;
		struct held pin = { 0 };

		if (hn) {   /* the oldest frame, pointed at across the burst */
			pinned = sw_queue_frame(q, sw_queue_peek(q, 0));
			pin = h[hh];
		}
		for (unsigned i = 0; i < burst; i++) {
			uint64_t x = qp_rng_next(&rng);
			uint16_t len = small ? 60 : (uint16_t)(60 + x % 1900);
			uint16_t ml = small ? 0 : (uint16_t)((x >> 16) % 49);
			struct sw_enq in = { .frame = fr, .frame_len = len, .meta = meta,
					     .meta_len = ml, .lossless = true };
			bool want = model_enq(&m, ((ml + 7u) & ~7u) + len);

			fill(fr, len, seq, 0);
			fill(meta, ml, seq, 99);
			assert_int_equal(sw_queue_enqueue(q, 0, &in, &out) == 0, want);
			if (want) {
				h[(hh + hn++) % NMAX] = (struct held){ seq, len, ml };
				stored++;
			} else {
				drops++;
			}
			seq++;
		}
		peak = hn > peak ? hn : peak;
		if (pinned)
			check(pinned, pin.len, pin.seq, 0);
		for (unsigned n = (unsigned)((r >> 20) % (hn + 1)); n; n--) {
			const struct sw_qent *e = sw_queue_peek(q, 0);
			const struct held *o = &h[hh];

			assert_non_null(e);
			assert_int_equal(e->frame_len, o->len);
			check(sw_queue_frame(q, e), o->len, o->seq, 0);
			if (o->meta)
				check(sw_queue_meta(q, e), o->meta, o->seq, 99);
			sw_queue_pop(q, 1);
			model_pop(&m);
			hh = (hh + 1) % NMAX;
			hn--;
		}
		assert_int_equal(sw_queue_count(q), hn);
	}
	print_message("%llu frames stored, %llu refused as the full-size rings refuse them, "
		      "at most %u held\n", (unsigned long long)stored, (unsigned long long)drops,
		      peak);
	assert_int_equal(sw_queue_stats(q)->drop_store, drops);
	assert_true(drops > 100 && stored > 10000);
	assert_true(peak > 1000);   /* the entries grew from 64 to the limit */
	sw_queue_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_intact_and_same_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
