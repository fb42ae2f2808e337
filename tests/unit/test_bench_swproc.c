/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Reading qpace-switch's outputs: the receiver port's figures from the final JSON (drops =
 * drop_tail + drop_store), and the mean queue over the rounds from the 1 ms CSV, whose
 * times (relative to the switch's start) are anchored by the final JSON's time_ns. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tmpdir.h"
#include "../../bench/swproc.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_port_figures_and_queue_mean(void **state)
{
	struct swproc s = { .pid = -1 };
	struct swproc_port p0;
	char dir[128], series[192], err[256], line[128];
	double mean;
	(void)state;

	assert_int_equal(tmpdir_make(dir, sizeof(dir), "swproc"), 0);
	snprintf(s.dir, sizeof(s.dir), "%s", dir);
	snprintf(s.json_path, sizeof(s.json_path), "%s/switch.json", dir);
	snprintf(s.csv_path, sizeof(s.csv_path), "%s/switch.csv", dir);
	/* The switch started at t = 10 s (CLOCK_MONOTONIC) and wrote its last row at 10.005 s. */
	write_file(s.json_path,
		   "{\"time_ns\": 10005000000, \"tx_late_max_ns\": 7000000, "
		   "\"tx_late_total_ns\": 9000000, \"switches\": [\n {\"name\": \"s1\", \"ports\": [\n"
		   "  {\"name\": \"p0\", \"drop_tail\": 7, \"drop_store\": 2, \"ecn_marked\": 3,"
		   " \"max_qbytes\": 65536, \"rx_frames\": 1},\n"
		   "  {\"name\": \"p1\", \"drop_tail\": 100, \"max_qbytes\": 1}]}\n]}\n");
	write_file(s.csv_path,
		   "time_s,switch,port,queue_bytes,rx_frames\n"
		   "0.001000,s1,p0,1000,0\n0.001000,s1,p1,50,0\n"
		   "0.002000,s1,p0,3000,0\n0.002000,s1,p1,50,0\n"
		   "0.003000,s1,p0,5000,0\n0.003000,s1,p1,50,0\n"
		   "0.005000,s1,p0,0,0\n0.005000,s1,p1,0,0\n");
	assert_int_equal(swproc_stop(&s, "p0", &p0, err, sizeof(err)), 0);
	assert_true(p0.found);
	assert_int_equal(p0.drops, 9);
	assert_int_equal(p0.ecn_marks, 3);
	assert_int_equal(p0.max_queue_bytes, 65536);
	assert_int_equal(s.end_ns, 10005000000ULL);
	assert_int_equal(s.late_max_ns, 7000000);    /* the switch loop's lateness */
	assert_int_equal(s.late_total_ns, 9000000);

	/* The rounds ran from 10.0015 s to 10.0035 s: the samples at 2 and 3 ms count. */
	snprintf(series, sizeof(series), "%s/queue.csv", dir);
	assert_int_equal(swproc_queue_mean(&s, "p0", 10001500000ULL, 10003500000ULL, &mean,
					   series, err, sizeof(err)), 0);
	assert_true(fabs(mean - 4000) < 1e-9);
	print_message("mean queue of p0 over the rounds: %.0f bytes\n", mean);
	FILE *f = fopen(series, "r");
	assert_non_null(f);
	int rows = 0;
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	assert_int_equal(rows, 1 + 4);            /* header + both ports at 2 and 3 ms */

	/* An interval with no sample, and a port the switch does not have, are errors. */
	assert_int_equal(swproc_queue_mean(&s, "p0", 20000000000ULL, 20000000001ULL, &mean,
					   NULL, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "no sample"));
	assert_int_equal(swproc_stop(&s, "p9", &p0, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no port p9"));
	/* A truncated dump is refused, not half-read. */
	write_file(s.json_path, "{\"time_ns\": 1, \"switches\": [ {\"ports\": [ {\"name\": ");
	assert_int_equal(swproc_stop(&s, "p0", &p0, err, sizeof(err)), -EINVAL);
	assert_int_equal(tmpdir_remove(dir), 0);
}

static void test_find_bin(void **state)
{
	char out[4096], err[256];
	(void)state;

	assert_int_equal(swproc_find_bin("/nonexistent/qpace-switch", NULL, out, sizeof(out), err,
					 sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--switch-bin /nonexistent/qpace-switch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_figures_and_queue_mean),
		cmocka_unit_test(test_find_bin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
