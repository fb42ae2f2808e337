/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: htsim's connection-matrix parser (cm_parse: text in, no files). A file
 * it accepts must hold what the header declared: its connections between two different
 * hosts below Nodes, sizes and times within their ranges, every trigger a connection names
 * declared, the triggers sorted by id and unique, and each found by id; a file it refuses
 * must leave nothing allocated and a message naming a line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/connmatrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cm_matrix m;
	char err[600];

	if (cm_parse(&m, (const char *)data, size, "fuzz", err, sizeof(err))) {
		if (m.conn || m.trig || strncmp(err, "fuzz:", 5))
			abort();
		return 0;
	}
	if (!m.nodes || m.nodes > CM_MAX_NODES || m.want_conns != m.nconn ||
	    m.want_triggers != m.ntrig)
		abort();
	for (size_t i = 0; i < m.nconn; i++) {
		const struct cm_conn *c = &m.conn[i];
		if (c->src >= m.nodes || c->dst >= m.nodes || c->src == c->dst ||
		    c->bytes > CM_MAX_BYTES || (c->trigger && c->start_ns) ||
		    c->start_ns > (qp_time_ns)(CM_MAX_START_PS / 1000) ||
		    (c->trigger && !cm_trigger_find(&m, c->trigger)) ||
		    (c->send_done && !cm_trigger_find(&m, c->send_done)) ||
		    (c->recv_done && !cm_trigger_find(&m, c->recv_done)))
			abort();
	}
	for (size_t i = 0; i < m.ntrig; i++) {
		const struct cm_trigger *t = &m.trig[i];
		if ((i && t->id <= m.trig[i - 1].id) || cm_trigger_find(&m, t->id) != t ||
		    !t->kind || (t->kind == CM_BARRIER) != (t->count > 0))
			abort();
	}
	return 0;
}
