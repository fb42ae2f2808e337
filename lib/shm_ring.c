/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The shared-memory rings of a shm port (qpace/shm_ring.h): the region, and the
 * producer's and consumer's halves of each ring. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/shm_ring.h"

#define SHM_HDR_BYTES 64u
#define SHM_CTL_OFF(d) (SHM_HDR_BYTES + (size_t)(d) * 192u)
#define SHM_SLOTS_OFF 4096u
#define SHM_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* The switch writes the header once, at create; a host writes only attaches and
 * detaches (one add at attach and one at close, so that the switch can tell a host came
 * before it has sent anything, and that it left), which the switch only reads. */
struct shm_hdr {
	uint32_t magic, version, nslots, slot_bytes;
	uint64_t bytes;
	uint32_t offer_ip;         /* an offered region: the udp port's address (network */
	uint16_t offer_port;       /* order), which a host's attach= must name; 0 otherwise */
	uint16_t zero;
	_Atomic uint32_t attaches, detaches;
};

/* Each index on a cache line of its own: the producer writes head, the consumer tail
 * and waiting, and neither should pull the other's line on every store. */
struct shm_ctl {
	alignas(64) _Atomic uint32_t head;
	alignas(64) _Atomic uint32_t tail;
	alignas(64) _Atomic uint32_t waiting;
};

struct shm_slot {
	_Atomic uint32_t len;
	uint32_t zero;
	_Atomic uint64_t ts_ns;
	uint8_t data[];
};

_Static_assert(sizeof(struct shm_ctl) == 192, "three cache lines");
_Static_assert(sizeof(struct shm_hdr) <= SHM_HDR_BYTES, "header fits its line");
_Static_assert(sizeof(struct shm_slot) == SHM_SLOT_HDR, "slot header");
_Static_assert(SHM_CTL_OFF(2) <= SHM_SLOTS_OFF, "controls fit before the slots");
_Static_assert(SHM_SLOT_BYTES % 64 == 0, "slots on cache lines");

size_t shm_region_bytes(uint32_t nslots)
{
	return SHM_SLOTS_OFF + 2 * (size_t)nslots * SHM_SLOT_BYTES;
}

static struct shm_slot *slot_at(const struct shm_ring *r, uint32_t i)
{
	return (struct shm_slot *)(void *)(r->slots + (size_t)(i & r->mask) * SHM_SLOT_BYTES);
}

static void ring_init(struct shm_ring *r, uint8_t *base, uint32_t nslots, int dir,
		      bool producer)
{
	struct shm_ctl *ctl = (struct shm_ctl *)(void *)(base + SHM_CTL_OFF(dir));

	*r = (struct shm_ring){ .ctl = ctl, .nslots = nslots, .mask = nslots - 1,
				.producer = producer,
				.slots = base + SHM_SLOTS_OFF +
					 (size_t)dir * nslots * SHM_SLOT_BYTES };
	/* Start where the region is (a host that attaches late, or again): the producer at
	 * head, the consumer at tail; shm_ring_slot and shm_ring_pop check the other's. */
	r->pos = r->published = atomic_load_explicit(producer ? &ctl->head : &ctl->tail,
						      memory_order_acquire);
	/* Nothing seen yet: the first shm_ring_slot loads tail, the first pop head. */
	r->seen = producer ? r->pos - nslots : r->pos;
}

void shm_region_over(struct shm_region *r, void *mem, uint32_t nslots, bool creator)
{
	struct shm_hdr *h = mem;

	if (creator) {
		h->magic = SHM_RING_MAGIC;
		h->version = SHM_RING_VERSION;
		h->nslots = nslots;
		h->slot_bytes = SHM_SLOT_BYTES;
		h->bytes = shm_region_bytes(nslots);
		h->offer_ip = 0;
		h->offer_port = 0;
		h->zero = 0;
		atomic_store_explicit(&h->attaches, 0, memory_order_relaxed);
		atomic_store_explicit(&h->detaches, 0, memory_order_relaxed);
	}
	r->map = mem;
	r->bytes = shm_region_bytes(nslots);
	/* The switch produces into ring 1 and consumes ring 0; the host the other way. */
	ring_init(&r->tx, mem, nslots, creator ? SHM_FROM_SWITCH : SHM_TO_SWITCH, true);
	ring_init(&r->rx, mem, nslots, creator ? SHM_TO_SWITCH : SHM_FROM_SWITCH, false);
}

static bool valid_nslots(uint32_t n)
{
	return n >= 2 && n <= SHM_SLOTS_MAX && !(n & (n - 1));
}

int shm_region_create(struct shm_region *r, const char *path, uint32_t nslots, char *err,
		      size_t errlen)
{
	char target[64];
	struct stat st;
	size_t bytes = shm_region_bytes(nslots);
	void *map;
	int fd, e;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!valid_nslots(nslots))
		return qp_errmsg(-EINVAL, err, errlen, "shm %s: %u slots: accepted a power of two "
				 "2..%u", path, nslots, SHM_SLOTS_MAX);
	if (strlen(path) >= SHM_PATH_MAX)
		return qp_errmsg(-ENAMETOOLONG, err, errlen, "shm %s: longer than %d bytes", path,
				 SHM_PATH_MAX - 1);
	if (lstat(path, &st) == 0 && !S_ISLNK(st.st_mode))
		return qp_errmsg(-EEXIST, err, errlen, "shm %s: exists and is not a link (a "
				 "shm port's region is published as one); remove it or name another",
				 path);
	fd = memfd_create("qpace-shm-port", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return qp_errmsg(-errno, err, errlen, "shm %s: memfd_create: %s", path,
				 strerror(errno));
	if (ftruncate(fd, (off_t)bytes) || fcntl(fd, F_ADD_SEALS, SHM_SEALS)) {
		e = errno;
		close(fd);
		return qp_errmsg(-e, err, errlen, "shm %s: size or seal the memfd: %s", path,
				 strerror(e));
	}
	/* Populated now: a run's first pass over each slot would otherwise fault its pages in
	 * one by one (2-4% of a real-time incast's samples). */
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		e = errno;
		close(fd);
		return qp_errmsg(-e, err, errlen, "shm %s: mmap %zu bytes: %s", path, bytes,
				 strerror(e));
	}
	snprintf(target, sizeof(target), "/proc/%d/fd/%d", (int)getpid(), fd);
	unlink(path);   /* a stale link (checked above) */
	if (symlink(target, path)) {
		e = errno;
		munmap(map, bytes);
		close(fd);
		return qp_errmsg(-e, err, errlen, "shm %s: symlink to %s: %s", path, target,
				 strerror(e));
	}
	r->fd = fd;
	shm_region_over(r, map, nslots, true);
	snprintf(r->link, sizeof(r->link), "%s", path);
	return 0;
}

/* Open @path, check the seals and the header (copied into *@hp, the region's stat into
 * *@stp unless NULL), map it: 0 or -errno. */
static int attach_map(struct shm_region *r, const char *path, struct shm_hdr *hp,
		      struct stat *stp, char *err, size_t errlen)
{
	struct shm_hdr h;
	struct stat st;
	void *map;
	int fd, seals, e;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return qp_errmsg(-errno, err, errlen, "shm %s: %s (is qpace-switch running with "
				 "this shm port?)", path, strerror(errno));
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		close(fd);
		return qp_errmsg(-EPERM, err, errlen, "shm %s: not a sealed memfd (a qpace-switch "
				 "shm port's region is one)", path);
	}
	if (fstat(fd, &st) || (size_t)st.st_size < SHM_SLOTS_OFF ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != SHM_RING_MAGIC ||
	    h.version != SHM_RING_VERSION || h.slot_bytes != SHM_SLOT_BYTES ||
	    !valid_nslots(h.nslots) || h.bytes != shm_region_bytes(h.nslots) ||
	    (uint64_t)st.st_size != h.bytes) {
		close(fd);
		return qp_errmsg(-EPROTO, err, errlen, "shm %s: not a version %u region of %u-byte "
				 "slots (or its size and header disagree)", path, SHM_RING_VERSION,
				 SHM_SLOT_BYTES);
	}
	map = mmap(NULL, h.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		e = errno;
		close(fd);
		return qp_errmsg(-e, err, errlen, "shm %s: mmap: %s", path, strerror(e));
	}
	r->fd = fd;
	shm_region_over(r, map, h.nslots, false);   /* the geometry read once, kept */
	*hp = h;
	if (stp)
		*stp = st;
	return 0;
}

/* Here: the switch can tell that a host came, before it sends anything. */
static void announce(struct shm_region *r)
{
	atomic_fetch_add_explicit(&((struct shm_hdr *)r->map)->attaches, 1,
				  memory_order_release);
	r->attached = true;
}

int shm_region_attach(struct shm_region *r, const char *path, char *err, size_t errlen)
{
	struct shm_hdr h;
	int rc = attach_map(r, path, &h, NULL, err, errlen);

	if (!rc)
		announce(r);
	return rc;
}

int shm_offer_path(const struct sockaddr_in *a, char *buf, size_t len)
{
	const uint8_t *ip = (const uint8_t *)&a->sin_addr.s_addr;
	const char *dir = getenv("QPACE_SHM_DIR");
	struct stat ns;
	int n;

	/* /dev/shm is one for the machine, addresses one per network namespace: two switches
	 * on 127.0.0.1:7000 in two namespaces are told apart by the namespace's inode. */
	if (stat("/proc/self/ns/net", &ns))
		ns.st_ino = 0;
	n = snprintf(buf, len, "%s/qpace-sw-%llu-%u.%u.%u.%u-%u", dir && *dir ? dir : "/dev/shm",
		     (unsigned long long)ns.st_ino, ip[0], ip[1], ip[2], ip[3],
		     (unsigned)ntohs(a->sin_port));
	return n < 0 || (size_t)n >= len || n >= SHM_PATH_MAX ? -ENAMETOOLONG : 0;
}

void shm_region_offer(struct shm_region *r, const struct sockaddr_in *a)
{
	struct shm_hdr *h = r->map;

	h->offer_ip = a->sin_addr.s_addr;
	h->offer_port = a->sin_port;
}

int shm_region_attach_offer(struct shm_region *r, const struct sockaddr_in *a, char *err,
			    size_t errlen)
{
	char path[SHM_PATH_MAX];
	struct shm_hdr h;
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (shm_offer_path(a, path, sizeof(path)))
		return qp_errmsg(-ENAMETOOLONG, err, errlen, "shm offer: QPACE_SHM_DIR too long");
	if (lstat(path, &st))
		return -errno;   /* no switch offers rings for this address: the caller's udp */
	/* The directory is shared: only a link this user or root made is a switch's offer. */
	if (!S_ISLNK(st.st_mode) || (st.st_uid != getuid() && st.st_uid != 0))
		return qp_errmsg(-EPERM, err, errlen, "shm offer %s: not a link of this user's "
				 "or root's (uid %u): not taken", path, (unsigned)st.st_uid);
	if ((rc = attach_map(r, path, &h, &st, err, errlen)))   /* st: now the region's */
		return rc;
	if ((st.st_uid != getuid() && st.st_uid != 0) ||
	    h.offer_ip != a->sin_addr.s_addr || h.offer_port != a->sin_port) {
		shm_region_close(r);
		return qp_errmsg(-EPROTO, err, errlen, "shm offer %s: a region not offered for "
				 "this address by this user's or root's switch: not taken", path);
	}
	announce(r);
	return 0;
}

uint32_t shm_region_attaches(const struct shm_region *r)
{
	return atomic_load_explicit(&((struct shm_hdr *)r->map)->attaches,
				    memory_order_acquire);
}

uint32_t shm_region_attached(const struct shm_region *r)
{
	struct shm_hdr *h = r->map;
	uint32_t d = atomic_load_explicit(&h->detaches, memory_order_acquire);

	return atomic_load_explicit(&h->attaches, memory_order_acquire) - d;
}

void shm_region_close(struct shm_region *r)
{
	if (r->link[0])
		unlink(r->link);
	if (r->attached)   /* gone: the switch may go back to datagrams */
		atomic_fetch_add_explicit(&((struct shm_hdr *)r->map)->detaches, 1,
					  memory_order_release);
	if (r->map && r->fd >= 0)
		munmap(r->map, r->bytes);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* ---- producer ---- */

uint8_t *shm_ring_slot(struct shm_ring *r)
{
	if (r->pos - r->seen >= r->nslots) {   /* full as far as we know: look at tail */
		uint32_t t = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
		uint32_t used = r->pos - t;

		if (used > r->nslots) {   /* ahead of what we produced, or too far behind */
			r->st.bad_index++;
			return NULL;
		}
		r->seen = t;
		if (used == r->nslots) {
			r->st.full++;
			return NULL;
		}
	}
	return slot_at(r, r->pos)->data;
}

void shm_ring_commit(struct shm_ring *r, uint32_t len, qp_time_ns ts_ns)
{
	struct shm_slot *s = slot_at(r, r->pos);

	atomic_store_explicit(&s->len, len, memory_order_relaxed);
	atomic_store_explicit(&s->ts_ns, ts_ns, memory_order_relaxed);
	r->pos++;
	r->st.frames++;
}

int shm_ring_push(struct shm_ring *r, const void *frame, size_t len, qp_time_ns ts_ns)
{
	uint8_t *d;

	if (len > SHM_FRAME_MAX)
		return -EMSGSIZE;
	if (!(d = shm_ring_slot(r)))
		return -ENOBUFS;
	memcpy(d, frame, len);
	shm_ring_commit(r, (uint32_t)len, ts_ns);
	return 0;
}

bool shm_ring_publish(struct shm_ring *r)
{
	if (r->pos == r->published)
		return false;
	atomic_store_explicit(&r->ctl->head, r->pos, memory_order_release);
	r->published = r->pos;
	r->st.batches++;
	/* Against the consumer's arm: its flag store, fence, head load (shm_ring.h). */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&r->ctl->waiting, memory_order_relaxed) ||
	    !atomic_exchange_explicit(&r->ctl->waiting, 0, memory_order_relaxed))
		return false;
	r->st.doorbells++;
	return true;
}

/* ---- consumer ---- */

int shm_ring_pop(struct shm_ring *r, void *buf, size_t cap, qp_time_ns *ts_ns)
{
	struct shm_slot *s;
	uint32_t len;

	if (r->pos == r->seen) {
		uint32_t h = atomic_load_explicit(&r->ctl->head, memory_order_acquire);

		if (h - r->pos > r->nslots) {
			/* More than a ring's worth (or behind us): nothing in it can be told
			 * from garbage. Take the peer's head as ours, so that an honest
			 * producer finds the ring empty and goes on. */
			r->st.bad_index++;
			r->pos = r->seen = h;
			shm_ring_release(r);
			return -EPROTO;
		}
		r->seen = h;
		if (h == r->pos)
			return 0;
	}
	s = slot_at(r, r->pos++);
	len = atomic_load_explicit(&s->len, memory_order_relaxed);   /* read once */
	if (len < SHM_FRAME_MIN || len > SHM_FRAME_MAX || len > cap) {
		r->st.bad_len++;
		return -EMSGSIZE;
	}
	memcpy(buf, s->data, len);
	*ts_ns = atomic_load_explicit(&s->ts_ns, memory_order_relaxed);
	r->st.frames++;
	return (int)len;
}

void shm_ring_release(struct shm_ring *r)
{
	if (r->pos == r->published)
		return;
	atomic_store_explicit(&r->ctl->tail, r->pos, memory_order_release);
	r->published = r->pos;
	r->st.batches++;
}

bool shm_ring_pending(const struct shm_ring *r)
{
	return r->pos != r->seen ||
	       atomic_load_explicit(&r->ctl->head, memory_order_acquire) != r->pos;
}

bool shm_ring_arm(struct shm_ring *r)
{
	r->st.arms++;
	atomic_store_explicit(&r->ctl->waiting, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&r->ctl->head, memory_order_acquire) == r->pos &&
	       r->pos == r->seen;
}

bool shm_ring_disarm(struct shm_ring *r)
{
	return atomic_exchange_explicit(&r->ctl->waiting, 0, memory_order_relaxed) != 0;
}
