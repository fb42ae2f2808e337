/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The option engine: every qpace program's command line (and qpaced's config file) comes
 * from one table of rows, one row per option (wireguard-tools / iproute2 style), which
 * drives getopt_long, the value checks, --help and the error line.
 *
 * A row names its long and short flag, where its value goes in the caller's config struct
 * (offsetof/sizeof, see QP_OPT_AT), its type and accepted range, the subcommands that take
 * it, its help text and its default as text. Values are checked as they are parsed; a bad
 * one stops the parse with a message that quotes the flag, the value and the range:
 *
 *     -s/--size '9G': not a size in 1..8388608 bytes (e.g. 64K, 1M)
 *
 * and a program prints it as `PROG: MESSAGE` followed by `try: PROG --help`
 * (qp_opt_fail). Nothing is clamped. `seen` records which rows were given, so "unset"
 * differs from 0.
 *
 * The same rows read `key = value` lines (qp_opt_line: a config file, fed from outside so
 * the reader can be fuzzed) and single key/value pairs (qp_opt_set); those messages read
 * `FILE:LINE: key: "VALUE": why` and `key: "VALUE": why`.
 *
 * The grammar every program shares: an on/off switch takes exactly `on` or `off` (a FLAG
 * row in a file or a key=value list, and any CHOICE row with those words); the usual
 * other spellings (yes/no, true/false, 1/0, none, skip) are refused with a message that
 * names the word to write instead (qp_onoff_hint). Usage errors exit QP_EXIT_USAGE (2),
 * runtime failures QP_EXIT_FAIL (1). `--version` prints "PROG VERSION" (qpace/version.h).
 *
 * The same rows write the program's manual page (qp_opt_man, roff man(7)): NAME,
 * SYNOPSIS and DESCRIPTION from the head text, OPTIONS from every row not hidden, its
 * commands, EXIT STATUS, FILES, SEE ALSO; `--help` and the page cannot disagree.
 *
 * The engine opens no files and prints only where a function says so (usage, qp_opt_fail,
 * qp_opt_main, qp_opt_man): messages go to the caller's err buffer, so tests drive it
 * directly.
 */
#ifndef QPACE_OPT_H
#define QPACE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum qp_opt_type {
	QP_OPT_FLAG,     /* no value; sets a bool (or an int/unsigned of .size bytes) to 1 */
	QP_OPT_UINT,     /* a whole number (0x hex too with QP_OPT_F_HEX) */
	QP_OPT_BYTES,    /* "64K", "1M" (binary units) */
	QP_OPT_RATE,     /* qp_rate_bps, "1G", "100M" */
	QP_OPT_TIME,     /* qp_time_ns, "5us", "10ms"; a bare number is in `unit_ns` (0 = ns) */
	QP_OPT_STR,      /* const char *, kept as given: the text must outlive the config */
	QP_OPT_STRBUF,   /* copied into a char array of .size bytes */
	QP_OPT_CHOICE,   /* unsigned, index into `choices` */
	QP_OPT_FN,       /* .fn parses and stores the value */
	QP_OPT_HELP,     /* --help: stops the parse (see qp_opt_parse); sets a bool if .size */
	QP_OPT_VERSION,  /* --version: the same; qp_opt_main prints "PROG VERSION" */
	QP_OPT_MAN,      /* --help-man: the same; qp_opt_main prints the manual page */
};

/* Exit statuses, every program alike. */
#define QP_EXIT_OK    0
#define QP_EXIT_FAIL  1              /* the run failed (a file, a peer, a device...) */
#define QP_EXIT_USAGE 2              /* a bad flag or value: nothing was started */

#define QP_OPT_F_HEX     0x1u   /* UINT: also 0x hexadecimal */
#define QP_OPT_F_FIRST   0x2u   /* applied before the other options, wherever it stands
				 * (qpaced's -c FILE: the file first, the command line over it) */
#define QP_OPT_F_OWN_MSG 0x4u   /* FN: the callback's message names the flag and value itself
				 * and is used as it is */
#define QP_OPT_F_HIDDEN  0x8u   /* in neither --help nor the manual page (--help-man) */

struct qp_opt;

/* Parse @arg (NULL when the row takes no value) into @conf; 0, or a negative errno with
 * the reason in @err (no need to repeat the flag or the value: the engine quotes them). */
typedef int qp_opt_fn(const struct qp_opt *o, void *conf, const char *arg, char *err,
		      size_t errlen);

struct qp_opt {
	const char *name;            /* long name (= the config key) */
	char short_name;             /* 0 = none */
	enum qp_opt_type type;
	const char *arg;             /* metavar in --help; FN: NULL = takes no value */
	size_t off, size;            /* the field in the config struct; size 0 = the type's own */
	uint64_t min, max;           /* numbers: accepted range, inclusive */
	const char *const *choices;  /* CHOICE: NULL-terminated */
	unsigned cmds;               /* bit mask of the subcommands that take it; 0 = all */
	const char *help;            /* may span lines ('\n') */
	const char *def;             /* default as text: --help shows it, qp_opt_defaults sets it */
	uint64_t unit_ns;            /* TIME: what a bare number means (0 = ns) */
	qp_opt_fn *fn;               /* FN */
	unsigned flags;              /* QP_OPT_F_* */
	char old_short;              /* a short flag the row no longer has: given, it is refused
				      * with the long one named ("'-q' is written --quiet") */
};

/* .off and .size of @field in struct @type: { "rate", 0, QP_OPT_RATE, "R", QP_OPT_AT(...) } */
#define QP_OPT_AT(type, field) .off = offsetof(type, field), .size = sizeof(((type *)0)->field)

#define QP_OPT_MAX 64                /* rows per table: `seen` is a 64-bit mask */
#define QP_OPT_LINE_MAX 1024         /* qp_opt_line: longest line */

/* How to read a command line. */
struct qp_opt_spec {
	const struct qp_opt *t;
	size_t n;
	unsigned cmd;                /* the subcommand's bit; rows with cmds 0 apply always */
	bool in_order;               /* options end at the first positional argument (global
				      * options before a COMMAND); else GNU permutation */
};

/* Parse argv[1..] into @conf. Options and positional arguments may mix (GNU getopt
 * permutes argv) unless @s->in_order; a repeated option: the last one wins; QP_OPT_F_FIRST
 * rows are applied before the others. A QP_OPT_HELP row given: only it is applied. Returns
 * the index of the first positional argument (argc when none), or -EINVAL with the message
 * in @err. @seen (may be NULL) gets a bit per row given. */
int qp_opt_parse(const struct qp_opt_spec *s, int argc, char **argv, void *conf,
		 uint64_t *seen, char *err, size_t errlen);
/* Was row @name given? */
bool qp_opt_seen(const struct qp_opt *t, size_t n, uint64_t seen, const char *name);
/* Set every row of @cmd that has a default (.def) from it. 0 or -EINVAL (a bad default). */
int qp_opt_defaults(const struct qp_opt *t, size_t n, unsigned cmd, void *conf, char *err,
		    size_t errlen);
/* Set row @key of @cmd from text: 0, -ENOENT (unknown key; the known ones listed) or
 * -EINVAL, with `key: "VALUE": why` in @err. */
int qp_opt_set(const struct qp_opt *t, size_t n, unsigned cmd, void *conf, const char *key,
	       const char *value, char *err, size_t errlen);

/* A config file, fed one line at a time: "key = value"; '#' starts a comment; blank lines
 * are skipped; each key at most once per file. A FLAG row takes on or off. */
struct qp_opt_reader {
	const struct qp_opt *t;
	size_t n;
	unsigned cmd;
	void *conf;
	const char *file;            /* for messages */
	unsigned line;               /* lines read so far */
	uint64_t seen;               /* rows set by this file */
};

void qp_opt_reader_init(struct qp_opt_reader *r, const struct qp_opt *t, size_t n,
			unsigned cmd, void *conf, const char *file);
/* One line (a trailing newline is ignored): 0 or -EINVAL with "FILE:LINE: ..." in @err. */
int qp_opt_line(struct qp_opt_reader *r, const char *line, char *err, size_t errlen);

/* The options of @cmd, one per line, help aligned, "(default DEF)" after it. */
void qp_opt_usage(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd);
/* The same as keys of a config file or of key=value arguments: "  name=ARG  help". */
void qp_opt_usage_keys(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd);
/* The accepted range of row @o as text ("1..8388608 bytes", "one of: ia, off"). */
const char *qp_opt_range(const struct qp_opt *o, char *buf, size_t len);

/* "PROG: MSG" and "try: PROG --help" on stderr; returns -EINVAL. */
int qp_opt_fail(const char *prog, const char *msg);

/* An on/off value: "on" 1, "off" 0; anything else -EINVAL with the reason in @why (for
 * yes/no, true/false, 1/0, none, skip, enable/disable: which word to write instead). */
int qp_onoff_parse(const char *v, bool *on, char *why, size_t len);
/* " ('yes' is written 'on')" when @v is another spelling of on or off and @choices
 * (NULL-terminated) hold that word, else "". */
const char *qp_onoff_hint(const char *v, const char *const *choices, char *buf, size_t len);

/* A subcommand, for the manual page: its synopsis, what it does, and its options (the rows
 * of @t that @bit selects, as qp_opt_spec's cmd). */
struct qp_opt_cmd {
	const char *name;
	const char *args;            /* after "PROG NAME" */
	const char *summary;         /* may span lines */
	const struct qp_opt *t;      /* NULL = no options */
	size_t n;
	unsigned bit;
};

/* A whole program without subcommands. */
struct qp_opt_prog {
	const char *name;            /* in messages */
	const char *head;            /* --help: the text before the options */
	const char *tail;            /* --help: after them (NULL = nothing) */
	void (*more)(FILE *out, const char *name);   /* --help: then this (NULL = nothing),
						      * e.g. a list made at run time */
	const struct qp_opt *t;
	size_t n;
	int max_args;                /* positional arguments accepted; -1 = any number */
	bool in_order;
	/* the manual page (qp_opt_man) */
	const char *purpose;         /* NAME: "PROG - PURPOSE" */
	int section;                 /* 1 (0 = 1); 5: a file's keys (rows as "key = VALUE") */
	const struct qp_opt_cmd *cmds;   /* COMMANDS (NULL = none) */
	size_t ncmds;
	const char *files;           /* FILES: "PATH\tWHAT" lines (NULL = no section) */
	const char *see_also;        /* SEE ALSO: "qpacectl(1), qpaced.conf(5)" */
};

/* head, the options, tail, more. */
void qp_opt_help(FILE *out, const struct qp_opt_prog *p);
/* "PROG VERSION\n". */
void qp_opt_version(FILE *out, const char *prog);
/* The manual page of @p in roff (man(7)): NAME, SYNOPSIS and DESCRIPTION (from .head:
 * its "usage:" lines, then the rest; lines indented two spaces stay as they are),
 * OPTIONS (each row not hidden: flags, metavar, help, accepted range, default), the
 * commands with their options, the text of .tail and .more, EXIT STATUS, FILES, SEE ALSO. */
void qp_opt_man(FILE *out, const struct qp_opt_prog *p);
/* The rows' defaults (qp_opt_defaults), then the command line, into @conf. 0: go on
 * (*first = the first positional argument, if @first); 1: --help, --version or the manual
 * page was printed to stdout (exit QP_EXIT_OK); -EINVAL: the error was printed
 * (qp_opt_fail), exit QP_EXIT_USAGE. */
int qp_opt_main(const struct qp_opt_prog *p, int argc, char **argv, void *conf, int *first);
/* The rows a program that calls qp_opt_main ends its table with: --help, --version and
 * the hidden --help-man. */
#define QP_OPT_STD_ROWS                                                                    \
	{ "help", 'h', QP_OPT_HELP, NULL, .help = "this text" },                           \
	{ "version", 0, QP_OPT_VERSION, NULL, .help = "the version, then exit" },          \
	{ "help-man", 0, QP_OPT_MAN, NULL, .flags = QP_OPT_F_HIDDEN,                       \
	  .help = "the manual page (roff)" }

#endif
