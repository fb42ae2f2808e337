/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Frames in flight on host links: buffers pooled by size, so a run in steady state
 * allocates nothing. A frame takes a buffer of the smallest 64-byte class that holds it;
 * a freed buffer waits on its class's free list for the next frame of that class.
 *
 * A split run (sim_priv.h) has a pool per lane, each used by its lane's thread alone: a
 * buffer let go by the other lane waits on that pool's return list until the lanes meet,
 * when sim_pool_return hands it back to the pool it came from (so a pool that frees more
 * of a class than it takes, e.g. the hosts' of the switches' reports, does not grow). */
#ifndef SIM_POOL_H
#define SIM_POOL_H

#include <stddef.h>
#include <stdint.h>

#define SIM_POOL_CLASS 64u
#define SIM_POOL_MAX 9216u          /* the largest frame (a switch port's) */
#define SIM_POOL_NCLASS (SIM_POOL_MAX / SIM_POOL_CLASS)

struct sim_pkt {
	struct sim_pkt *next;       /* free list, or the link's FIFO */
	uint32_t len;
	uint16_t cls;
	uint8_t owner;              /* the pool it came from (sim_pool.id) */
	uint8_t data[];
};

struct sim_pool {
	struct sim_pkt *free[SIM_POOL_NCLASS];
	struct sim_pkt *ret[SIM_POOL_NCLASS], *ret_tail[SIM_POOL_NCLASS];  /* others' */
	uint64_t nret;              /* buffers on the return lists */
	uint64_t bytes;             /* allocated, in all classes */
	uint64_t live;              /* buffers out */
	uint8_t id;
};

/* A FIFO of buffers by their next links (a link in flight, a return list). */
static inline void sim_fifo_add(struct sim_pkt **head, struct sim_pkt **tail,
				struct sim_pkt *k)
{
	k->next = NULL;
	if (*tail)
		(*tail)->next = k;
	else
		*head = k;
	*tail = k;
}

/* The oldest of a FIFO that has one. */
static inline struct sim_pkt *sim_fifo_take(struct sim_pkt **head, struct sim_pkt **tail)
{
	struct sim_pkt *k = *head;

	*head = k->next;
	if (!*head)
		*tail = NULL;
	return k;
}

/* A buffer for @len (1..SIM_POOL_MAX) bytes, len set; NULL when out of memory or too long. */
struct sim_pkt *sim_pool_get(struct sim_pool *p, size_t len);
/* Let @k go: onto @p's free list if it came from @p, else onto @p's return list. */
void sim_pool_put(struct sim_pool *p, struct sim_pkt *k);
/* The buffers of @to that @from holds on its return list, back to @to's free lists. */
void sim_pool_return(struct sim_pool *from, struct sim_pool *to);
void sim_pool_fini(struct sim_pool *p);

#endif
