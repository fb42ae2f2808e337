/* qpaced's options: one parser per value (wireguard-tools' config.c habit: strtoul, an
 * end-pointer check, a range check, and a message that quotes the input and states the
 * range), one table, and a line reader fed from outside. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_config.h"
#include "qpace/addr.h"
#include "qpace/ctl.h"
#include "qpace/errmsg.h"
#include "qpace/units.h"

/* ---- value parsers ---- */

static int parse_ulong(const char *v, unsigned long min, unsigned long max, unsigned long *out,
		       const char *what, char *err, size_t errlen)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end || errno || n < min || n > max)
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not %s in %lu..%lu", v, what,
				 min, max);
	*out = n;
	return 0;
}

static int copy_str(char *dst, size_t cap, const char *v, const char *what, char *err,
		    size_t errlen)
{
	if (!*v || strlen(v) >= cap)
		return qp_errmsg(-EINVAL, err, errlen, "%s \"%s\" must be 1..%zu characters", what,
				 v, cap - 1);
	strcpy(dst, v);
	return 0;
}

static int opt_feedback(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	return qp_hostport_parse(v, 1, 65535, 0, &c->fb_ip, &c->fb_port, err, errlen);
}

static int opt_metrics(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	return qp_hostport_parse(v, 1, 65535, QP_HOSTPORT_OFF, &c->metrics_ip, &c->metrics_port,
				 err, errlen);
}

static int opt_allow(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	struct agent_net nets[AGENT_MAX_ALLOW];
	unsigned n = 0;
	const char *p = v;

	for (;;) {
		char item[32];
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, ",");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len || len >= sizeof(item))
			return qp_errmsg(-EINVAL, err, errlen, "\"%s\": empty or overlong entry; give "
					 "ADDR[/PREFIX][,ADDR...] or any", v);
		memcpy(item, p, len);
		item[len] = 0;
		if (n == AGENT_MAX_ALLOW)
			return qp_errmsg(-EINVAL, err, errlen, "\"%s\": more than %u entries", v,
					 AGENT_MAX_ALLOW);
		if (agent_net_parse(item, &nets[n++]))
			return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not an IPv4 address, "
					 "ADDR/PREFIX (0..32) or any", item);
		p += strcspn(p, ",");
		if (!*p)
			break;
		p++;
	}
	memcpy(c->agent.allow, nets, n * sizeof(nets[0]));
	c->agent.nallow = n;
	return 0;
}

static int opt_cc(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	if (!cc_find(v)) {
		/* unknown: cc_create's message lists the known names */
		(void)cc_create(v, NULL, NULL, 0, err, errlen);
		return -EINVAL;
	}
	return copy_str(c->cc, sizeof(c->cc), v, "algorithm", err, errlen);
}

static int opt_cc_params(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	if (strlen(v) >= sizeof(c->cc_params))
		return qp_errmsg(-EINVAL, err, errlen, "parameters longer than %zu characters",
				 sizeof(c->cc_params) - 1);
	for (const char *s = v; *s; s++)
		if (*s <= ' ' || *s > '~')
			return qp_errmsg(-EINVAL, err, errlen, "\"%s\": parameters are key=value[,...] "
					 "without spaces", v);
	strcpy(c->cc_params, v);
	return 0;
}

static int opt_credits(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "ia") == 0 || strcmp(v, "none") == 0) {
		c->agent.credits = v[0] == 'i';
		return 0;
	}
	return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is neither ia nor none", v);
}

static int opt_key(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "none") == 0) {
		c->key_file[0] = 0;
		return 0;
	}
	return copy_str(c->key_file, sizeof(c->key_file), v, "key file", err, errlen);
}

static int opt_socket(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	return copy_str(c->socket, sizeof(c->socket), v, "socket path", err, errlen);
}

static int opt_rate_table(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	return copy_str(c->rate_table, sizeof(c->rate_table), v, "rate table name", err, errlen);
}

static int opt_max_qps(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	unsigned long n;

	if (parse_ulong(v, 1, AGENT_MAX_QPS, &n, "a QP count", err, errlen))
		return -EINVAL;
	c->agent.max_qps = (uint32_t)n;
	return 0;
}

static int opt_peer_port(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	unsigned long n;

	if (parse_ulong(v, 1, 65535, &n, "a port", err, errlen))
		return -EINVAL;
	c->agent.peer_port = (uint16_t)n;
	return 0;
}

static int opt_heartbeat(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	qp_time_ns t;

	if (qp_parse_time(v, &t) || t < 100 * QP_NS_PER_US || t > 10 * QP_NS_PER_S)
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not a time in 100us..10s", v);
	c->heartbeat_ns = t;
	return 0;
}

static int opt_busy_poll(struct qpaced_config *c, const char *v, char *err, size_t errlen)
{
	qp_time_ns t;

	if (qp_parse_time(v, &t) || t > 10 * QP_NS_PER_S)
		return qp_errmsg(-EINVAL, err, errlen, "\"%s\" is not a time in 0..10s", v);
	c->busy_poll_ns = t;
	return 0;
}

static const struct qpaced_option options[] = {
	{ "feedback", 'f', "ADDR:PORT", "UDP socket for feedback (switches, peer agents)",
	  "0.0.0.0:4792", opt_feedback },
	{ "allow", 'a', "NET[,NET...]", "feedback sources accepted: ADDR, ADDR/PREFIX or any",
	  "127.0.0.0/8", opt_allow },
	{ "metrics", 'm', "ADDR:PORT|off", "Prometheus text over HTTP (keep it on loopback)",
	  "127.0.0.1:9477", opt_metrics },
	{ "cc", 0, "ALGO", "default congestion control for QPs that name none", "hpcc", opt_cc },
	{ "cc-params", 0, "K=V[,K=V]", "parameters of the default algorithm", "",
	  opt_cc_params },
	{ "credits", 0, "ia|none", "receiver credit pacing (IA) for QPs registered as receivers",
	  "none", opt_credits },
	{ "key", 'k', "FILE|none", "shared key (32 hex digits) to sign and check feedback",
	  "none", opt_key },
	{ "socket", 's', "PATH", "registration / control unix socket (mode 0660)",
	  CTL_DEFAULT_SOCKET, opt_socket },
	{ "rate-table", 'r', "NAME", "rate table: /name = POSIX shm, else a file path",
	  QP_RATETABLE_DEFAULT, opt_rate_table },
	{ "max-qps", 'n', "N", "most QPs registered at once (bounds memory)", "1024",
	  opt_max_qps },
	{ "peer-port", 0, "PORT", "UDP port peer agents listen on (echoes, grants)", "4792",
	  opt_peer_port },
	{ "heartbeat", 0, "TIME", "rate-table heartbeat period (gates go stale at 100ms)", "10ms",
	  opt_heartbeat },
	{ "busy-poll", 0, "TIME", "keep polling this long after feedback (CPU for latency)", "0", opt_busy_poll },
	{ .name = NULL },
};

_Static_assert(sizeof(options) / sizeof(options[0]) <= 64, "reader->seen is 64 bits");

const struct qpaced_option *qpaced_options(void)
{
	return options;
}

void qpaced_config_init(struct qpaced_config *c)
{
	char err[200];

	memset(c, 0, sizeof(*c));
	agent_params_default(&c->agent);
	c->heartbeat_ns = 10 * QP_NS_PER_MS;
	for (const struct qpaced_option *o = options; o->name; o++)
		if (o->def[0])
			o->parse(c, o->def, err, sizeof(err));
}

int qpaced_config_set(struct qpaced_config *c, const char *key, const char *value,
		      char *err, size_t errlen)
{
	char msg[240];

	for (const struct qpaced_option *o = options; o->name; o++) {
		if (strcmp(o->name, key) != 0)
			continue;
		if (o->parse(c, value, msg, sizeof(msg)))
			return qp_errmsg(-EINVAL, err, errlen, "%s: %s", key, msg);
		return 0;
	}
	msg[0] = 0;
	for (const struct qpaced_option *o = options; o->name; o++)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s", msg[0] ? ", " : "",
			 o->name);
	return qp_errmsg(-ENOENT, err, errlen, "unknown key \"%.40s\" (known: %s)", key, msg);
}

void qpaced_config_reader_init(struct qpaced_config_reader *r, struct qpaced_config *c,
			       const char *file)
{
	*r = (struct qpaced_config_reader){ .c = c, .file = file };
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

int qpaced_config_line(struct qpaced_config_reader *r, const char *line, char *err,
		       size_t errlen)
{
	char buf[QPACED_LINE_MAX + 2], msg[300], *key, *value, *eq;
	size_t len = strlen(line);

	r->line++;
	if (len > QPACED_LINE_MAX)
		return qp_errmsg(-EINVAL, err, errlen, "%s:%u: line longer than %d characters",
				 r->file, r->line, QPACED_LINE_MAX);
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
	for (unsigned i = 0; options[i].name; i++) {
		if (strcmp(options[i].name, key) != 0)
			continue;
		if (r->seen & (1ULL << i))
			return qp_errmsg(-EINVAL, err, errlen, "%s:%u: %s: given twice in this file",
					 r->file, r->line, key);
		r->seen |= 1ULL << i;
	}
	if (qpaced_config_set(r->c, key, value, msg, sizeof(msg)))
		return qp_errmsg(-EINVAL, err, errlen, "%s:%u: %s", r->file, r->line, msg);
	return 0;
}

int qpaced_config_finish(struct qpaced_config *c, char *err, size_t errlen)
{
	const struct cc_ops *ops = cc_find(c->cc);
	char msg[240];
	void *p;
	int rc;

	c->agent.cc = c->cc;
	c->agent.cc_params = c->cc_params;
	if (!ops)
		return qp_errmsg(-EINVAL, err, errlen, "cc: unknown algorithm \"%s\"", c->cc);
	p = calloc(1, ops->params_size ? ops->params_size : 1);
	if (!p)
		return qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	rc = cc_params_parse(ops, p, c->cc_params, msg, sizeof(msg));
	free(p);
	if (rc)
		return qp_errmsg(-EINVAL, err, errlen, "cc-params: %s", msg);
	if (c->metrics_port && c->metrics_port == c->fb_port && c->metrics_ip == c->fb_ip)
		return qp_errmsg(-EINVAL, err, errlen, "metrics: same address as feedback");
	return 0;
}

int qpaced_config_help(char *buf, size_t len)
{
	size_t off = 0;

	for (const struct qpaced_option *o = options; o->name && off < len; o++) {
		char flag[48];
		int n;

		snprintf(flag, sizeof(flag), "%c%c%s--%s %s", o->short_flag ? '-' : ' ',
			 o->short_flag ? o->short_flag : ' ', o->short_flag ? ", " : "  ", o->name,
			 o->arg);
		n = snprintf(buf + off, len - off, "  %s\n        %s (default %s)\n", flag, o->help,
			     o->def[0] ? o->def : "the algorithm's own");
		if (n < 0)
			return -EINVAL;
		off += (size_t)n;
	}
	return off < len ? 0 : -ENOSPC;
}
