/* The option table engine: see opt.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "qpace/units.h"
#include "qpace/opt.h"

static int opt_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int opt_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* "-s/--size" or "--cc" */
static const char *opt_label(const struct opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c/--%s", o->short_name, o->name);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

static const char *const type_unit[] = {
	[OPT_FLAG] = "", [OPT_UINT] = "", [OPT_BYTES] = " bytes (e.g. 64K, 1M)",
	[OPT_RATE] = " bits/s (e.g. 100M, 1G)", [OPT_TIME] = " (e.g. 5us, 10ms, 2s)",
	[OPT_STR] = "", [OPT_CHOICE] = "",
};

const char *opt_range_str(const struct opt *o, char *buf, size_t len)
{
	char a[32], b[32];

	if (o->type == OPT_CHOICE) {
		size_t used = (size_t)snprintf(buf, len, "one of:");
		for (const char *const *c = o->choices; *c && used < len; c++)
			used += (size_t)snprintf(buf + used, len - used, "%s %s",
						 c == o->choices ? "" : ",", *c);
		return buf;
	}
	if (o->type == OPT_RATE) {
		snprintf(buf, len, "%s..%s%s", qp_fmt_rate(o->min, a, sizeof(a)),
			 qp_fmt_rate(o->max, b, sizeof(b)), type_unit[o->type]);
	} else if (o->type == OPT_TIME) {
		snprintf(buf, len, "%s..%s%s", qp_fmt_time(o->min, a, sizeof(a)),
			 qp_fmt_time(o->max, b, sizeof(b)), type_unit[o->type]);
	} else {
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64 "%s", o->min, o->max,
			 type_unit[o->type]);
	}
	return buf;
}

static const char *const type_noun[] = {
	[OPT_UINT] = "a whole number", [OPT_BYTES] = "a size", [OPT_RATE] = "a rate",
	[OPT_TIME] = "a time",
};

static int parse_number(const struct opt *o, const char *arg, uint64_t *v)
{
	switch (o->type) {
	case OPT_UINT:
		return qp_parse_u64(arg, v);
	case OPT_BYTES:
		return qp_parse_bytes(arg, v);
	case OPT_RATE:
		return qp_parse_rate(arg, v);
	case OPT_TIME:
		if (o->unit_ns && qp_parse_u64(arg, v) == 0) {
			if (*v > UINT64_MAX / o->unit_ns)
				return -EINVAL;
			*v *= o->unit_ns;
			return 0;
		}
		return qp_parse_time(arg, v);
	default:
		return -EINVAL;
	}
}

static int opt_store(const struct opt *o, const char *arg, void *conf, char *err,
		     size_t errlen)
{
	char *field = (char *)conf + o->off;
	char label[48], range[160];
	uint64_t v;

	switch (o->type) {
	case OPT_FLAG:
		*(bool *)(void *)field = true;
		return 0;
	case OPT_STR:
		if (!arg || !*arg)
			return opt_err(err, errlen, "%s: an empty value",
				       opt_label(o, label, sizeof(label)));
		*(const char **)(void *)field = arg;
		return 0;
	case OPT_CHOICE:
		for (unsigned i = 0; o->choices[i]; i++) {
			if (strcmp(arg, o->choices[i]) == 0) {
				*(unsigned *)(void *)field = i;
				return 0;
			}
		}
		return opt_err(err, errlen, "%s '%s': %s", opt_label(o, label, sizeof(label)),
			       arg, opt_range_str(o, range, sizeof(range)));
	default:
		if (parse_number(o, arg, &v) || v < o->min || v > o->max)
			return opt_err(err, errlen, "%s '%s': not %s in %s",
				       opt_label(o, label, sizeof(label)), arg, type_noun[o->type],
				       opt_range_str(o, range, sizeof(range)));
		*(uint64_t *)(void *)field = v;
		return 0;
	}
}

int opt_parse(const struct opt *t, size_t n, unsigned cmd, int argc, char **argv, void *conf,
	      uint64_t *seen, char *err, size_t errlen)
{
	struct option lo[OPT_MAX + 1];
	char shorts[3 * OPT_MAX + 2];   /* a repeated option: the last one wins */
	int map[OPT_MAX + 1], nlo = 0, ns = 0;

	if (n > OPT_MAX)
		return opt_err(err, errlen, "option table too long (%zu rows)", n);
	*seen = 0;
	shorts[ns++] = ':';          /* report a missing value as ':' */
	for (size_t i = 0; i < n; i++) {
		if (!(t[i].cmds & cmd))
			continue;
		int has_arg = t[i].type == OPT_FLAG ? no_argument : required_argument;
		lo[nlo] = (struct option){ t[i].name, has_arg, NULL, 256 + (int)i };
		map[nlo++] = (int)i;
		if (t[i].short_name) {
			shorts[ns++] = t[i].short_name;
			if (has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	lo[nlo] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = '\0';

	optind = 0;                  /* full reset: the parser may run more than once */
	opterr = 0;
	for (;;) {
		int c = getopt_long(argc, argv, shorts, lo, NULL);
		if (c == -1)
			break;
		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1 < argc ? optind - 1 : argc - 1];
			if (c == ':')
				return opt_err(err, errlen, "option '%s' needs a value", bad);
			if (optopt && optopt < 256)
				return opt_err(err, errlen, "unknown option '-%c'", optopt);
			for (size_t i = 0; i < n; i++)
				if (!strncmp(bad, "--", 2) && !strcmp(bad + 2, t[i].name))
					return opt_err(err, errlen, "option '%s' does not apply to "
						       "this command", bad);
			return opt_err(err, errlen, "unknown option '%s'", bad);
		}
		int row = -1;
		if (c >= 256) {
			row = c - 256;
		} else {
			for (int k = 0; k < nlo; k++)
				if (t[map[k]].short_name == c)
					row = map[k];
		}
		if (row < 0)
			return opt_err(err, errlen, "unknown option '-%c'", c);
		if (opt_store(&t[row], optarg, conf, err, errlen))
			return -1;
		*seen |= 1ULL << row;
	}
	return optind;
}

bool opt_seen(const struct opt *t, size_t n, uint64_t seen, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return seen >> i & 1;
	return false;
}

void opt_usage(FILE *out, const struct opt *t, size_t n, unsigned cmd)
{
	for (size_t i = 0; i < n; i++) {
		if (!(t[i].cmds & cmd))
			continue;
		char left[64];
		int used = snprintf(left, sizeof(left), "  %c%c%s--%s%s%s",
				    t[i].short_name ? '-' : ' ',
				    t[i].short_name ? t[i].short_name : ' ',
				    t[i].short_name ? ", " : "  ", t[i].name,
				    t[i].metavar ? " " : "", t[i].metavar ? t[i].metavar : "");
		fputs(left, out);
		/* Continuation lines of the help text are indented under the first. */
		fprintf(out, "%*s", used < 30 ? 30 - used : 1, "");
		for (const char *h = t[i].help; *h; h++) {
			fputc(*h, out);
			if (*h == '\n')
				fprintf(out, "%30s", "");
		}
		fputc('\n', out);
	}
}
