/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The option engine: see qpace/opt.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "qpace/version.h"

#define HELP_COL 30                  /* --help: where the help text starts */

static bool applies(const struct qp_opt *o, unsigned cmd)
{
	return !o->cmds || (o->cmds & cmd);
}

/* --help, --version, --help-man: each stops the parse, and none is a key of a file. */
static bool terminal(const struct qp_opt *o)
{
	return o->type == QP_OPT_HELP || o->type == QP_OPT_VERSION || o->type == QP_OPT_MAN;
}

static bool takes_value(const struct qp_opt *o)
{
	return o->type != QP_OPT_FLAG && !terminal(o) && !(o->type == QP_OPT_FN && !o->arg);
}

/* The width of the row's field: .size, or the type's own. */
static size_t field_size(const struct qp_opt *o)
{
	if (o->size)
		return o->size;
	switch (o->type) {
	case QP_OPT_FLAG:
		return sizeof(bool);
	case QP_OPT_STR:
		return sizeof(const char *);
	case QP_OPT_CHOICE:
		return sizeof(unsigned);
	case QP_OPT_UINT:
	case QP_OPT_BYTES:
	case QP_OPT_RATE:
	case QP_OPT_TIME:
		return sizeof(uint64_t);
	default:
		return 0;
	}
}

static uint64_t width_max(size_t size)
{
	return size >= 8 ? UINT64_MAX : (1ULL << (8 * size)) - 1;
}

static bool uint_width(size_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

static void store_uint(void *field, size_t size, uint64_t v)
{
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	memcpy(field, size == 1 ? (void *)&v8 : size == 2 ? (void *)&v16 :
		      size == 4 ? (void *)&v32 : (void *)&v, size);
}

/* "-s/--size" or "--cc" */
static const char *label(const struct qp_opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c/--%s", o->short_name, o->name);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

/* A time exactly, in the largest unit that divides it: 100us, 10ms, 86400s. */
static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} u[] = { { QP_NS_PER_S, "s" }, { QP_NS_PER_MS, "ms" }, { QP_NS_PER_US, "us" }, { 1, "ns" } };

	if (!ns)
		snprintf(buf, len, "0");
	for (size_t i = 0; ns && i < sizeof(u) / sizeof(u[0]); i++) {
		if (ns % u[i].div == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ns / u[i].div, u[i].unit);
			break;
		}
	}
	return buf;
}

static const char *const type_unit[] = {
	[QP_OPT_BYTES] = " bytes (e.g. 64K, 1M)", [QP_OPT_RATE] = " bits/s (e.g. 100M, 1G)",
	[QP_OPT_TIME] = " (e.g. 5us, 10ms, 2s)",
};

const char *qp_opt_range(const struct qp_opt *o, char *buf, size_t len)
{
	char a[32], b[32];

	buf[0] = '\0';
	switch (o->type) {
	case QP_OPT_CHOICE: {
		size_t used = (size_t)snprintf(buf, len, "one of:");
		for (const char *const *c = o->choices; *c && used < len; c++)
			used += (size_t)snprintf(buf + used, len - used, "%s %s",
						 c == o->choices ? "" : ",", *c);
		break;
	}
	case QP_OPT_RATE:
		snprintf(buf, len, "%s..%s%s", qp_fmt_rate(o->min, a, sizeof(a)),
			 qp_fmt_rate(o->max, b, sizeof(b)), type_unit[o->type]);
		break;
	case QP_OPT_TIME:
		snprintf(buf, len, "%s..%s%s", fmt_ns(o->min, a, sizeof(a)),
			 fmt_ns(o->max, b, sizeof(b)), type_unit[o->type]);
		break;
	case QP_OPT_UINT:
		if (o->flags & QP_OPT_F_HEX)
			snprintf(buf, len, "%" PRIu64 "..0x%" PRIx64 " (decimal or 0x hex)", o->min,
				 o->max);
		else
			snprintf(buf, len, "%" PRIu64 "..%" PRIu64, o->min, o->max);
		break;
	case QP_OPT_BYTES:
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64 "%s", o->min, o->max,
			 type_unit[o->type]);
		break;
	case QP_OPT_STRBUF:
		snprintf(buf, len, "1..%zu characters", o->size - 1);
		break;
	case QP_OPT_FLAG:
		snprintf(buf, len, "on or off");
		break;
	default:
		break;
	}
	return buf;
}

static const char *const type_noun[] = {
	[QP_OPT_UINT] = "a whole number", [QP_OPT_BYTES] = "a size", [QP_OPT_RATE] = "a rate",
	[QP_OPT_TIME] = "a time",
};

static int parse_uint(const struct qp_opt *o, const char *arg, uint64_t *v)
{
	char *end;

	if (!(o->flags & QP_OPT_F_HEX) || strncmp(arg, "0x", 2) || !arg[2])
		return qp_parse_u64(arg, v);
	if (strspn(arg + 2, "0123456789abcdefABCDEF") != strlen(arg + 2))
		return -EINVAL;
	errno = 0;
	*v = strtoull(arg + 2, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

static int parse_number(const struct qp_opt *o, const char *arg, uint64_t *v)
{
	double d;

	switch (o->type) {
	case QP_OPT_UINT:
		return parse_uint(o, arg, v);
	case QP_OPT_BYTES:
		return qp_parse_bytes(arg, v);
	case QP_OPT_RATE:
		return qp_parse_rate(arg, v);
	case QP_OPT_TIME:
		if (o->unit_ns && *arg != ' ' && qp_parse_double(arg, &d) == 0) {
			d *= (double)o->unit_ns;
			if (!(d >= 0 && d < 1.8e19))
				return -EINVAL;
			*v = qp_u64_round_sat(d);
			return 0;
		}
		return qp_parse_time(arg, v);
	default:
		return -EINVAL;
	}
}

/* Other spellings of on and off, refused with the word to write instead. */
static const struct {
	const char *word, *is;
} onoff_alias[] = {
	{ "yes", "on" }, { "true", "on" }, { "1", "on" }, { "enable", "on" }, { "enabled", "on" },
	{ "no", "off" }, { "false", "off" }, { "0", "off" }, { "disable", "off" },
	{ "disabled", "off" }, { "none", "off" }, { "skip", "off" },
};

const char *qp_onoff_hint(const char *v, const char *const *choices, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; v && i < sizeof(onoff_alias) / sizeof(onoff_alias[0]); i++) {
		if (strcmp(v, onoff_alias[i].word))
			continue;
		for (const char *const *c = choices; c && *c; c++)
			if (!strcmp(*c, onoff_alias[i].is))
				snprintf(buf, len, " ('%s' is written '%s')", v, *c);
		break;
	}
	return buf;
}

int qp_onoff_parse(const char *v, bool *on, char *why, size_t len)
{
	static const char *const on_off[] = { "on", "off", NULL };
	char hint[64];

	if (!strcmp(v, "on") || !strcmp(v, "off")) {
		*on = v[1] == 'n';
		return 0;
	}
	return qp_errmsg(-EINVAL, why, len, "not on or off%s",
			 qp_onoff_hint(v, on_off, hint, sizeof(hint)));
}

/* Check @arg (NULL: no value given) against row @o and store it in @conf: 0, or a
 * negative errno with the reason alone in @why. */
static int apply(const struct qp_opt *o, void *conf, const char *arg, char *why, size_t len)
{
	char *field = (char *)conf + o->off, range[240], hint[64];
	uint64_t v = 1;
	bool on;
	int rc;

	switch (o->type) {
	case QP_OPT_HELP:
	case QP_OPT_VERSION:
	case QP_OPT_MAN:
		if (o->size)
			store_uint(field, o->size, 1);
		return 0;
	case QP_OPT_FLAG:
		if (arg && (rc = qp_onoff_parse(arg, &on, why, len)))
			return rc;
		store_uint(field, field_size(o), arg ? on : 1);
		return 0;
	case QP_OPT_STR:
		if (!*arg)
			return qp_errmsg(-EINVAL, why, len, "an empty value");
		memcpy(field, &arg, sizeof(arg));
		return 0;
	case QP_OPT_STRBUF:
		if (!*arg || strlen(arg) >= o->size)
			return qp_errmsg(-EINVAL, why, len, "not %s",
					 qp_opt_range(o, range, sizeof(range)));
		memcpy(field, arg, strlen(arg) + 1);
		return 0;
	case QP_OPT_CHOICE:
		for (unsigned i = 0; o->choices[i]; i++) {
			if (strcmp(arg, o->choices[i]) == 0) {
				store_uint(field, field_size(o), i);
				return 0;
			}
		}
		return qp_errmsg(-EINVAL, why, len, "%s%s", qp_opt_range(o, range, sizeof(range)),
				 qp_onoff_hint(arg, o->choices, hint, sizeof(hint)));
	case QP_OPT_FN:
		why[0] = '\0';
		rc = o->fn(o, conf, arg, why, len);
		if (rc && !why[0])
			snprintf(why, len, "not accepted");
		return rc < 0 ? rc : rc ? -EINVAL : 0;
	default:
		if (parse_number(o, arg, &v) || v < o->min || v > o->max)
			return qp_errmsg(-EINVAL, why, len, "not %s in %s", type_noun[o->type],
					 qp_opt_range(o, range, sizeof(range)));
		store_uint(field, field_size(o), v);
		return 0;
	}
}

/* A programming error in a table (a field too narrow for its range, a row without its
 * choices or callback, two rows with one name for one command). */
static int check_table(const struct qp_opt *t, size_t n, char *err, size_t errlen)
{
	if (n > QP_OPT_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "option table too long (%zu rows)", n);
	for (size_t i = 0; i < n; i++) {
		const struct qp_opt *o = &t[i];
		size_t size = field_size(o);
		const char *bad = NULL;
		size_t nchoices = 0;

		if (!o->name || !*o->name)
			return qp_errmsg(-EINVAL, err, errlen, "option table: row %zu has no name", i);
		switch (o->type) {
		case QP_OPT_UINT:
		case QP_OPT_BYTES:
		case QP_OPT_RATE:
		case QP_OPT_TIME:
			if (!uint_width(size) || o->max > width_max(size) || o->min > o->max)
				bad = "its range does not fit its field";
			break;
		case QP_OPT_FLAG:
			if (!uint_width(size))
				bad = "a flag's field is 1, 2, 4 or 8 bytes";
			break;
		case QP_OPT_HELP:
		case QP_OPT_VERSION:
		case QP_OPT_MAN:
			if (o->size && !uint_width(o->size))
				bad = "a help flag's field is 1, 2, 4 or 8 bytes";
			break;
		case QP_OPT_CHOICE:
			while (o->choices && o->choices[nchoices])
				nchoices++;
			if (!nchoices || !uint_width(size) || nchoices - 1 > width_max(size))
				bad = "no choices, or a field too narrow for them";
			break;
		case QP_OPT_STR:
			if (size != sizeof(const char *))
				bad = "a string row's field is a const char *";
			break;
		case QP_OPT_STRBUF:
			if (o->size < 2)
				bad = "a string buffer row needs its .size";
			break;
		case QP_OPT_FN:
			if (!o->fn)
				bad = "no callback";
			break;
		}
		for (size_t k = 0; !bad && k < i; k++) {
			bool both = !t[k].cmds || !o->cmds || (t[k].cmds & o->cmds);
			if (both && (!strcmp(t[k].name, o->name) ||
				     (o->short_name && t[k].short_name == o->short_name)))
				bad = "given twice for one command";
		}
		if (bad)
			return qp_errmsg(-EINVAL, err, errlen, "option table: --%s: %s", o->name, bad);
	}
	return 0;
}

/* A callback that reuses a parser shared with other callers may get a message that opens
 * with the whole value quoted ("V" is not ..., "V": ...); the engine quotes the value
 * itself, so that opening is dropped: "not ...". */
static const char *why_alone(const char *why, const char *arg)
{
	size_t n = arg ? strlen(arg) : 0;
	const char *p = why;

	if (!arg || why[0] != '"' || strncmp(why + 1, arg, n) || why[n + 1] != '"')
		return why;
	p += n + 2;
	p += strspn(p, ": ");
	if (!strncmp(p, "is ", 3))
		p += 3;
	return *p ? p : why;
}

/* The command line's message for a bad value. */
static int cli_value_error(const struct qp_opt *o, const char *arg, const char *why, int rc,
			   char *err, size_t errlen)
{
	char l[80];

	if (o->flags & QP_OPT_F_OWN_MSG)
		return qp_errmsg(rc, err, errlen, "%s", why);
	why = why_alone(why, arg);
	if (!arg)
		return qp_errmsg(rc, err, errlen, "%s: %s", label(o, l, sizeof(l)), why);
	return qp_errmsg(rc, err, errlen, "%s '%s': %s", label(o, l, sizeof(l)), arg, why);
}

/* getopt_long's '?' and ':' as a message. */
static int scan_error(const struct qp_opt_spec *s, int c, int argc, char **argv, char *err,
		      size_t errlen)
{
	const char *bad = argv[optind - 1 < argc ? optind - 1 : argc - 1];
	size_t len = strcspn(bad, "=");          /* --name=value */

	if (c == ':')
		return qp_errmsg(-EINVAL, err, errlen, "option '%s' needs a value", bad);
	if (optopt >= 256)
		return qp_errmsg(-EINVAL, err, errlen, "option '--%s' takes no value",
				 s->t[optopt - 256].name);
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->t[i].name;

		if (optopt && optopt == s->t[i].short_name)
			return qp_errmsg(-EINVAL, err, errlen, "option '-%c' does not apply to this "
					 "command", optopt);
		if (!optopt && !strncmp(bad, "--", 2) && len - 2 == strlen(name) &&
		    !strncmp(bad + 2, name, len - 2))
			return qp_errmsg(-EINVAL, err, errlen, "option '--%s' does not apply to this "
					 "command", name);
	}
	for (size_t i = 0; optopt && i < s->n; i++)
		if (s->t[i].old_short == optopt && applies(&s->t[i], s->cmd))
			return qp_errmsg(-EINVAL, err, errlen, "unknown option '-%c' (it is written "
					 "--%s)", optopt, s->t[i].name);
	if (optopt)
		return qp_errmsg(-EINVAL, err, errlen, "unknown option '-%c'", optopt);
	return qp_errmsg(-EINVAL, err, errlen, "unknown option '%s'", bad);
}

struct given {
	int row;
	const char *arg;
};

int qp_opt_parse(const struct qp_opt_spec *s, int argc, char **argv, void *conf,
		 uint64_t *seen, char *err, size_t errlen)
{
	const struct qp_opt *t = s->t;
	struct option lo[QP_OPT_MAX + 1];
	char shorts[3 * QP_OPT_MAX + 3], why[400];
	int nlo = 0, ns = 0, ngiven = 0, help = -1, first = 0, rc = 0;
	uint64_t got = 0;
	struct given *given;
	size_t cap = 1;

	if (seen)
		*seen = 0;
	if ((rc = check_table(t, s->n, err, errlen)))
		return rc;
	if (s->in_order)
		shorts[ns++] = '+';
	shorts[ns++] = ':';          /* report a missing value as ':' */
	for (size_t i = 0; i < s->n; i++) {
		if (!applies(&t[i], s->cmd))
			continue;
		int has_arg = takes_value(&t[i]) ? required_argument : no_argument;
		lo[nlo++] = (struct option){ t[i].name, has_arg, NULL, 256 + (int)i };
		if (t[i].short_name) {
			shorts[ns++] = t[i].short_name;
			if (has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	lo[nlo] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = '\0';
	/* each option given takes at least one character of argv (-abc is three) */
	for (int i = 1; i < argc; i++)
		cap += strlen(argv[i]);
	given = calloc(cap, sizeof(*given));
	if (!given)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");

	optind = 0;                  /* full reset: the parser may run more than once */
	opterr = 0;
	for (;;) {
		int c = getopt_long(argc, argv, shorts, lo, NULL), row = -1;

		if (c == -1)
			break;
		if (c == '?' || c == ':') {
			rc = scan_error(s, c, argc, argv, err, errlen);
			goto out;
		}
		if (c >= 256)
			row = c - 256;
		for (size_t i = 0; row < 0 && i < s->n; i++)
			if (t[i].short_name == c && applies(&t[i], s->cmd))
				row = (int)i;
		if (row < 0) {
			rc = qp_errmsg(-EINVAL, err, errlen, "unknown option '-%c'", c);
			goto out;
		}
		given[ngiven++] = (struct given){ row, optarg };
		if (terminal(&t[row]) && help < 0)
			help = row;
	}
	first = optind;
	if (help >= 0) {             /* --help (the first such row given): the other values
				      * are not looked at */
		apply(&t[help], conf, NULL, why, sizeof(why));
		got = 1ULL << help;
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < ngiven; k++) {
			const struct qp_opt *o = &t[given[k].row];

			if (!!(o->flags & QP_OPT_F_FIRST) != (pass == 0))
				continue;
			rc = apply(o, conf, given[k].arg, why, sizeof(why));
			if (rc) {
				cli_value_error(o, given[k].arg, why, rc, err, errlen);
				goto out;
			}
			got |= 1ULL << given[k].row;
		}
	}
out:
	free(given);
	if (seen)
		*seen = got;
	return rc ? rc : first;
}

bool qp_opt_seen(const struct qp_opt *t, size_t n, uint64_t seen, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0 && (seen >> i & 1))
			return true;
	return false;
}

int qp_opt_defaults(const struct qp_opt *t, size_t n, unsigned cmd, void *conf, char *err,
		    size_t errlen)
{
	char why[400];
	int rc = check_table(t, n, err, errlen);

	for (size_t i = 0; !rc && i < n; i++) {
		if (!applies(&t[i], cmd) || !t[i].def || !*t[i].def)
			continue;
		if ((rc = apply(&t[i], conf, t[i].def, why, sizeof(why))))
			return qp_errmsg(rc, err, errlen, "option table: --%s: default '%s': %s",
					 t[i].name, t[i].def, why);
	}
	return rc;
}

/* The row of @key for @cmd (--help and its kin are no keys), or -1. */
static int find_key(const struct qp_opt *t, size_t n, unsigned cmd, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (applies(&t[i], cmd) && !terminal(&t[i]) && !strcmp(t[i].name, key))
			return (int)i;
	return -1;
}

int qp_opt_set(const struct qp_opt *t, size_t n, unsigned cmd, void *conf, const char *key,
	       const char *value, char *err, size_t errlen)
{
	char why[400], known[400];
	size_t used = 0;
	int row = find_key(t, n, cmd, key), rc = check_table(t, n, err, errlen);

	if (rc)
		return rc;
	if (row >= 0) {
		rc = apply(&t[row], conf, value, why, sizeof(why));
		if (rc && (t[row].flags & QP_OPT_F_OWN_MSG))
			return qp_errmsg(rc, err, errlen, "%s", why);
		if (rc)
			return qp_errmsg(rc, err, errlen, "%s: \"%s\": %s", key, value,
					 why_alone(why, value));
		return 0;
	}
	known[0] = '\0';
	for (size_t i = 0; i < n && used < sizeof(known); i++)
		if (applies(&t[i], cmd) && !terminal(&t[i]))
			used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s",
						 used ? ", " : "", t[i].name);
	return qp_errmsg(-ENOENT, err, errlen, "unknown key \"%.40s\" (known: %s)", key, known);
}

void qp_opt_reader_init(struct qp_opt_reader *r, const struct qp_opt *t, size_t n,
			unsigned cmd, void *conf, const char *file)
{
	*r = (struct qp_opt_reader){ .t = t, .n = n, .cmd = cmd, .conf = conf, .file = file };
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

int qp_opt_line(struct qp_opt_reader *r, const char *line, char *err, size_t errlen)
{
	char buf[QP_OPT_LINE_MAX + 2], msg[500], *key, *value, *eq;
	size_t len = strlen(line);
	int row, rc;

	r->line++;
	if (len > QP_OPT_LINE_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "%s:%u: line longer than %d characters",
				 r->file, r->line, QP_OPT_LINE_MAX);
	memcpy(buf, line, len + 1);
	buf[strcspn(buf, "#")] = 0;
	key = trim(buf);
	if (!*key)
		return 0;
	eq = strchr(key, '=');
	if (!eq)
		return qp_errmsg(-EINVAL, err, errlen, "%s:%u: \"%.60s\": expected key = value",
				 r->file, r->line, key);
	*eq = 0;
	key = trim(key);
	value = trim(eq + 1);
	row = find_key(r->t, r->n, r->cmd, key);
	if (row >= 0) {
		if (r->seen & (1ULL << row))
			return qp_errmsg(-EINVAL, err, errlen, "%s:%u: %s: given twice in this file",
					 r->file, r->line, key);
		r->seen |= 1ULL << row;
	}
	rc = qp_opt_set(r->t, r->n, r->cmd, r->conf, key, value, msg, sizeof(msg));
	if (rc)
		return qp_errmsg(-EINVAL, err, errlen, "%s:%u: %s", r->file, r->line, msg);
	return 0;
}

/* One line per row of @cmd: the flags ("-s, --size SIZE") or the key ("size=SIZE"), then
 * the help aligned, "(default DEF)" after it. */
static void usage_rows(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd, bool keys)
{
	for (size_t i = 0; i < n; i++) {
		const struct qp_opt *o = &t[i];
		char left[96];
		int used;

		if (!applies(o, cmd) || (o->flags & QP_OPT_F_HIDDEN) || (keys && terminal(o)))
			continue;
		if (keys)
			used = snprintf(left, sizeof(left), "  %s=%s", o->name, o->arg ? o->arg : "");
		else
			used = snprintf(left, sizeof(left), "  %c%c%s--%s%s%s",
					o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
					o->short_name ? ", " : "  ", o->name, o->arg ? " " : "",
					o->arg ? o->arg : "");
		fputs(left, out);
		/* A long flag puts its help on the next line; continuation lines of the help
		 * are indented under the first. */
		if (used >= HELP_COL)
			fprintf(out, "\n%*s", HELP_COL, "");
		else
			fprintf(out, "%*s", HELP_COL - used, "");
		for (const char *h = o->help ? o->help : ""; *h; h++) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%*s", HELP_COL, "");
		}
		if (o->def && *o->def)
			fprintf(out, " (default %s)", o->def);
		fputc('\n', out);
	}
}

void qp_opt_usage(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd)
{
	usage_rows(out, t, n, cmd, false);
}

void qp_opt_usage_keys(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd)
{
	usage_rows(out, t, n, cmd, true);
}

int qp_opt_fail(const char *prog, const char *msg)
{
	fprintf(stderr, "%s: %s\ntry: %s --help\n", prog, msg, prog);
	return -EINVAL;
}

void qp_opt_help(FILE *out, const struct qp_opt_prog *p)
{
	if (p->head)
		fputs(p->head, out);
	qp_opt_usage(out, p->t, p->n, 0);
	if (p->tail)
		fputs(p->tail, out);
	if (p->more)
		p->more(out, p->name);
}

void qp_opt_version(FILE *out, const char *prog)
{
	fprintf(out, "%s %s\n", prog, qp_version());
}

int qp_opt_main(const struct qp_opt_prog *p, int argc, char **argv, void *conf, int *first)
{
	struct qp_opt_spec s = { .t = p->t, .n = p->n, .in_order = p->in_order };
	char err[600];
	uint64_t seen;
	int i = qp_opt_defaults(p->t, p->n, 0, conf, err, sizeof(err));

	if (!i)
		i = qp_opt_parse(&s, argc, argv, conf, &seen, err, sizeof(err));

	if (i < 0)
		return qp_opt_fail(p->name, err);
	for (size_t k = 0; k < p->n; k++) {
		if (!(seen >> k & 1) || !terminal(&p->t[k]))
			continue;
		if (p->t[k].type == QP_OPT_VERSION)
			qp_opt_version(stdout, p->name);
		else if (p->t[k].type == QP_OPT_MAN)
			qp_opt_man(stdout, p);
		else
			qp_opt_help(stdout, p);
		return 1;
	}
	if (p->max_args >= 0 && argc - i > p->max_args) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[i + p->max_args]);
		return qp_opt_fail(p->name, err);
	}
	if (first)
		*first = i;
	return 0;
}
