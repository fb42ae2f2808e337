/* Command lines from one table (the wg.c habit): each option's long name, key, argument
 * name and help line drive both getopt_long and the usage text, so they cannot drift. */
#ifndef QPACE_OPTABLE_H
#define QPACE_OPTABLE_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct qp_optdoc {
	const char *name;   /* long name */
	char key;           /* short key, also getopt_long's return value */
	const char *arg;    /* argument name, NULL for a flag */
	const char *help;   /* one line */
};

/* Fill getopt_long tables: longopts holds n + 1 entries, shortopts 2n + 1 chars. */
void qp_optable_build(const struct qp_optdoc *docs, size_t n, struct option *longopts,
		      char *shortopts);
/* "  -k, --name ARG   help" for each option. */
void qp_optable_usage(FILE *f, const struct qp_optdoc *docs, size_t n);

#endif
