/* qpace-bench's option table: one row per option drives getopt_long, the value checks and
 * --help (wireguard-tools / iproute2 style), so a new option is one row.
 *
 * Each row names the subcommands it belongs to, where its value goes in the caller's
 * config struct (offsetof), its type and accepted range. Values are checked as they are
 * parsed; a bad one stops the parse with a message that quotes the flag, the value and the
 * range, e.g.  -s/--size '9G': not a size in 1..8388608 bytes (e.g. 64K, 1M).
 * Nothing is clamped. `seen` records which rows were given, so "unset" differs from 0.
 *
 * The parser opens no files and prints nothing: messages go to the caller's err buffer,
 * so tests drive it directly.
 */
#ifndef BENCH_OPT_H
#define BENCH_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_type {
	OPT_FLAG,     /* bool, no value */
	OPT_UINT,     /* uint64_t, a whole number */
	OPT_BYTES,    /* uint64_t, "64K", "1M" (binary units) */
	OPT_RATE,     /* qp_rate_bps, "1G", "100M" */
	OPT_TIME,     /* qp_time_ns, "5us", "10ms"; a bare number is in `unit_ns` */
	OPT_STR,      /* const char *, kept as given */
	OPT_CHOICE,   /* unsigned, index into `choices` */
};

struct opt {
	const char *name;            /* long name, as perftest spells it where shared */
	char short_name;             /* 0 = none */
	enum opt_type type;
	const char *metavar;
	size_t off;                  /* offsetof in the config struct */
	uint64_t min, max;           /* numbers: accepted range, inclusive */
	const char *const *choices;  /* OPT_CHOICE: NULL-terminated */
	unsigned cmds;               /* bit mask of the subcommands that take it */
	const char *help;
	uint64_t unit_ns;            /* OPT_TIME: what a bare number means (0 = ns) */
};

#define OPT_MAX 64                   /* rows per table: `seen` is a 64-bit mask */

/* Parse argv[1..] for subcommand bit @cmd into @conf. Options and positional arguments
 * may mix (GNU getopt permutes argv); returns the index of the first positional argument
 * after the permutation (argc when none), or -1 with a message in @err. */
int opt_parse(const struct opt *t, size_t n, unsigned cmd, int argc, char **argv, void *conf,
	      uint64_t *seen, char *err, size_t errlen);
/* Was row @name given? */
bool opt_seen(const struct opt *t, size_t n, uint64_t seen, const char *name);
/* The options of @cmd, one per line (with the help text aligned), for --help. */
void opt_usage(FILE *out, const struct opt *t, size_t n, unsigned cmd);
/* The accepted range of row @o as text ("1..8388608 bytes", "one of: ia, off"). */
const char *opt_range_str(const struct opt *o, char *buf, size_t len);

#endif
