/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The per-host rate table in shared memory (layout and rules in qpace/ratetable.h).
 *
 * Seqlock, as Boehm describes it for C11 ("Can seqlocks get along with programming
 * language memory models?", MSPC 2012):
 *   writer: seq = s+1 (relaxed); release fence; fields (relaxed); seq = s+2 (release)
 *   reader: s1 = seq (acquire); fields (relaxed); acquire fence; s2 = seq (relaxed);
 *           consistent when s1 == s2 and s1 is even
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/ratetable.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free to be shared");

struct qp_ratetable {
	void *map;
	size_t map_bytes;
	struct qp_rate_hdr *hdr;
	struct qp_rate_slot *slots;
	uint32_t nslots;           /* our own copy, validated against map_bytes */
	bool writable;
	char name[128];
};

size_t qp_ratetable_bytes(uint32_t nslots)
{
	return sizeof(struct qp_rate_hdr) + (size_t)nslots * sizeof(struct qp_rate_slot);
}

/* "/name" (one leading slash, no other) is a POSIX shm object; anything else a file. */
static bool is_shm_name(const char *where)
{
	return where[0] == '/' && where[1] && !strchr(where + 1, '/');
}

/* Messages start "rate table NAME: " (no NAME for an anonymous buffer). */
static int rt_validate(const void *map, size_t mapped, uint32_t *nslots, const char *name,
		       char *err, size_t errlen)
{
	const char *sp = *name ? " " : "";
	const struct qp_rate_hdr *h = map;
	uint32_t magic, n;

	if (mapped < sizeof(*h))
		return qp_errmsg(-EBADMSG, err, errlen,
			       "rate table%s%s: %zu bytes, smaller than its %zu-byte header",
			       sp, name, mapped, sizeof(*h));
	magic = atomic_load_explicit(&h->magic, memory_order_acquire);
	if (magic != QP_RATETABLE_MAGIC)
		return qp_errmsg(-EBADMSG, err, errlen,
			       "rate table%s%s: magic 0x%08x, expected 0x%08x (\"QPRT\")%s",
			       sp, name, magic, QP_RATETABLE_MAGIC,
			       magic ? "" : "; not initialised yet?");
	if (h->version != QP_RATETABLE_VERSION)
		return qp_errmsg(-EPROTO, err, errlen,
			       "rate table%s%s: version %u, this build reads version %u",
			       sp, name, h->version, QP_RATETABLE_VERSION);
	if (h->hdr_bytes != sizeof(struct qp_rate_hdr) ||
	    h->slot_bytes != sizeof(struct qp_rate_slot))
		return qp_errmsg(-EBADMSG, err, errlen,
			       "rate table%s%s: header %u / slot %u bytes, this build uses %zu / %zu",
			       sp, name, h->hdr_bytes, h->slot_bytes,
			       sizeof(struct qp_rate_hdr), sizeof(struct qp_rate_slot));
	n = h->nslots;
	if (n == 0 || n > QP_RATETABLE_MAX_SLOTS)
		return qp_errmsg(-EBADMSG, err, errlen, "rate table%s%s: %u slots, accepted 1..%u",
			       sp, name, n, QP_RATETABLE_MAX_SLOTS);
	if (qp_ratetable_bytes(n) > mapped)
		return qp_errmsg(-EBADMSG, err, errlen,
			       "rate table%s%s: %u slots need %zu bytes, only %zu present (truncated)",
			       sp, name, n, qp_ratetable_bytes(n), mapped);
	*nslots = n;
	return 0;
}

int qp_ratetable_validate(const void *map, size_t mapped, uint32_t *nslots,
			  char *err, size_t errlen)
{
	return rt_validate(map, mapped, nslots, "", err, errlen);
}

static struct qp_ratetable *rt_wrap(void *map, size_t bytes, uint32_t nslots, bool writable,
				    const char *name)
{
	struct qp_ratetable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->map = map;
	t->map_bytes = bytes;
	t->hdr = map;
	t->slots = (struct qp_rate_slot *)((char *)map + sizeof(struct qp_rate_hdr));
	t->nslots = nslots;
	t->writable = writable;
	snprintf(t->name, sizeof(t->name), "%s", name);
	return t;
}

void qp_ratetable_close(struct qp_ratetable *t)
{
	if (!t)
		return;
	munmap(t->map, t->map_bytes);
	free(t);
}

uint32_t qp_ratetable_nslots(const struct qp_ratetable *t)
{
	return t->nslots;
}

const char *qp_ratetable_name(const struct qp_ratetable *t)
{
	return t->name;
}

/* ---- writer ---- */

static void rt_format(void *map, uint32_t nslots)
{
	struct qp_rate_hdr *h = map;
	struct qp_rate_slot *slots = (struct qp_rate_slot *)((char *)map + sizeof(*h));
	uint64_t epoch = 0;

	memset(map, 0, qp_ratetable_bytes(nslots));
	if (getrandom(&epoch, sizeof(epoch), GRND_NONBLOCK) != (ssize_t)sizeof(epoch))
		epoch = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)map;
	h->version = QP_RATETABLE_VERSION;
	h->hdr_bytes = sizeof(struct qp_rate_hdr);
	h->slot_bytes = sizeof(struct qp_rate_slot);
	h->nslots = nslots;
	h->epoch = epoch;
	atomic_store_explicit(&h->writer_pid, (uint32_t)getpid(), memory_order_relaxed);
	for (uint32_t i = 0; i < nslots; i++)
		atomic_store_explicit(&slots[i].qpn, QP_RATE_QPN_FREE, memory_order_relaxed);
	/* Last: a reader that sees the magic sees everything above. */
	atomic_store_explicit(&h->magic, QP_RATETABLE_MAGIC, memory_order_release);
}

static int check_nslots(uint32_t *nslots, char *err, size_t errlen)
{
	if (*nslots == 0)
		*nslots = QP_RATETABLE_DEF_SLOTS;
	if (*nslots > QP_RATETABLE_MAX_SLOTS)
		return qp_errmsg(-EINVAL, err, errlen, "rate table: %u slots, accepted 1..%u",
			       *nslots, QP_RATETABLE_MAX_SLOTS);
	return 0;
}

int qp_ratetable_create(const char *where, uint32_t nslots, struct qp_ratetable **out,
			char *err, size_t errlen)
{
	char tmp[160];
	bool shm;
	size_t bytes;
	void *map;
	int fd, rc = check_nslots(&nslots, err, errlen);

	if (rc)
		return rc;
	where = where ? where : QP_RATETABLE_DEFAULT;
	shm = is_shm_name(where);
	bytes = qp_ratetable_bytes(nslots);
	/* Never shrink a segment readers may have mapped: make a new one and swap the name. */
	if (shm) {
		if (shm_unlink(where) < 0 && errno != ENOENT)
			return qp_errmsg(-errno, err, errlen, "rate table %s: shm_unlink: %s", where,
				       strerror(errno));
		fd = shm_open(where, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	} else {
		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", where, (long)getpid());
		fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return qp_errmsg(-errno, err, errlen, "rate table %s: %s: %s", where,
			       shm ? "shm_open" : "open", strerror(errno));
	if (ftruncate(fd, (off_t)bytes) < 0) {
		rc = qp_errmsg(-errno, err, errlen, "rate table %s: ftruncate %zu: %s", where,
			     bytes, strerror(errno));
		goto fail;
	}
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = qp_errmsg(-errno, err, errlen, "rate table %s: mmap: %s", where, strerror(errno));
		goto fail;
	}
	rt_format(map, nslots);
	if (!shm && rename(tmp, where) < 0) {
		rc = qp_errmsg(-errno, err, errlen, "rate table %s: rename: %s", where,
			     strerror(errno));
		munmap(map, bytes);
		goto fail;
	}
	close(fd);
	*out = rt_wrap(map, bytes, nslots, true, where);
	if (!*out) {
		munmap(map, bytes);
		return qp_errmsg(-ENOMEM, err, errlen, "rate table %s: out of memory", where);
	}
	return 0;
fail:
	close(fd);
	if (shm)
		shm_unlink(where);
	else
		unlink(tmp);
	return rc;
}

int qp_ratetable_create_mem(uint32_t nslots, struct qp_ratetable **out, char *err,
			    size_t errlen)
{
	size_t bytes;
	void *map;
	int rc = check_nslots(&nslots, err, errlen);

	if (rc)
		return rc;
	bytes = qp_ratetable_bytes(nslots);
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return qp_errmsg(-errno, err, errlen, "rate table: mmap %zu bytes: %s", bytes,
			       strerror(errno));
	rt_format(map, nslots);
	*out = rt_wrap(map, bytes, nslots, true, "");
	if (!*out) {
		munmap(map, bytes);
		return qp_errmsg(-ENOMEM, err, errlen, "rate table: out of memory");
	}
	return 0;
}

int qp_ratetable_unlink(const char *where)
{
	where = where ? where : QP_RATETABLE_DEFAULT;
	if ((is_shm_name(where) ? shm_unlink(where) : unlink(where)) < 0)
		return -errno;
	return 0;
}

static void slot_write_begin(struct qp_rate_slot *s)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void slot_write_end(struct qp_rate_slot *s)
{
	uint32_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, seq + 1, memory_order_release);
}

#define LOAD(field) atomic_load_explicit(&(field), memory_order_relaxed)
#define STORE(field, v) atomic_store_explicit(&(field), (v), memory_order_relaxed)

static struct qp_rate_slot *writer_slot(struct qp_ratetable *t, uint32_t slot)
{
	if (!t->writable || slot >= t->nslots)
		return NULL;
	return &t->slots[slot];
}

int qp_ratetable_assign(struct qp_ratetable *t, uint32_t qpn)
{
	uint32_t i, pick = t->nslots;
	struct qp_rate_slot *s;

	if (!t->writable || qpn > QP_RATE_QPN_MAX)
		return -EINVAL;
	for (i = 0; i < t->nslots; i++) {
		uint32_t q = LOAD(t->slots[i].qpn);

		if (q == qpn) {
			pick = i;
			break;
		}
		if (q == QP_RATE_QPN_FREE && pick == t->nslots)
			pick = i;
	}
	if (pick == t->nslots)
		return -ENOSPC;
	s = &t->slots[pick];
	slot_write_begin(s);
	STORE(s->qpn, qpn);
	STORE(s->gen, LOAD(s->gen) + 1);
	STORE(s->rate_bps, 0);
	STORE(s->cap_bytes, 0);
	STORE(s->credit_bytes, 0);
	STORE(s->flags, 0);
	slot_write_end(s);
	return (int)pick;
}

int qp_ratetable_release(struct qp_ratetable *t, uint32_t slot)
{
	struct qp_rate_slot *s = writer_slot(t, slot);

	if (!s)
		return -EINVAL;
	slot_write_begin(s);
	STORE(s->qpn, QP_RATE_QPN_FREE);
	STORE(s->rate_bps, 0);
	STORE(s->cap_bytes, 0);
	STORE(s->credit_bytes, 0);
	STORE(s->flags, 0);
	slot_write_end(s);
	return 0;
}

int qp_ratetable_set(struct qp_ratetable *t, uint32_t slot, qp_rate_bps rate_bps,
		     uint64_t cap_bytes, uint32_t flags, qp_time_ns now)
{
	struct qp_rate_slot *s = writer_slot(t, slot);

	if (!s || LOAD(s->qpn) == QP_RATE_QPN_FREE)
		return -EINVAL;
	slot_write_begin(s);
	STORE(s->rate_bps, rate_bps);
	STORE(s->cap_bytes, cap_bytes);
	STORE(s->flags, flags);
	STORE(s->updated_ns, now);
	slot_write_end(s);
	return 0;
}

int qp_ratetable_grant(struct qp_ratetable *t, uint32_t slot, uint64_t bytes, qp_time_ns now)
{
	struct qp_rate_slot *s = writer_slot(t, slot);

	if (!s || LOAD(s->qpn) == QP_RATE_QPN_FREE)
		return -EINVAL;
	slot_write_begin(s);
	STORE(s->credit_bytes, LOAD(s->credit_bytes) + bytes);
	STORE(s->updated_ns, now);
	slot_write_end(s);
	return 0;
}

void qp_ratetable_heartbeat(struct qp_ratetable *t, qp_time_ns now)
{
	if (t->writable)
		atomic_store_explicit(&t->hdr->heartbeat_ns, now, memory_order_release);
}

int qp_ratetable_set_fallback(struct qp_ratetable *t, qp_time_ns hold_ns,
			      uint32_t safe_permille)
{
	uint64_t ms = hold_ns / QP_NS_PER_MS;

	if (!t->writable || ms > QP_RATETABLE_FB_MAX_HOLD_MS || hold_ns % QP_NS_PER_MS ||
	    safe_permille > QP_RATETABLE_FB_MAX_PERMILLE)
		return -EINVAL;
	atomic_store_explicit(&t->hdr->fb_hold_ms, (uint32_t)ms, memory_order_relaxed);
	atomic_store_explicit(&t->hdr->fb_safe_permille, safe_permille, memory_order_relaxed);
	return 0;
}

/* ---- readers ---- */

int qp_ratetable_open(const char *where, struct qp_ratetable **out, char *err,
		      size_t errlen)
{
	struct stat st;
	size_t bytes;
	uint32_t nslots;
	void *map;
	int fd, rc;

	where = where ? where : QP_RATETABLE_DEFAULT;
	fd = is_shm_name(where) ? shm_open(where, O_RDONLY | O_CLOEXEC, 0)
				: open(where, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return qp_errmsg(rc, err, errlen, "rate table %s: %s%s", where, strerror(-rc),
			       rc == -ENOENT ? " (no agent running?)" : "");
	}
	if (fstat(fd, &st) < 0) {
		rc = qp_errmsg(-errno, err, errlen, "rate table %s: fstat: %s", where,
			     strerror(errno));
		close(fd);
		return rc;
	}
	/* Map what is there, never more than the largest valid table. */
	bytes = (size_t)st.st_size;
	if (bytes > qp_ratetable_bytes(QP_RATETABLE_MAX_SLOTS))
		bytes = qp_ratetable_bytes(QP_RATETABLE_MAX_SLOTS);
	if (bytes < sizeof(struct qp_rate_hdr)) {
		close(fd);
		return qp_errmsg(-EBADMSG, err, errlen,
			       "rate table %s: %zu bytes, smaller than its %zu-byte header",
			       where, bytes, sizeof(struct qp_rate_hdr));
	}
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	rc = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc)
		return qp_errmsg(rc, err, errlen, "rate table %s: mmap: %s", where, strerror(-rc));
	rc = rt_validate(map, bytes, &nslots, where, err, errlen);
	if (rc == 0 && !(*out = rt_wrap(map, bytes, nslots, false, where)))
		rc = qp_errmsg(-ENOMEM, err, errlen, "rate table %s: out of memory", where);
	if (rc)
		munmap(map, bytes);
	return rc;
}

qp_time_ns qp_ratetable_heartbeat_ns(const struct qp_ratetable *t)
{
	return atomic_load_explicit(&t->hdr->heartbeat_ns, memory_order_acquire);
}

void qp_ratetable_fallback(const struct qp_ratetable *t, qp_time_ns *hold_ns,
			   uint32_t *safe_permille)
{
	/* A foreign writer's values are clamped to the ranges the writer side enforces. */
	uint32_t ms = atomic_load_explicit(&t->hdr->fb_hold_ms, memory_order_relaxed);
	uint32_t pm = atomic_load_explicit(&t->hdr->fb_safe_permille, memory_order_relaxed);

	*hold_ns = (qp_time_ns)(ms < QP_RATETABLE_FB_MAX_HOLD_MS ? ms : QP_RATETABLE_FB_MAX_HOLD_MS)
		   * QP_NS_PER_MS;
	*safe_permille = pm < QP_RATETABLE_FB_MAX_PERMILLE ? pm : QP_RATETABLE_FB_MAX_PERMILLE;
}

uint64_t qp_ratetable_epoch(const struct qp_ratetable *t)
{
	return t->hdr->epoch;
}

int qp_ratetable_read(const struct qp_ratetable *t, uint32_t slot, struct qp_rate_entry *out)
{
	struct qp_rate_slot *s;
	struct qp_rate_entry e;

	if (slot >= t->nslots)
		return -EINVAL;
	s = &t->slots[slot];
	for (unsigned i = 0; i < QP_RATETABLE_READ_TRIES; i++) {
		uint32_t s1 = atomic_load_explicit(&s->seq, memory_order_acquire), s2;

		e.qpn = LOAD(s->qpn);
		e.flags = LOAD(s->flags);
		e.gen = LOAD(s->gen);
		e.rate_bps = LOAD(s->rate_bps);
		e.cap_bytes = LOAD(s->cap_bytes);
		e.credit_bytes = LOAD(s->credit_bytes);
		e.updated_ns = LOAD(s->updated_ns);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (s1 == s2 && !(s1 & 1)) {
			e.seq = s1;
			*out = e;
			return 0;
		}
	}
	return -EAGAIN;
}

uint32_t qp_ratetable_seq(const struct qp_ratetable *t, uint32_t slot)
{
	if (slot >= t->nslots)
		return 1;
	return atomic_load_explicit(&t->slots[slot].seq, memory_order_acquire);
}

int qp_ratetable_lookup(const struct qp_ratetable *t, uint32_t qpn, uint32_t *hint,
			struct qp_rate_entry *out)
{
	int busy = 0;

	if (*hint < t->nslots && qp_ratetable_read(t, *hint, out) == 0 && out->qpn == qpn)
		return 0;
	for (uint32_t i = 0; i < t->nslots; i++) {
		int rc;

		if (LOAD(t->slots[i].qpn) != qpn)
			continue;
		rc = qp_ratetable_read(t, i, out);
		if (rc == 0 && out->qpn == qpn) {
			*hint = i;
			return 0;
		}
		busy |= rc == -EAGAIN;
	}
	return busy ? -EAGAIN : -ENOENT;
}
