/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The registry's command-line face, shared by qpaced, qpace-bench and qpacectl: the list
 * of algorithms their --help prints, and
 *
 *     PROG --help-params ALGO|all|list [--format text|md]
 *
 * which prints an algorithm's parameter table from the code's own table (name, type,
 * default, range, meaning; text or Markdown, as scripts/docs-params.sh puts it in the
 * docs), every algorithm's (all), or the registered names, one a line (list).
 */
#ifndef QPACE_CC_HELP_H
#define QPACE_CC_HELP_H

#include <stdio.h>
#include "qpace/cc.h"

/* Room for the longest help one algorithm prints (a unit test checks that each fits). */
#define CC_HELP_MAX 16384

/* The kinds of feedback @ops needs and the switch settings it declares, one line:
 * "INT reports, early notices at one BDP of the path; run with fair=1". 0, or -ENOSPC. */
int cc_feedback_describe(const struct cc_ops *ops, char *buf, size_t len);

/* The lines a program's --help ends with: the registered algorithms and how to list
 * their parameters (`PROG --help-params ALGO|all`). */
void cc_help_algorithms(FILE *out, const char *prog);

/* When argv[1] is --help-params (or --help-params=ALGO), serve the request: print on
 * @out and return 0, or print `PROG: --flag 'value': why` on @err and return 1. Returns
 * -1, printing nothing, for any other command line. */
int cc_help_params_main(const char *prog, int argc, char **argv, FILE *out, FILE *err);

#endif
