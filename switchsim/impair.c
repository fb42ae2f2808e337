/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Impairments of the link out of a port (see impair.h): the per-frame decisions and the
 * two delay lines. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/bytes.h"
#include "qpace/errmsg.h"
#include "qpace/frame.h"
#include "impair.h"
#include "red.h"

#define FRAME_MIN 60               /* the queue model's smallest frame (queue.h) */
#define FRAME_MAX 9216             /* the largest a port accepts (sw.h) */
#define LINE_STORE_MAX (1ULL << 30)

/* Generators, one per kind. */
enum { G_LOSS, G_GE_MOVE, G_GE_LOSS, G_CORRUPT, G_DUP, G_JITTER, G_REORDER, G_COUNT };

/* A FIFO of held frames: entries in a ring, bytes (metadata, then the frame, 8-byte
 * aligned) in a ring store. Entries [head, taken) are on their way out (taken, not yet
 * released), [taken, tail) wait; leave times never decrease from head to tail. */
struct held {
	qp_time_ns leave_ns;
	uint32_t off, span;
	uint16_t len, meta_len;
	uint8_t copies;
};

struct line {
	struct held *ents;
	uint32_t nents;
	uint64_t head, taken, tail;
	uint8_t *store;
	uint32_t cap, used, wpos;
};

enum { L_JITTER, L_REORDER, L_COUNT };

struct sw_impair {
	struct sw_impair_params p;
	/* probabilities scaled to 2^32 */
	uint64_t th_loss, th_ge_p, th_ge_r, th_ge_bad, th_ge_good, th_corrupt, th_dup,
		th_reorder;
	struct sw_rng rng[G_COUNT];
	bool ge_bad;
	qp_time_ns fifo_ns;          /* leave time of the last frame through the jitter step */
	struct line line[L_COUNT];
	struct sw_impair_stats st;
};

bool sw_impair_on(const struct sw_impair_params *p)
{
	return p->loss > 0 || p->ge_p > 0 || p->corrupt > 0 || p->dup > 0 || p->jitter_ns ||
	       p->reorder > 0;
}

static bool prob_ok(double v)
{
	return isfinite(v) && v >= 0 && v <= 1;
}

int sw_impair_check(const struct sw_impair_params *p, char *err, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} probs[] = {
		{ "loss", offsetof(struct sw_impair_params, loss) },
		{ "ge P", offsetof(struct sw_impair_params, ge_p) },
		{ "ge R", offsetof(struct sw_impair_params, ge_r) },
		{ "ge H", offsetof(struct sw_impair_params, ge_bad) },
		{ "ge K", offsetof(struct sw_impair_params, ge_good) },
		{ "corrupt", offsetof(struct sw_impair_params, corrupt) },
		{ "dup", offsetof(struct sw_impair_params, dup) },
		{ "reorder", offsetof(struct sw_impair_params, reorder) },
	};

	for (size_t i = 0; i < sizeof(probs) / sizeof(probs[0]); i++) {
		double v = *(const double *)(const void *)((const char *)p + probs[i].off);
		if (!prob_ok(v))
			return qp_errmsg(-EINVAL, err, len, "impair %s %g%%: outside 0..100%%",
					 probs[i].name, v * 100);
	}
	if (p->ge_p > 0 && !(p->ge_r > 0))
		return qp_errmsg(-EINVAL, err, len, "impair ge R 0%%: must be above 0%% (the bad "
				 "state would never end)");
	if (p->jitter_ns > SW_IMPAIR_DELAY_MAX || p->reorder_ns > SW_IMPAIR_DELAY_MAX)
		return qp_errmsg(-EINVAL, err, len, "impair jitter %" PRIu64 " ns / reorder delay %"
				 PRIu64 " ns: each at most 1 s", p->jitter_ns, p->reorder_ns);
	if (p->reorder > 0 && !p->reorder_ns)
		return qp_errmsg(-EINVAL, err, len, "impair reorder delay 0: must be above 0 "
				 "(a frame held back by nothing passes nothing)");
	return 0;
}

static uint64_t prob32(double v)
{
	return (uint64_t)llround(v * 4294967296.0);
}

static bool draw(struct sw_impair *im, int g, uint64_t th)
{
	return (sw_rng_next(&im->rng[g]) >> 32) < th;
}

/* ---- delay lines ---- */

/* Room for every frame a port of @rate_bps sends within @hold_ns (frames are at least
 * FRAME_MIN bytes in the queue model, which spaces them at the link rate), each with up
 * to @meta_max bytes of metadata, plus a wrap's worth of slack. */
static int line_init(struct line *l, qp_rate_bps rate_bps, qp_time_ns hold_ns, size_t meta_max,
		     char *err, size_t len)
{
	uint64_t bytes = qp_bytes_in(rate_bps, hold_ns) + 2 * FRAME_MAX;
	uint64_t frames = bytes / FRAME_MIN + 64;
	uint64_t store = 2 * (bytes + frames * ((meta_max + 7) & ~(size_t)7) + 8 * frames);

	if (!hold_ns)
		return 0;
	if (store > LINE_STORE_MAX)
		return qp_errmsg(-EINVAL, err, len, "impair: a delay line for %" PRIu64
				 " ns at %" PRIu64 " b/s needs %" PRIu64 " bytes, above 1 GiB: "
				 "lower the jitter or reorder delay", hold_ns, rate_bps, store);
	l->nents = (uint32_t)frames;
	l->cap = (uint32_t)store;
	l->ents = calloc(l->nents, sizeof(*l->ents));
	l->store = malloc(l->cap);
	if (!l->ents || !l->store)
		return qp_errmsg(-ENOMEM, err, len, "impair: out of memory for a delay line");
	return 0;
}

static struct held *line_ent(const struct line *l, uint64_t i)
{
	return &l->ents[i % l->nents];
}

static bool line_waiting(const struct line *l)
{
	return l->taken < l->tail;
}

/* Copy a frame and its metadata in: false when the line is full (or absent). */
static bool line_push(struct line *l, const uint8_t *frame, uint16_t len, const void *meta,
		      uint16_t meta_len, uint8_t copies, qp_time_ns leave_ns)
{
	uint32_t mlen = meta ? (meta_len + 7u) & ~7u : 0, need = (mlen + len + 7u) & ~7u;
	uint32_t skip = 0, off;
	struct held *h;

	if (!l->store || l->tail - l->head >= l->nents)
		return false;
	if (l->wpos + need > l->cap)
		skip = l->cap - l->wpos;
	if ((uint64_t)l->used + skip + need > l->cap)
		return false;
	off = skip ? 0 : l->wpos;
	l->wpos = off + need;
	l->used += skip + need;
	h = line_ent(l, l->tail++);
	*h = (struct held){ .leave_ns = leave_ns, .off = off, .span = skip + need, .len = len,
			    .meta_len = meta ? meta_len : 0, .copies = copies };
	if (meta)
		memcpy(l->store + off, meta, meta_len);
	memcpy(l->store + off + mlen, frame, len);
	return true;
}

/* ---- per frame ---- */

/* Whether to corrupt, and where: a bit index uniform over the bytes after the Ethernet
 * header of an IPv4 frame, or -1 (other frames carry no checksum that could catch it). */
static int64_t corrupt_bit(struct sw_impair *im, const uint8_t *frame, uint16_t len)
{
	uint64_t pick;

	if (!im->th_corrupt || !draw(im, G_CORRUPT, im->th_corrupt))
		return -1;
	pick = sw_rng_next(&im->rng[G_CORRUPT]);
	if (len <= FRAME_ETH_HLEN || qp_get16(frame + 12) != FRAME_ETHERTYPE_IPV4)
		return -1;
	return (int64_t)(pick % ((uint64_t)(len - FRAME_ETH_HLEN) * 8));
}

/* Byte @at of @frame is one no receiver checks: the BTH's FECN/BECN/reserved byte of a
 * RoCEv2 frame (the ICRC masks it because switches may set those bits), or the payload of
 * a UDP datagram sent without a checksum. */
static bool unchecked_byte(const uint8_t *frame, uint16_t len, size_t at)
{
	struct frame_parsed p;

	if (frame_parse(&p, frame, len) < 0 || !(p.layers & FRAME_L_UDP))
		return false;
	if (p.layers & FRAME_L_ROCE)
		return at == (size_t)p.bth_off + 4u;
	return !p.udp.csum && at >= (size_t)p.udp_off + FRAME_UDP_HLEN &&
	       at < (size_t)p.udp_off + p.udp.len;
}

/* Random, then Gilbert-Elliott loss: true when the frame is lost. Every generator in use
 * draws whatever the outcome. */
static bool lost(struct sw_impair *im)
{
	bool rnd = im->th_loss && draw(im, G_LOSS, im->th_loss), ge = false;

	if (im->th_ge_p) {
		bool bad = im->ge_bad;
		ge = draw(im, G_GE_LOSS, bad ? im->th_ge_bad : im->th_ge_good);
		im->ge_bad = bad ? !draw(im, G_GE_MOVE, im->th_ge_r) :
				   draw(im, G_GE_MOVE, im->th_ge_p);
		im->st.impair_ge_bad += bad;
	}
	if (rnd)
		im->st.impair_loss++;
	else if (ge)
		im->st.impair_ge_loss++;
	return rnd || ge;
}

/* A frame goes out (now or from a delay line) in @copies, @corrupt or not. */
static void count_out(struct sw_impair *im, uint8_t copies, bool corrupt, bool unchecked)
{
	im->st.impair_dup += copies - 1u;
	im->st.impair_corrupt += corrupt ? copies : 0;
	im->st.impair_corrupt_unchecked += unchecked ? copies : 0;
}

unsigned sw_impair_frame(struct sw_impair *im, uint8_t *frame, uint16_t len, const void *meta,
			 uint16_t meta_len, qp_time_ns leave_ns)
{
	bool gone = lost(im);
	int64_t bit = corrupt_bit(im, frame, len);
	uint8_t copies = im->th_dup && draw(im, G_DUP, im->th_dup) ? 2 : 1;
	qp_time_ns j = im->p.jitter_ns ?
		sw_rng_next(&im->rng[G_JITTER]) % (im->p.jitter_ns + 1) : 0, t;
	bool reorder = im->th_reorder && draw(im, G_REORDER, im->th_reorder), unchecked = false;
	struct line *l;

	if (gone)
		return 0;
	if (bit >= 0) {
		size_t at = FRAME_ETH_HLEN + (size_t)bit / 8;
		unchecked = unchecked_byte(frame, len, at);
		frame[at] ^= (uint8_t)(1u << (bit % 8));
	}
	t = leave_ns + j > im->fifo_ns ? leave_ns + j : im->fifo_ns;
	im->fifo_ns = t;
	if (reorder) {
		t += im->p.reorder_ns;
		l = &im->line[L_REORDER];
	} else if (t > leave_ns || line_waiting(&im->line[L_JITTER])) {
		l = &im->line[L_JITTER];   /* behind what the jitter line holds: FIFO */
	} else {
		count_out(im, copies, bit >= 0, unchecked);
		return copies;
	}
	if (!line_push(l, frame, len, meta, meta_len, copies, t)) {
		im->st.impair_hold_drops++;
		return 0;
	}
	count_out(im, copies, bit >= 0, unchecked);
	if (reorder)
		im->st.impair_reorder++;
	else
		im->st.impair_jitter++;
	im->st.impair_delay_ns += t - leave_ns;
	return 0;
}

/* The line whose waiting frame leaves first (the jitter line on a tie: it holds the
 * frames that were ahead), or NULL. */
static const struct line *next_line(const struct sw_impair *im)
{
	const struct line *best = NULL;

	for (int i = 0; i < L_COUNT; i++) {
		const struct line *l = &im->line[i];
		if (line_waiting(l) &&
		    (!best || line_ent(l, l->taken)->leave_ns < line_ent(best, best->taken)->leave_ns))
			best = l;
	}
	return best;
}

qp_time_ns sw_impair_next_ns(const struct sw_impair *im)
{
	const struct line *l = next_line(im);

	return l ? line_ent(l, l->taken)->leave_ns : QP_TIME_NEVER;
}

bool sw_impair_take(struct sw_impair *im, struct sw_impair_out *o)
{
	struct line *l = (struct line *)next_line(im);
	const struct held *h;
	uint32_t mlen;

	if (!l)
		return false;
	h = line_ent(l, l->taken++);
	mlen = h->meta_len ? (h->meta_len + 7u) & ~7u : 0;
	*o = (struct sw_impair_out){ .frame = l->store + h->off + mlen, .len = h->len,
				     .meta = h->meta_len ? l->store + h->off : NULL,
				     .meta_len = h->meta_len, .copies = h->copies,
				     .leave_ns = h->leave_ns };
	return true;
}

void sw_impair_release(struct sw_impair *im)
{
	for (int i = 0; i < L_COUNT; i++) {
		struct line *l = &im->line[i];
		while (l->head < l->taken)
			l->used -= line_ent(l, l->head++)->span;
		if (l->head == l->tail)   /* empty: start at the front again */
			l->head = l->taken = l->tail = l->wpos = l->used = 0;
	}
}

const struct sw_impair_stats *sw_impair_stats(const struct sw_impair *im)
{
	return &im->st;
}

/* ---- life ---- */

struct sw_impair *sw_impair_create(const struct sw_impair_params *p, qp_rate_bps rate_bps,
				   size_t meta_max, char *err, size_t len)
{
	struct sw_impair *im;

	if (sw_impair_check(p, err, len))
		return NULL;
	im = calloc(1, sizeof(*im));
	if (!im) {
		qp_errmsg(-ENOMEM, err, len, "impair: out of memory");
		return NULL;
	}
	im->p = *p;
	im->th_loss = prob32(p->loss);
	if (p->ge_p > 0) {
		im->th_ge_p = prob32(p->ge_p);
		im->th_ge_r = prob32(p->ge_r);
		im->th_ge_bad = prob32(p->ge_bad);
		im->th_ge_good = prob32(p->ge_good);
	}
	im->th_corrupt = prob32(p->corrupt);
	im->th_dup = prob32(p->dup);
	im->th_reorder = prob32(p->reorder);
	for (int g = 0; g < G_COUNT; g++)   /* splitmix64 streams a golden-ratio step apart */
		im->rng[g].s = p->seed + (uint64_t)(g + 1) * 0x632be59bd9b4e019ULL;
	if (line_init(&im->line[L_JITTER], rate_bps, p->jitter_ns, meta_max, err, len) ||
	    line_init(&im->line[L_REORDER], rate_bps,
		      p->reorder > 0 ? p->jitter_ns + p->reorder_ns : 0, meta_max, err, len)) {
		sw_impair_destroy(im);
		return NULL;
	}
	return im;
}

void sw_impair_destroy(struct sw_impair *im)
{
	if (!im)
		return;
	for (int i = 0; i < L_COUNT; i++) {
		free(im->line[i].ents);
		free(im->line[i].store);
	}
	free(im);
}
