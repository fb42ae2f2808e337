/* Frames in flight on host links: buffers pooled by size, so a run in steady state
 * allocates nothing. A frame takes a buffer of the smallest 64-byte class that holds it;
 * a freed buffer waits on its class's free list for the next frame of that class. */
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
	uint32_t cls;
	uint8_t data[];
};

struct sim_pool {
	struct sim_pkt *free[SIM_POOL_NCLASS];
	uint64_t bytes;             /* allocated, in all classes */
	uint64_t live;              /* buffers out */
};

/* A buffer for @len (1..SIM_POOL_MAX) bytes, len set; NULL when out of memory or too long. */
struct sim_pkt *sim_pool_get(struct sim_pool *p, size_t len);
void sim_pool_put(struct sim_pool *p, struct sim_pkt *k);
void sim_pool_fini(struct sim_pool *p);

#endif
