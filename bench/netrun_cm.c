/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* An htsim connection matrix as qpace-bench run's flows (netrun_cm.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/connmatrix.h"
#include "qpace/errmsg.h"
#include "netrun_cm.h"

struct nr_trig {
	uint32_t left;                /* barrier: activations it still waits for */
	size_t next;                  /* multishot: its next target */
	size_t first, n;              /* its targets: targets[first .. first + n) */
	bool fired;
};

struct nr_cm {
	struct cm_matrix m;
	size_t *flow_of;              /* [nconn]: the flow a connection is */
	struct nr_trig *trig;         /* [ntrig], as m.trig */
	size_t *targets;              /* flows, grouped by trigger, in file order */
};

bool nr_cm_is_matrix(const char *path)
{
	char head[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	return cm_is_matrix(head, n);
}

static int by_start(const void *a, const void *b)
{
	const struct wl_flow *x = a, *y = b;

	if (x->chained != y->chained)
		return x->chained ? 1 : -1;
	if (!x->chained && x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Each trigger's targets, in file order. */
static int targets(struct nr_cm *cm)
{
	const struct cm_matrix *m = &cm->m;
	size_t at = 0;

	cm->trig = calloc(m->ntrig + 1, sizeof(*cm->trig));
	cm->targets = calloc(m->nconn + 1, sizeof(*cm->targets));
	if (!cm->trig || !cm->targets)
		return -ENOMEM;
	for (size_t i = 0; i < m->nconn; i++)
		if (m->conn[i].trigger)
			cm->trig[cm_trigger_find(m, m->conn[i].trigger) - m->trig].n++;
	for (size_t t = 0; t < m->ntrig; t++) {
		cm->trig[t].first = at;
		at += cm->trig[t].n;
		cm->trig[t].n = 0;
		cm->trig[t].left = m->trig[t].count;
	}
	for (size_t i = 0; i < m->nconn; i++)
		if (m->conn[i].trigger) {
			struct nr_trig *t = &cm->trig[cm_trigger_find(m, m->conn[i].trigger) - m->trig];
			cm->targets[t->first + t->n++] = cm->flow_of[i];
		}
	return 0;
}

int nr_cm_flows(const char *path, uint32_t hosts, struct nr_cm **out, struct wl_flows *wf,
		char *err, size_t errlen)
{
	struct nr_cm *cm = calloc(1, sizeof(*cm));
	const struct cm_matrix *m;
	int rc;

	*out = NULL;
	memset(wf, 0, sizeof(*wf));
	if (!cm)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	if ((rc = cm_load(&cm->m, path, err, errlen))) {
		free(cm);
		return rc;
	}
	m = &cm->m;
	if (m->nodes > hosts) {
		rc = qp_errmsg(-EINVAL, err, errlen, "%s:%d: Nodes %u: the topology has %u hosts; "
			       "accepted 1..%u", path, m->nodes_line, m->nodes, hosts, hosts);
		goto fail;
	}
	wf->f = calloc(m->nconn + 1, sizeof(*wf->f));
	cm->flow_of = calloc(m->nconn + 1, sizeof(*cm->flow_of));
	if (!wf->f || !cm->flow_of) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < m->nconn; i++) {
		const struct cm_conn *c = &m->conn[i];
		wf->f[i] = (struct wl_flow){
			.start_ns = c->trigger ? 0 : c->start_ns, .src = c->src, .dst = c->dst,
			.bytes = c->bytes ? c->bytes : WL_BYTES_FOREVER, .chained = c->trigger != 0,
			.id = (uint32_t)i };
	}
	wf->n = wf->cap = m->nconn;
	qsort(wf->f, wf->n, sizeof(*wf->f), by_start);
	for (size_t k = 0; k < wf->n; k++)
		cm->flow_of[wf->f[k].id] = k;
	if (targets(cm)) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
		goto fail;
	}
	*out = cm;
	return 0;
fail:
	wl_flows_free(wf);
	nr_cm_free(cm);
	return rc;
}

/* Trigger @ti activated at @now: the flows it starts. */
static int activate(struct nr_cm *cm, size_t ti, struct sim_flows *fl, qp_time_ns now)
{
	struct nr_trig *t = &cm->trig[ti];
	size_t from = t->first, to = t->first + t->n;

	switch (cm->m.trig[ti].kind) {
	case CM_MULTISHOT:
		if (t->next == t->n)
			return 0;         /* every target started (htsim: "noone left") */
		from = t->first + t->next++;
		to = from + 1;
		break;
	case CM_BARRIER:
		if (t->fired || (t->left && --t->left))
			return 0;
		break;
	default:
		if (t->fired)
			return 0;         /* refused at parse: activated once at most */
		break;
	}
	t->fired = true;
	for (size_t i = from; i < to; i++)
		if (sim_flows_release(fl, cm->targets[i], now))
			return -ENOMEM;
	return 0;
}

int nr_cm_done(struct nr_cm *cm, const struct wl_flow *w, bool done, struct sim_flows *fl,
	       qp_time_ns now)
{
	const struct cm_conn *c = &cm->m.conn[w->id];
	const uint32_t ids[2] = { c->send_done, c->recv_done };
	int rc = 0;

	if (!done)
		return 0;                 /* a lost flow ends nothing it was to trigger */
	for (int i = 0; i < 2 && !rc; i++)
		if (ids[i])
			rc = activate(cm, (size_t)(cm_trigger_find(&cm->m, ids[i]) - cm->m.trig), fl,
				      now);
	return rc;
}

void nr_cm_free(struct nr_cm *cm)
{
	if (!cm)
		return;
	cm_free(&cm->m);
	free(cm->flow_of);
	free(cm->trig);
	free(cm->targets);
	free(cm);
}
