/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP view's printer (agent/qp_print.c): who enforces each QP's rate — the ENF column of
 * qpacectl list / top and the "enforce" key of -j — from the view the agent core fills
 * (a program's report: gate or nic; a QP from the wire: tc with a rate there, else none). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qp_print.h"

/* What printing @v as JSON, then as a table row, wrote. */
static void print_both(const struct agent_qp_view *v, char *json, size_t jlen, char *row,
		       size_t rlen)
{
	FILE *f = fmemopen(json, jlen, "w");
	struct qp_out o;

	assert_non_null(f);
	qp_out_init(&o, f, QP_OUT_JSON);
	qp_print_view(&o, v);
	fclose(f);
	f = fmemopen(row, rlen, "w");
	assert_non_null(f);
	qp_view_table_row(f, v, NULL);
	fclose(f);
}

static void test_enforce_shown(void **state)
{
	static const struct {
		uint8_t enforce;
		const char *name;
	} cases[] = {
		{ AGENT_ENF_GATE, "gate" }, { AGENT_ENF_NIC, "nic" }, { AGENT_ENF_TC, "tc" },
		{ AGENT_ENF_NONE, "none" },
	};
	const struct qp_view_field *f = qp_view_field_find("enforce");
	char json[4096], row[1024], head[1024], want[64], cell[32];
	FILE *hf;
	(void)state;

	assert_non_null(f);
	assert_string_equal(f->head, "ENF");
	hf = fmemopen(head, sizeof(head), "w");
	qp_view_table_header(hf, qp_view_field_find("qpn"), false);
	fclose(hf);
	assert_non_null(strstr(head, "ENF"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct agent_qp_view v = { .reg = { .qpn = 0x11, .algo = "hpcc" },
					   .enforce = cases[i].enforce };

		print_both(&v, json, sizeof(json), row, sizeof(row));
		snprintf(want, sizeof(want), "\"enforce\":\"%s\"", cases[i].name);
		assert_non_null(strstr(json, want));
		assert_string_equal(qp_view_cell(f, &v, cell, sizeof(cell)), cases[i].name);
		snprintf(want, sizeof(want), " %s ", cases[i].name);
		assert_non_null(strstr(row, want));
	}
	print_message("%s%s", head, row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enforce_shown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
