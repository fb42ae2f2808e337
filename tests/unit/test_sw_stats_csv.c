/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch's CSV rows (--stats, the simulation's queue.csv): every column of every row
 * carries the bytes fprintf would give, checked against the JSON dump (--stats-json, the
 * printer of qpace/out.h) of the same counters at the same time: the same field names,
 * the same decimal text, the time as "%.6f". The counters are random (every digit count,
 * 0 and UINT64_MAX included), one port is impaired (its impairment counters are
 * non-zero), and the names are up to the longest the topology accepts. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qpace/jsonr.h"
#include "qpace/rng.h"
#include "soft_net.h"
#include "sw.h"

#define NPORTS 3
#define MAXCOLS 128
#define LONG_SW "s23456789012345678901234567890x"   /* SW_NAME_LEN - 1 */
#define LONG_PORT "p23456789012345678901234567890x"

struct json_port {
	char key[MAXCOLS][64];
	char val[MAXCOLS][32];
	int n;
};

struct dump {
	struct json_port port[NPORTS];
	uint64_t time_ns;
};

static void on_json(void *arg, const char *path, const struct jsonr_val *v)
{
	struct dump *d = arg;
	int port, used = 0;

	if (!strcmp(path, "time_ns"))
		d->time_ns = v->u64;
	if (sscanf(path, "switches.0.ports.%d.%n", &port, &used) != 1 || !used ||
	    port < 0 || port >= NPORTS || v->type != JSONR_NUM || !v->is_u64)
		return;
	struct json_port *p = &d->port[port];

	assert_true(p->n < MAXCOLS);
	snprintf(p->key[p->n], sizeof(p->key[0]), "%s", path + used);
	snprintf(p->val[p->n], sizeof(p->val[0]), "%" PRIu64, v->u64);
	p->n++;
}

static const char *json_value(const struct json_port *p, const char *key)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->key[i], key))
			return p->val[i];
	fail_msg("column %s is not in the JSON dump", key);
	return NULL;
}

/* Random counters of every digit count, with the edges. */
static uint64_t value(struct qp_rng *r)
{
	switch (qp_rng_below(r, 8)) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: {
		uint64_t p = 1;
		for (uint64_t k = qp_rng_below(r, 20); k; k--)
			p *= 10;
		return p - qp_rng_below(r, 2);   /* 10^k or 10^k - 1 */
	}
	default: return qp_rng_next(r) >> qp_rng_below(r, 64);
	}
}

static void fill(struct qp_rng *r, void *base, size_t size)
{
	uint64_t *u = base;

	for (size_t i = 0; i < size / sizeof(uint64_t); i++)
		u[i] = value(r);
}

/* Split @line (modified) at commas into @col; returns the count. */
static int split(char *line, char **col)
{
	char *s = line, *t;
	int n = 0;

	while (n < MAXCOLS && (t = strsep(&s, ",")))
		col[n++] = t;
	return n;
}

static char *render(void (*fn)(struct sw_fabric *, FILE *, qp_time_ns, qp_time_ns),
		    struct sw_fabric *f, qp_time_ns now, qp_time_ns start, size_t *len)
{
	char *text = NULL;
	FILE *m = open_memstream(&text, len);

	assert_non_null(m);
	if (fn)
		fn(f, m, now, start);
	else
		sw_stats_json(f, m, now);
	fclose(m);
	return text;
}

static void test_rows_as_printf(void **state)
{
	unsigned b = soft_port_base(61);
	char text[800], err[512], *hdr = NULL, *hcol[MAXCOLS];
	struct sw_conf conf;
	struct sw_fabric *f;
	struct qp_rng r;
	size_t hlen;
	FILE *m;
	int ncols;
	(void)state;

	snprintf(text, sizeof(text),
		 "switch " LONG_SW " rate=1G delay=1us\n"
		 "port " LONG_SW " " LONG_PORT " udp local=127.0.0.1:%u\n"
		 "port " LONG_SW " b udp local=127.0.0.1:%u impair=loss=1%%,dup=1%%,seed=2\n"
		 "port " LONG_SW " c0 udp local=127.0.0.1:%u\n", b, b + 1, b + 2);
	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_parse(&conf, text, "t.topo", err, sizeof(err)), 0);
	sw_conf_finish(&conf);
	conf.quiet = true;
	f = sw_fabric_create(&conf, err, sizeof(err));
	if (!f)
		fail_msg("%s", err);
	assert_int_equal(f->sw[0]->nports, NPORTS);
	assert_non_null(f->sw[0]->ports[1].imp);

	m = open_memstream(&hdr, &hlen);
	assert_non_null(m);
	sw_stats_csv_header(m);
	fclose(m);
	assert_true(hlen > 0 && hdr[hlen - 1] == '\n');
	hdr[hlen - 1] = '\0';
	ncols = split(hdr, hcol);
	assert_true(ncols > 40 && ncols < MAXCOLS);
	assert_string_equal(hcol[0], "time_s");

	qp_rng_seed(&r, 7);
	for (int round = 0; round < 300; round++) {
		qp_time_ns start = qp_rng_below(&r, 1000000000000ULL);
		qp_time_ns now = start + (round ? qp_rng_below(&r, 100000000000000ULL) : 0);
		static struct dump d;
		char *csv, *json, *line, *save = NULL, want_time[48];
		size_t clen, jlen;
		int row = 0;

		for (int i = 0; i < NPORTS; i++) {
			struct sw_port *p = &f->sw[0]->ports[i];

			fill(&r, &p->st, sizeof(p->st));
			fill(&r, (void *)sw_queue_stats(p->q), sizeof(struct sw_queue_stats));
			fill(&r, &p->pfc.st, sizeof(p->pfc.st));
			p->pfc.in_bytes = value(&r);
			if (p->imp)
				fill(&r, (void *)sw_impair_stats(p->imp), sizeof(struct sw_impair_stats));
		}
		f->sw[0]->ports[0].st.rx_frames = 1234567890123ULL;   /* one column by hand */
		csv = render(sw_stats_csv_row, f, now, start, &clen);
		json = render(NULL, f, now, start, &jlen);
		memset(&d, 0, sizeof(d));
		assert_int_equal(jsonr_walk(json, jlen, on_json, &d, err, sizeof(err)), 0);
		assert_true(d.time_ns == now);
		snprintf(want_time, sizeof(want_time), "%.6f", (double)(now - start) / 1e9);
		assert_true(clen > 0 && csv[clen - 1] == '\n');
		for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const struct sw_port *p = &f->sw[0]->ports[row];
			char *col[MAXCOLS];

			assert_true(row < NPORTS);
			assert_int_equal(split(line, col), ncols);
			assert_string_equal(col[0], want_time);
			assert_string_equal(col[1], LONG_SW);
			assert_string_equal(col[2], p->conf->name);
			for (int c = 3; c < ncols; c++)
				assert_string_equal(col[c], json_value(&d.port[row], hcol[c]));
			if (row == 0)
				assert_string_equal(col[4], "1234567890123");   /* rx_frames */
			row++;
		}
		assert_int_equal(row, NPORTS);
		free(csv);
		free(json);
	}
	free(hdr);
	sw_fabric_destroy(f);
	sw_conf_free(&conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_as_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
