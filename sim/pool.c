/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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
		k->cls = (uint16_t)cls;
		k->owner = p->id;
		p->bytes += size;
	}
	k->next = NULL;
	k->len = (uint32_t)len;
	p->live++;
	return k;
}

void sim_pool_put(struct sim_pool *p, struct sim_pkt *k)
{
	if (k->owner != p->id) {
		sim_fifo_add(&p->ret[k->cls], &p->ret_tail[k->cls], k);
		p->nret++;
		return;
	}
	k->next = p->free[k->cls];
	p->free[k->cls] = k;
	p->live--;
}

void sim_pool_return(struct sim_pool *from, struct sim_pool *to)
{
	if (!from->nret)
		return;
	for (uint32_t c = 0; c < SIM_POOL_NCLASS; c++) {
		if (!from->ret[c])
			continue;
		from->ret_tail[c]->next = to->free[c];
		to->free[c] = from->ret[c];
		from->ret[c] = from->ret_tail[c] = NULL;
	}
	to->live -= from->nret;
	from->nret = 0;
}

static void free_all(struct sim_pkt *k)
{
	while (k) {
		struct sim_pkt *n = k->next;
		free(k);
		k = n;
	}
}

void sim_pool_fini(struct sim_pool *p)
{
	for (uint32_t c = 0; c < SIM_POOL_NCLASS; c++) {
		free_all(p->free[c]);
		free_all(p->ret[c]);
	}
}
