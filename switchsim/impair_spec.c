/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The impairment spec, as `--impair` and a topology file's `impair=` write it (see
 * impair.h): one parser for both, one key per table row. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "impair.h"

#define SPEC_MAX 256
#define ACCEPTED "accepted: loss=P%%, ge=P%%:R%%[:H%%[:K%%]], corrupt=P%%, dup=P%%, " \
		 "jitter=TIME, reorder=P%%[:TIME], seed=N, or off"

/* "P%" with P in 0..100 into a fraction. */
static int parse_pct(const char *s, double *out)
{
	char num[64];
	size_t n = strlen(s);
	double v;

	if (n < 2 || n >= sizeof(num) || s[n - 1] != '%')
		return -EINVAL;
	memcpy(num, s, n - 1);
	num[n - 1] = 0;
	if (qp_parse_double(num, &v) || !(v >= 0 && v <= 100))
		return -EINVAL;
	*out = v / 100;
	return 0;
}

#define PCT_RANGE "a percentage in 0..100%% (e.g. 1%%, 0.1%%)"

typedef int (*key_fn)(struct sw_impair_params *p, const char *key, const char *v, char *err,
		      size_t len);

static int one_pct(const char *key, const char *v, double *out, char *err, size_t len)
{
	if (parse_pct(v, out))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': " PCT_RANGE, key, v);
	return 0;
}

static int key_loss(struct sw_impair_params *p, const char *key, const char *v, char *err,
		    size_t len)
{
	return one_pct(key, v, &p->loss, err, len);
}

static int key_corrupt(struct sw_impair_params *p, const char *key, const char *v, char *err,
		       size_t len)
{
	return one_pct(key, v, &p->corrupt, err, len);
}

static int key_dup(struct sw_impair_params *p, const char *key, const char *v, char *err,
		   size_t len)
{
	return one_pct(key, v, &p->dup, err, len);
}

/* Up to @max ':'-separated fields of at most 63 characters: how many, or -EINVAL. */
static int split_colons(const char *v, char f[][64], int max)
{
	int n = 0;

	for (const char *s = v;; n++) {
		const char *e = strchr(s, ':');
		size_t k = e ? (size_t)(e - s) : strlen(s);
		if (n == max || k >= 64)
			return -EINVAL;
		memcpy(f[n], s, k);
		f[n][k] = 0;
		if (!e)
			return n + 1;
		s = e + 1;
	}
}

static int key_ge(struct sw_impair_params *p, const char *key, const char *v, char *err,
		  size_t len)
{
	double *dst[4] = { &p->ge_p, &p->ge_r, &p->ge_bad, &p->ge_good };
	double val[4] = { 0, 0, 1, 0 };   /* H = 100%, K = 0%: the Gilbert model */
	char f[4][64];
	int n = split_colons(v, f, 4);

	for (int i = 0; i < n; i++)
		if (parse_pct(f[i], &val[i]))
			n = -EINVAL;
	if (n < 2 || !(val[0] > 0) || !(val[1] > 0))
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': P%%:R%%[:H%%[:K%%]], percentages: P good->bad and R "
				 "bad->good above 0%%, H loss in the bad state (default 100%%), K "
				 "loss in the good state (default 0%%); e.g. 1%%:30%%", key, v);
	for (int i = 0; i < 4; i++)
		*dst[i] = val[i];
	return 0;
}

static int key_jitter(struct sw_impair_params *p, const char *key, const char *v, char *err,
		      size_t len)
{
	if (qp_parse_time(v, &p->jitter_ns) || p->jitter_ns > SW_IMPAIR_DELAY_MAX)
		return qp_errmsg(-EINVAL, err, len, "%s '%s': a time in 0..1s (e.g. 10us)", key, v);
	return 0;
}

static int key_reorder(struct sw_impair_params *p, const char *key, const char *v, char *err,
		       size_t len)
{
	char f[2][64];
	int n = split_colons(v, f, 2);

	p->reorder_ns = SW_IMPAIR_REORDER_NS;
	if (n < 1 || parse_pct(f[0], &p->reorder) ||
	    (n == 2 && (qp_parse_time(f[1], &p->reorder_ns) || !p->reorder_ns ||
			p->reorder_ns > SW_IMPAIR_DELAY_MAX)))
		return qp_errmsg(-EINVAL, err, len,
				 "%s '%s': P%%[:TIME], " PCT_RANGE " of frames held back TIME "
				 "(1ns..1s, default 50us) so that later frames pass them", key, v);
	return 0;
}

static int key_seed(struct sw_impair_params *p, const char *key, const char *v, char *err,
		    size_t len)
{
	if (qp_parse_u64(v, &p->seed))
		return qp_errmsg(-EINVAL, err, len, "%s '%s': a whole number", key, v);
	return 0;
}

static const struct {
	const char *key;
	key_fn fn;
} keys[] = {
	{ "loss", key_loss }, { "ge", key_ge }, { "corrupt", key_corrupt }, { "dup", key_dup },
	{ "jitter", key_jitter }, { "reorder", key_reorder }, { "seed", key_seed },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int item(struct sw_impair_params *p, char *kv, unsigned *seen, char *err, size_t len)
{
	char *eq = strchr(kv, '=');

	if (!eq || eq == kv)
		return qp_errmsg(-EINVAL, err, len, "'%s': expected KEY=VALUE (" ACCEPTED ")", kv);
	*eq = 0;
	for (unsigned i = 0; i < NKEYS; i++) {
		if (strcmp(kv, keys[i].key))
			continue;
		if (*seen & (1u << i))
			return qp_errmsg(-EINVAL, err, len, "%s: given twice", kv);
		*seen |= 1u << i;
		return keys[i].fn(p, kv, eq + 1, err, len);
	}
	return qp_errmsg(-EINVAL, err, len, "unknown key '%s' (" ACCEPTED ")", kv);
}

int sw_impair_parse(struct sw_impair_params *out, const char *spec, char *err, size_t len)
{
	struct sw_impair_params p = { 0 };
	char buf[SPEC_MAX], *save = NULL;
	unsigned seen = 0;
	int rc;

	if (!strcmp(spec, "off")) {
		*out = p;
		return 0;
	}
	if (!*spec || strlen(spec) >= sizeof(buf))
		return qp_errmsg(-EINVAL, err, len, "%s (1..%d characters)",
				 *spec ? "too long" : "empty", SPEC_MAX - 1);
	snprintf(buf, sizeof(buf), "%s", spec);
	if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return qp_errmsg(-EINVAL, err, len, "an empty item (" ACCEPTED ")");
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
		if ((rc = item(&p, kv, &seen, err, len)) != 0)
			return rc;
	if ((rc = sw_impair_check(&p, err, len)) != 0)
		return rc;
	*out = p;
	return 0;
}

/* Appends ",ITEM" (no comma first) to @buf at *@at, never past @len. */
__attribute__((format(printf, 4, 5)))
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at + 1 >= len)
		return;
	if (*at)
		buf[(*at)++] = ',';
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	*at += n > 0 ? (size_t)n : 0;
}

const char *sw_impair_format(const struct sw_impair_params *p, char *buf, size_t len)
{
	char t[32];
	size_t at = 0;

	buf[0] = 0;
	if (!sw_impair_on(p)) {
		snprintf(buf, len, "off");
		return buf;
	}
	if (p->loss > 0)
		add(buf, len, &at, "loss=%.6g%%", p->loss * 100);
	if (p->ge_p > 0)
		add(buf, len, &at, "ge=%.6g%%:%.6g%%:%.6g%%:%.6g%%", p->ge_p * 100, p->ge_r * 100,
		    p->ge_bad * 100, p->ge_good * 100);
	if (p->corrupt > 0)
		add(buf, len, &at, "corrupt=%.6g%%", p->corrupt * 100);
	if (p->dup > 0)
		add(buf, len, &at, "dup=%.6g%%", p->dup * 100);
	if (p->jitter_ns)
		add(buf, len, &at, "jitter=%s", qp_fmt_time(p->jitter_ns, t, sizeof(t)));
	if (p->reorder > 0)
		add(buf, len, &at, "reorder=%.6g%%:%s", p->reorder * 100,
		    qp_fmt_time(p->reorder_ns, t, sizeof(t)));
	add(buf, len, &at, "seed=%llu", (unsigned long long)p->seed);
	return buf;
}
