/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* htsim's connection matrices (qpace/connmatrix.h has the grammar): a line parser over
 * words, one table of a connection line's keys, and the checks htsim makes at the end
 * (the header's counts, every trigger referenced declared) plus one it leaves to an
 * assertion at run time (a oneshot trigger activated by more than one flow). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/connmatrix.h"
#include "qpace/errmsg.h"
#include "textfile.h"

#define MAX_WORDS 32

static int cm_fail_at(const struct cm_matrix *m, int line, char *err, size_t errlen,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int cm_fail_at(const struct cm_matrix *m, int line, char *err, size_t errlen,
		      const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_errmsg(-EINVAL, err, errlen, "%s:%d: %s", m->file, line, msg);
}

#define FAIL(...) cm_fail_at(m, m->lineno, err, errlen, __VA_ARGS__)

/* A whole number in [min, max], decimal digits only. */
static bool u64_in(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || strlen(s) > 20)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Room in @arr (of @cap items of @size) for item @n: doubled when full. 0 or -ENOMEM. */
static int room(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? 2 * *cap : 64;
	void *a;

	if (n < *cap)
		return 0;
	if (!(a = realloc(*arr, want * size)))
		return -ENOMEM;
	*arr = a;
	*cap = want;
	return 0;
}

void cm_init(struct cm_matrix *m, const char *file)
{
	*m = (struct cm_matrix){ .file = file };
}

void cm_free(struct cm_matrix *m)
{
	free(m->conn);
	free(m->trig);
	m->conn = NULL;
	m->trig = NULL;
	m->nconn = m->capconn = m->ntrig = m->captrig = 0;
}

/* ---- the header ---- */

static const struct {
	const char *name;
	uint64_t max;
	const char *accepted;
} headers[] = {
	{ "Nodes", CM_MAX_NODES, "a host count in 1..1048576" },
	{ "Connections", CM_MAX_CONNS, "a count in 0..4000000" },
	{ "Triggers", CM_MAX_TRIGGERS, "a count in 0..4000000" },
	{ "Failures", 0, "0 (link failures are not modelled here)" },
};

static int header(struct cm_matrix *m, char **w, int n, unsigned h, char *err, size_t errlen)
{
	uint64_t v;

	if (m->body)
		return FAIL("%s after the first connection or trigger line: the header comes "
			    "first", w[0]);
	if (n != 2 || !u64_in(w[1], h == 0 ? 1 : 0, headers[h].max, &v))
		return FAIL("%s '%s': accepted %s", w[0], n > 1 ? w[1] : "", headers[h].accepted);
	switch (h) {
	case 0:
		m->nodes = (uint32_t)v;
		m->nodes_line = m->lineno;
		break;
	case 1:
		m->want_conns = v;
		m->conns_line = m->lineno;
		break;
	case 2:
		m->want_triggers = v;
		m->triggers_line = m->lineno;
		break;
	}
	return 0;
}

/* ---- a connection ---- */

enum conn_key { K_START, K_SIZE, K_ID, K_PRIO, K_MSG, K_TRIGGER, K_SEND_DONE, K_RECV_DONE };

static const struct {
	const char *name;
	uint64_t min, max;            /* whole-number keys */
	const char *accepted;
} conn_keys[] = {
	[K_START] = { "start", 0, 0, "picoseconds in 0..3600000000000000" },
	[K_SIZE] = { "size", 0, CM_MAX_BYTES, "bytes in 0..1099511627776 (0: never ends)" },
	[K_ID] = { "id", 1, UINT32_MAX, "a flow id in 1..4294967295" },
	[K_PRIO] = { "prio", 0, UINT32_MAX, "a priority in 0..4294967295" },
	[K_MSG] = { "msg", 1, UINT32_MAX, "a message id in 1..4294967295" },
	[K_TRIGGER] = { "trigger", 1, UINT32_MAX, "a trigger id in 1..4294967295" },
	[K_SEND_DONE] = { "send_done_trigger", 1, UINT32_MAX, "a trigger id in 1..4294967295" },
	[K_RECV_DONE] = { "recv_done_trigger", 1, UINT32_MAX, "a trigger id in 1..4294967295" },
};
#define NCONN_KEYS (sizeof(conn_keys) / sizeof(conn_keys[0]))

static const char conn_accepted[] = "start, size, id, prio, msg, trigger, send_done_trigger, "
				    "recv_done_trigger";

static int endpoints(struct cm_matrix *m, const char *w, struct cm_conn *c, char *err,
		     size_t errlen)
{
	char a[24], b[24];
	const char *arrow = strstr(w, "->");
	uint64_t src, dst;
	size_t na = arrow ? (size_t)(arrow - w) : 0, nb = arrow ? strlen(arrow + 2) : 0;

	if (!m->nodes_line)
		return FAIL("a connection before the Nodes line: the header comes first");
	if (!arrow || na >= sizeof(a) || nb >= sizeof(b))
		return FAIL("connection '%s': expected SRC->DST", w);
	memcpy(a, w, na);
	a[na] = 0;
	memcpy(b, arrow + 2, nb + 1);
	if (!u64_in(a, 0, m->nodes - 1, &src) || !u64_in(b, 0, m->nodes - 1, &dst))
		return FAIL("connection '%s': hosts accepted 0..%u (Nodes %u at line %d)", w,
			    m->nodes - 1, m->nodes, m->nodes_line);
	if (src == dst)
		return FAIL("connection '%s': a host to itself; accepted two different hosts", w);
	c->src = (uint32_t)src;
	c->dst = (uint32_t)dst;
	return 0;
}

/* start T: picoseconds, a decimal number (htsim reads it as a float); the nanosecond at or
 * below it. */
static bool start_ps(const char *s, qp_time_ns *ns)
{
	char *end;
	double v;

	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return false;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0 || v > CM_MAX_START_PS)
		return false;
	*ns = (qp_time_ns)(v / 1000.0);
	return true;
}

static int connection(struct cm_matrix *m, char **w, int n, char *err, size_t errlen)
{
	struct cm_conn c = { .line = m->lineno };
	bool seen[NCONN_KEYS] = { false };
	int rc;

	if ((rc = endpoints(m, w[0], &c, err, errlen)))
		return rc;
	for (int i = 1; i < n; i++) {
		unsigned k;
		uint64_t v = 0;
		for (k = 0; k < NCONN_KEYS && strcmp(w[i], conn_keys[k].name); k++)
			;
		if (k == NCONN_KEYS)
			return FAIL("connection: unknown key '%s' (accepted: %s)", w[i], conn_accepted);
		if (seen[k])
			return FAIL("connection: %s given twice", w[i]);
		seen[k] = true;
		if (k == K_MSG && (i + 1 == n || !u64_in(w[i + 1], 1, UINT32_MAX, &v)))
			continue;   /* msg without an id: htsim's default message */
		if (i + 1 == n)
			return FAIL("connection: %s without a value: accepted %s", w[i],
				    conn_keys[k].accepted);
		i++;
		if (k == K_START ? !start_ps(w[i], &c.start_ns)
				 : !u64_in(w[i], conn_keys[k].min, conn_keys[k].max, &v))
			return FAIL("connection: %s '%s': accepted %s", w[i - 1], w[i],
				    conn_keys[k].accepted);
		switch (k) {
		case K_SIZE:
			c.bytes = v;
			break;
		case K_ID:
			c.id = (uint32_t)v;
			break;
		case K_TRIGGER:
			c.trigger = (uint32_t)v;
			break;
		case K_SEND_DONE:
			c.send_done = (uint32_t)v;
			break;
		case K_RECV_DONE:
			c.recv_done = (uint32_t)v;
			break;
		default:   /* start (read above), prio, msg: not modelled */
			break;
		}
	}
	if (!seen[K_SIZE])
		return FAIL("connection %s: no size: accepted size BYTES", w[0]);
	if (seen[K_START] == seen[K_TRIGGER])
		return FAIL("connection %s: %s; accepted exactly one of start T and trigger ID",
			    w[0], seen[K_START] ? "both a start time and a trigger"
						: "neither a start time nor a trigger");
	if (m->nconn == CM_MAX_CONNS)
		return FAIL("more than %u connections", CM_MAX_CONNS);
	if (room((void **)&m->conn, &m->capconn, m->nconn, sizeof(c)))
		return qp_errmsg(-ENOMEM, err, errlen, "%s:%d: out of memory", m->file, m->lineno);
	m->conn[m->nconn++] = c;
	return 0;
}

/* ---- a trigger ---- */

static int trigger(struct cm_matrix *m, char **w, int n, char *err, size_t errlen)
{
	static const char *const kinds[] = { [CM_ONESHOT] = "oneshot",
					     [CM_MULTISHOT] = "multishot",
					     [CM_BARRIER] = "barrier" };
	struct cm_trigger t = { .line = m->lineno };
	uint64_t v;
	bool counted = false;

	for (int i = 1; i < n; i++) {
		unsigned k;
		for (k = CM_ONESHOT; k <= CM_BARRIER && strcmp(w[i], kinds[k]); k++)
			;
		if (k <= CM_BARRIER) {
			if (t.kind)
				return FAIL("trigger: a second kind '%s': accepted one of oneshot, "
					    "multishot, barrier", w[i]);
			t.kind = (enum cm_trigger_kind)k;
		} else if (!strcmp(w[i], "id") || !strcmp(w[i], "count")) {
			bool id = w[i][0] == 'i';
			if (i + 1 == n || !u64_in(w[i + 1], 1, UINT32_MAX, &v))
				return FAIL("trigger: %s '%s': accepted 1..4294967295", w[i],
					    i + 1 < n ? w[i + 1] : "");
			i++;
			if (id)
				t.id = (uint32_t)v;
			else
				t.count = (uint32_t)v, counted = true;
		} else {
			return FAIL("trigger: unknown word '%s' (accepted: id N, oneshot, multishot, "
				    "barrier, count N)", w[i]);
		}
	}
	if (!t.id || !t.kind)
		return FAIL("trigger: %s; accepted 'trigger id N oneshot|multishot|barrier "
			    "[count N]'", !t.id ? "no id" : "no kind");
	if ((t.kind == CM_BARRIER) != counted)
		return FAIL("trigger %u: count %s; accepted count N with barrier only", t.id,
			    counted ? "given" : "missing");
	if (m->ntrig == CM_MAX_TRIGGERS)
		return FAIL("more than %u triggers", CM_MAX_TRIGGERS);
	if (room((void **)&m->trig, &m->captrig, m->ntrig, sizeof(t)))
		return qp_errmsg(-ENOMEM, err, errlen, "%s:%d: out of memory", m->file, m->lineno);
	m->trig[m->ntrig++] = t;
	return 0;
}

int cm_line(struct cm_matrix *m, const char *line, size_t len, char *err, size_t errlen)
{
	char buf[SIM_LINE_MAX + 1], *w[MAX_WORDS];
	int n;

	m->lineno++;
	if ((n = sim_line_words(line, len, buf, w, MAX_WORDS)) == SIM_LINE_LONG)
		return FAIL("a line of %zu characters: accepted at most %d", len, SIM_LINE_MAX);
	if (n < 0)
		return FAIL("more than %d words on a line", MAX_WORDS);
	if (!n)
		return 0;
	for (unsigned h = 0; h < sizeof(headers) / sizeof(headers[0]); h++)
		if (!strcmp(w[0], headers[h].name))
			return header(m, w, n, h, err, errlen);
	if (!strcmp(w[0], "failure"))
		return FAIL("failure: link failures are not modelled here");
	m->body = true;
	if (!strcmp(w[0], "trigger"))
		return trigger(m, w, n, err, errlen);
	if (strstr(w[0], "->"))
		return connection(m, w, n, err, errlen);
	return FAIL("'%s': accepted Nodes, Connections, Triggers, Failures, SRC->DST, trigger",
		    w[0]);
}

static int by_id(const void *a, const void *b)
{
	const struct cm_trigger *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : x->line - y->line;
}

const struct cm_trigger *cm_trigger_find(const struct cm_matrix *m, uint32_t id)
{
	size_t lo = 0, hi = m->ntrig;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->trig[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ntrig && m->trig[lo].id == id ? &m->trig[lo] : NULL;
}

/* Every trigger a connection names is declared; a oneshot is activated once at most. */
static int references(const struct cm_matrix *m, char *err, size_t errlen)
{
	uint32_t *activations = calloc(m->ntrig + 1, sizeof(*activations));
	int *first = calloc(m->ntrig + 1, sizeof(*first));
	int rc = 0;

	if (!activations || !first) {
		rc = qp_errmsg(-ENOMEM, err, errlen, "%s: out of memory", m->file);
		goto out;
	}
	for (size_t i = 0; i < m->nconn && !rc; i++) {
		const struct cm_conn *c = &m->conn[i];
		const uint32_t ids[3] = { c->trigger, c->send_done, c->recv_done };
		static const char *const what[3] = { "trigger", "send_done_trigger",
						     "recv_done_trigger" };
		for (int k = 0; k < 3 && !rc; k++) {
			const struct cm_trigger *t;
			size_t ti;
			if (!ids[k])
				continue;
			if (!(t = cm_trigger_find(m, ids[k]))) {
				rc = cm_fail_at(m, c->line, err, errlen, "%s %u: no trigger line "
						"declares it (trigger id %u oneshot|multishot|barrier)",
						what[k], ids[k], ids[k]);
				break;
			}
			ti = (size_t)(t - m->trig);
			if (k && t->kind == CM_ONESHOT && activations[ti]++)
				rc = cm_fail_at(m, c->line, err, errlen, "%s %u: a oneshot trigger "
						"activated a second time (first at line %d); accepted "
						"once (a barrier with count N waits for N)", what[k],
						ids[k], first[ti]);
			else if (k && !first[ti])
				first[ti] = c->line;
		}
	}
out:
	free(activations);
	free(first);
	return rc;
}

int cm_finish(struct cm_matrix *m, char *err, size_t errlen)
{
	if (!m->nodes_line)
		return cm_fail_at(m, m->lineno, err, errlen, "no Nodes line: accepted Nodes N "
				  "first");
	if (m->want_conns != m->nconn)
		return cm_fail_at(m, m->conns_line ? m->conns_line : m->nodes_line, err, errlen,
				  "Connections %llu, but %zu connection lines follow",
				  (unsigned long long)m->want_conns, m->nconn);
	if (m->want_triggers != m->ntrig)
		return cm_fail_at(m, m->triggers_line ? m->triggers_line : m->nodes_line, err,
				  errlen, "Triggers %llu, but %zu trigger lines follow",
				  (unsigned long long)m->want_triggers, m->ntrig);
	if (m->ntrig)
		qsort(m->trig, m->ntrig, sizeof(*m->trig), by_id);
	for (size_t i = 1; i < m->ntrig; i++)
		if (m->trig[i].id == m->trig[i - 1].id)
			return cm_fail_at(m, m->trig[i].line, err, errlen, "trigger id %u: declared "
					  "twice (first at line %d); accepted one line an id",
					  m->trig[i].id, m->trig[i - 1].line);
	return references(m, err, errlen);
}

static int line_step(void *m, const char *line, size_t len, char *err, size_t errlen)
{
	return cm_line(m, line, len, err, errlen);
}

int cm_parse(struct cm_matrix *m, const char *text, size_t len, const char *file, char *err,
	     size_t errlen)
{
	int rc;

	cm_free(m);
	cm_init(m, file);
	rc = sim_each_line(text, len, line_step, m, err, errlen);
	if (!rc)
		rc = cm_finish(m, err, errlen);
	if (rc)
		cm_free(m);
	return rc;
}

static int text_step(void *m, const char *text, size_t len, const char *file, char *err,
		     size_t errlen)
{
	return cm_parse(m, text, len, file, err, errlen);
}

int cm_load(struct cm_matrix *m, const char *path, char *err, size_t errlen)
{
	return sim_load_file_max(path, CM_FILE_MAX, text_step, m, err, errlen);
}

bool cm_is_matrix(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
			p++;
		if (p < end && *p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		return (size_t)(end - p) >= 5 && !memcmp(p, "Nodes", 5) &&
		       ((size_t)(end - p) == 5 || p[5] == ' ' || p[5] == '\t');
	}
	return false;
}
