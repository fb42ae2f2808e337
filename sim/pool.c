/* Pooled frame buffers: see pool.h. */
#include <stdlib.h>

#include "pool.h"

struct sim_pkt *sim_pool_get(struct sim_pool *p, size_t len)
{
	uint32_t cls;
	struct sim_pkt *k;

	if (!len || len > SIM_POOL_MAX)
		return NULL;
	cls = (uint32_t)((len - 1) / SIM_POOL_CLASS);
	k = p->free[cls];
	if (k) {
		p->free[cls] = k->next;
	} else {
		size_t size = (size_t)(cls + 1) * SIM_POOL_CLASS;
		k = malloc(sizeof(*k) + size);
		if (!k)
			return NULL;
		k->cls = cls;
		p->bytes += size;
	}
	k->next = NULL;
	k->len = (uint32_t)len;
	p->live++;
	return k;
}

void sim_pool_put(struct sim_pool *p, struct sim_pkt *k)
{
	k->next = p->free[k->cls];
	p->free[k->cls] = k;
	p->live--;
}

void sim_pool_fini(struct sim_pool *p)
{
	for (uint32_t c = 0; c < SIM_POOL_NCLASS; c++)
		while (p->free[c]) {
			struct sim_pkt *k = p->free[c];
			p->free[c] = k->next;
			free(k);
		}
}
