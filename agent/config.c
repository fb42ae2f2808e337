/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's options: one table (qpace/opt.h) for the command line, the config file and
 * --help; typed rows where the engine's types fit, a parser per value where they do not
 * (addresses, the allow list, the algorithm). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_config.h"
#include "qdisc_plan.h"
#include "qpace/addr.h"
#include "qpace/ctl.h"
#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "wire_rate.h"

/* ---- value parsers ---- */

static int copy_str(char *dst, size_t cap, const char *v, char *err, size_t errlen)
{
	if (!*v || strlen(v) >= cap)
		return qp_errmsg(-EINVAL, err, errlen, "not 1..%zu characters", cap - 1);
	strcpy(dst, v);
	return 0;
}

#define CONF(conf) ((struct qpaced_config *)(conf))

static int opt_feedback(const struct qp_opt *o, void *conf, const char *v, char *err,
			size_t errlen)
{
	(void)o;
	return qp_hostport_parse(v, 1, 65535, 0, &CONF(conf)->fb_ip, &CONF(conf)->fb_port, err,
				 errlen);
}

static int opt_metrics(const struct qp_opt *o, void *conf, const char *v, char *err,
		       size_t errlen)
{
	(void)o;
	return qp_hostport_parse(v, 1, 65535, QP_HOSTPORT_OFF, &CONF(conf)->metrics_ip,
				 &CONF(conf)->metrics_port, err, errlen);
}

static int opt_allow(const struct qp_opt *o, void *conf, const char *v, char *err,
		     size_t errlen)
{
	struct qpaced_config *c = conf;
	struct agent_net nets[AGENT_MAX_ALLOW];
	unsigned n = 0;
	const char *p = v;

	(void)o;
	for (;;) {
		char item[32];
		size_t len;

		while (*p == ' ' || *p == '\t')
			p++;
		len = strcspn(p, ",");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len || len >= sizeof(item))
			return qp_errmsg(-EINVAL, err, errlen, "an empty or overlong entry; give "
					 "ADDR[/PREFIX][,ADDR...] or any");
		memcpy(item, p, len);
		item[len] = 0;
		if (n == AGENT_MAX_ALLOW)
			return qp_errmsg(-EINVAL, err, errlen, "more than %u entries", AGENT_MAX_ALLOW);
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

static int opt_cc(const struct qp_opt *o, void *conf, const char *v, char *err, size_t errlen)
{
	(void)o;
	if (!cc_find(v)) {
		/* unknown: cc_create's message lists the known names */
		(void)cc_create(v, NULL, NULL, 0, err, errlen);
		return -EINVAL;
	}
	return copy_str(CONF(conf)->cc, sizeof(CONF(conf)->cc), v, err, errlen);
}

static int opt_cc_params(const struct qp_opt *o, void *conf, const char *v, char *err,
			 size_t errlen)
{
	struct qpaced_config *c = conf;

	(void)o;
	if (strlen(v) >= sizeof(c->cc_params))
		return qp_errmsg(-EINVAL, err, errlen, "parameters longer than %zu characters",
				 sizeof(c->cc_params) - 1);
	for (const char *s = v; *s; s++)
		if (*s <= ' ' || *s > '~')
			return qp_errmsg(-EINVAL, err, errlen, "parameters are key=value[,...] "
					 "without spaces");
	strcpy(c->cc_params, v);
	return 0;
}

static int opt_key(const struct qp_opt *o, void *conf, const char *v, char *err, size_t errlen)
{
	struct qpaced_config *c = conf;

	(void)o;
	if (strcmp(v, "none") == 0) {
		c->key_file[0] = 0;
		return 0;
	}
	return copy_str(c->key_file, sizeof(c->key_file), v, err, errlen);
}

static int opt_int_sample(const struct qp_opt *o, void *conf, const char *v, char *err,
			  size_t errlen)
{
	struct qpaced_config *c = CONF(conf);

	(void)o;
	c->agent.int_every = 1;
	c->agent.int_interval_ns = 0;
	if (qp_parse_int_sample(v, &c->agent.int_every, &c->agent.int_interval_ns))
		return qp_errmsg(-EINVAL, err, errlen, "accepted " QP_INT_SAMPLE_ACCEPTED);
	return 0;
}

#define AT(field) QP_OPT_AT(struct qpaced_config, field)

static const char *const enforce_modes[] = { "off", "observe", "tc", NULL };
static const char *const off_on[] = { "off", "on", NULL };
static const char *const credit_modes[] = { "off", "ia", NULL };
static const char *const qdisc_policies[] = { "keep", "replace", NULL };  /* enum qd_policy */

static int opt_wire_rtt(const struct qp_opt *o, void *conf, const char *v, char *err,
			size_t errlen)
{
	qp_time_ns t;

	(void)o;
	if (!strcmp(v, "auto")) {
		CONF(conf)->wire_rtt_ns = 0;
		return 0;
	}
	if (qp_parse_time(v, &t) || t < AGENT_MIN_RTT_NS || t > 10 * QP_NS_PER_S)
		return qp_errmsg(-EINVAL, err, errlen, "--wire-rtt '%s': a time from %uns to 10s, "
				 "or auto", v, AGENT_MIN_RTT_NS);
	CONF(conf)->wire_rtt_ns = t;
	return 0;
}

static int opt_fq_parent(const struct qp_opt *o, void *conf, const char *v, char *err,
			 size_t errlen)
{
	(void)o;
	if (!strcmp(v, "none")) {
		CONF(conf)->wire_fq_parent = 0;
		return 0;
	}
	if (qd_classid_parse(v, &CONF(conf)->wire_fq_parent))
		return qp_errmsg(-EINVAL, err, errlen, "--wire-fq-parent '%s': a class MAJ:MIN in "
				 "hexadecimal as tc writes it (1:10), or none", v);
	return 0;
}

static int opt_cnp_peer(const struct qp_opt *o, void *conf, const char *v, char *err,
			size_t errlen)
{
	struct qpaced_config *c = conf;
	int n = cnp_pairs_parse(v, c->cnp_pairs, CNP_MAX_PAIRS, err, errlen);

	(void)o;
	if (n < 0)
		return n;
	c->n_cnp_pairs = (unsigned)n;
	return 0;
}

/* The defaults are set from the "def" column (qpaced_config_init), the one --help shows. */
static const struct qp_opt options[] = {
	{ "feedback", 'f', QP_OPT_FN, "ADDR:PORT", .fn = opt_feedback,
	  .help = "UDP socket for feedback (switches, peer agents)", .def = "0.0.0.0:4792" },
	{ "allow", 0, QP_OPT_FN, "NET[,NET...]", .fn = opt_allow,
	  .old_short = 'a',
	  .help = "feedback sources accepted: ADDR, ADDR/PREFIX or any", .def = "127.0.0.0/8" },
	{ "metrics", 'm', QP_OPT_FN, "ADDR:PORT|off", .fn = opt_metrics,
	  .help = "Prometheus text over HTTP (keep it on loopback)", .def = "127.0.0.1:9477" },
	{ "cc", 0, QP_OPT_FN, "ALGO", .fn = opt_cc,
	  .help = "default congestion control for QPs that name none", .def = "hpcc" },
	{ "cc-params", 0, QP_OPT_FN, "K=V[,K=V]", .fn = opt_cc_params, .def = "",
	  .help = "parameters of the default algorithm (default the algorithm's own)" },
	{ "credits", 0, QP_OPT_CHOICE, "off|ia", AT(agent.credits), .choices = credit_modes,
	  .help = "receiver credit pacing (IA) for QPs registered as receivers", .def = "off" },
	{ "key", 'k', QP_OPT_FN, "FILE|none", .fn = opt_key,
	  .help = "shared key (32 hex digits) to sign and check feedback", .def = "none" },
	{ "socket", 0, QP_OPT_STRBUF, "PATH", AT(socket),
	  .old_short = 's',
	  .help = "registration / control unix socket (mode 0660)", .def = CTL_DEFAULT_SOCKET },
	{ "rate-table", 'r', QP_OPT_STRBUF, "NAME", AT(rate_table),
	  .help = "rate table: /name = POSIX shm, else a file path", .def = QP_RATETABLE_DEFAULT },
	{ "max-qps", 0, QP_OPT_UINT, "N", AT(agent.max_qps), .min = 1, .max = AGENT_MAX_QPS,
	  .old_short = 'n',
	  .help = "most QPs registered at once (bounds memory)", .def = "1024" },
	{ "peer-port", 0, QP_OPT_UINT, "PORT", AT(agent.peer_port), .min = 1, .max = 65535,
	  .help = "UDP port peer agents listen on (echoes, grants)", .def = "4792" },
	{ "heartbeat", 0, QP_OPT_TIME, "TIME", AT(heartbeat_ns), .min = 100 * QP_NS_PER_US,
	  .max = 10 * QP_NS_PER_S, .help = "rate-table heartbeat period (gates go stale at 100ms)",
	  .def = "10ms" },
	{ "fallback-hold", 0, QP_OPT_TIME, "TIME", AT(fb_hold_ns), .min = QP_NS_PER_MS,
	  .max = 60 * QP_NS_PER_S, .def = "1s",
	  .help = "if this agent dies, gates hold its last rate, window and credits this\n"
		  "long (whole ms)" },
	{ "fallback-safe", 0, QP_OPT_UINT, "PERMILLE", AT(fb_safe_permille), .min = 1,
	  .max = 1000, .def = "100",
	  .help = "then they pace at this share of each QP's line rate, in 1/1000\n"
		  "(never above the last rate this agent set)" },
	{ "int-sample", 0, QP_OPT_FN, "SPEC", .fn = opt_int_sample, .def = "every=1",
	  .help = "INT sampling each QP whose algorithm takes INT asks the switches for:\n"
		  "every=K (one report per K data frames) and/or interval=TIME" },
	{ "busy-poll", 0, QP_OPT_TIME, "TIME", AT(busy_poll_ns), .max = 10 * QP_NS_PER_S,
	  .help = "keep polling this long after feedback (CPU for latency)", .def = "0" },
	{ "enforce", 0, QP_OPT_CHOICE, "off|observe|tc", AT(enforce), .choices = enforce_modes,
	  .def = "off",
	  .help = "unmodified programs: a tc egress BPF program on --dev counts every RoCE\n"
		  "QP (observe) and paces each at its rate (tc, with fq)" },
	{ "dev", 0, QP_OPT_STRBUF, "IFACE", AT(dev), .def = "",
	  .help = "the netdev for --enforce (default: the first RDMA device's)" },
	{ "wire-rtt", 0, QP_OPT_FN, "TIME|auto", .fn = opt_wire_rtt, .def = "auto",
	  .help = "base RTT (hpcc's T) of QPs found on the wire; auto: the time rxe's 64\n"
		  "frames in flight take at the QP's line rate, at least 100us: a new rate\n"
		  "reaches only frames rxe hands over after it" },
	{ "wire-mtu", 0, QP_OPT_UINT, "BYTES", AT(wire_mtu), .min = AGENT_MIN_MTU,
	  .max = AGENT_MAX_MTU, .def = "1024",
	  .help = "payload bytes per packet of QPs found on the wire (rxe: 1024 at 1500)" },
	{ "wire-rate", 0, QP_OPT_RATE, "RATE", AT(wire_rate_bps), .max = AGENT_MAX_LINK_BPS,
	  .def = "0", .help = "their line rate: the slowest link their flows cross (0 = the\n"
		  "device's speed; --enforce tc refuses a device that reports none: virtio,\n"
		  "many cloud NICs). A lower hop rate in INT lowers it for that peer's QPs" },
	{ "wire-start", 0, QP_OPT_RATE, "RATE", AT(wire_start_bps), .max = AGENT_MAX_LINK_BPS,
	  .def = "0",
	  .help = "their first rate, before any feedback: their frames until qpaced knows\n"
		  "the flow, and the algorithm's init_rate (hpcc, dcqcn; 0 = a quarter of\n"
		  "the line, so four flows starting together fit it; raised to the floor,\n"
		  "cut to the line; below the algorithm's min_rate it is refused at start)" },
	{ "wire-qdisc", 0, QP_OPT_CHOICE, "keep|replace", AT(wire_qdisc),
	  .choices = qdisc_policies, .def = "keep",
	  .help = "--enforce tc needs fq: under the device's mq, or in the place of the\n"
		  "kernel's default root; an operator's classless root is kept and qpaced\n"
		  "refuses (keep) or puts fq in its place and it back on exit (replace);\n"
		  "a classful root is never replaced (see --wire-fq-parent)" },
	{ "wire-fq-parent", 0, QP_OPT_FN, "MAJ:MIN|none", .fn = opt_fq_parent, .def = "none",
	  .help = "fq as the leaf of this class of the device's qdisc tree (the class RoCE\n"
		  "takes), the leaf there put back on exit" },
	{ "wire-fq-maxrate", 0, QP_OPT_RATE, "RATE", AT(wire_fq_maxrate_bps),
	  .max = AGENT_MAX_LINK_BPS, .def = "0",
	  .help = "fq's per-flow maxrate (0 = none): caps the burst of frames a stalled\n"
		  "sender left overdue, but costs each frame fq's dequeue lateness at a\n"
		  "flow paced near it" },
	{ "wire-catchup", 0, QP_OPT_UINT, "PCT", AT(wire_catchup_pct), .max = 1000, .def = "0",
	  .help = "fq's maxrate follows PCT% of the highest rate set on the device (at most\n"
		  "--wire-fq-maxrate or the line): a flow whose frames fell overdue (a stalled\n"
		  "sender) catches up at most at that; it caps every flow on the device, TCP\n"
		  "too (0 = off, else 120..1000)" },
	{ "wire-used", 0, QP_OPT_UINT, "PCT", AT(wire_used_pct), .max = 1000, .def = "200",
	  .help = "a rate is at most PCT% of what the flow sent over the last sample (and at\n"
		  "least --wire-start): a rate grows only as the flow uses it, as RFC 7661\n"
		  "grows only a window a flow fills (0 = off, else 110..1000)" },
	{ "wire-timeout", 0, QP_OPT_UINT, "EXP", AT(wire_timeout), .max = 31, .def = "14",
	  .help = "their ACK timeout, 4.096us x 2^EXP (perftest -u, default 14; 0 = none;\n"
		  "the kernel does not say it): the tc program asks their peer for an ACK\n"
		  "every quarter of it, and no rate is so low that a frame takes longer" },
	{ "ecn-mark", 0, QP_OPT_CHOICE, "off|on", AT(ecn_mark), .choices = off_on, .def = "off",
	  .help = "with --enforce: RoCEv2 frames leave ECN-capable (ECT(0)), so an ECN switch\n"
		  "marks them CE instead of dropping (the IPv4 checksum fixed; ICRC unaffected)" },
	{ "cnp", 0, QP_OPT_CHOICE, "off|on", AT(cnp), .choices = off_on, .def = "on",
	  .help = "with --enforce: a tc ingress program; CE-marked RoCEv2 data gets the\n"
		  "sender a CNP (one per QP per 50us), arriving CNPs cut the flow's rate" },
	{ "cnp-peer", 0, QP_OPT_FN, "L=P[,L=P]|none", .fn = opt_cnp_peer, .def = "none",
	  .help = "peer QPN P of local QP L where the kernel's rdma netlink cannot say\n"
		  "(the QP dump is asked first)" },
	{ "ia-idle", 0, QP_OPT_TIME, "TIME", AT(ia_idle_ns), .min = 10 * QP_NS_PER_MS,
	  .max = 60 * QP_NS_PER_S, .def = "1s",
	  .help = "with --credits ia and --enforce tc: a receiving flow found on the wire\n"
		  "with no frame this long leaves the credit pacer (the others' share grows)" },
	{ "wire-hold", 0, QP_OPT_TIME, "TIME", AT(wire_hold_ns), .min = 10 * QP_NS_PER_MS,
	  .max = 60 * QP_NS_PER_S, .def = "1s",
	  .help = "if qpaced dies, the tc program keeps each flow's last rate this long" },
	{ "wire-safe-rate", 0, QP_OPT_RATE, "RATE", AT(wire_safe_bps), .max = AGENT_MAX_LINK_BPS,
	  .def = "0",
	  .help = "then it paces every flow at most at this (never below the floor;\n"
		  "0 = --fallback-safe's share of the line rate)" },
	{ "bpf-pin", 0, QP_OPT_STRBUF, "DIR|none", AT(bpf_pin), .def = "/sys/fs/bpf/qpace",
	  .help = "bpffs directory the tc program's maps are pinned in (DIR/IFACE), so a\n"
		  "restarted qpaced takes its flows over" },
	{ .name = NULL },
};
#define NOPTS (sizeof(options) / sizeof(options[0]) - 1)
_Static_assert(NOPTS <= QP_OPT_MAX, "the reader's seen mask is 64 bits");

const struct qp_opt *qpaced_options(void)
{
	return options;
}

void qpaced_config_init(struct qpaced_config *c)
{
	char err[300];

	memset(c, 0, sizeof(*c));
	agent_params_default(&c->agent);
	/* the defaults parse (test_agent_config checks every one) */
	(void)qp_opt_defaults(options, NOPTS, 0, c, err, sizeof(err));
}

int qpaced_config_set(struct qpaced_config *c, const char *key, const char *value,
		      char *err, size_t errlen)
{
	return qp_opt_set(options, NOPTS, 0, c, key, value, err, errlen);
}

void qpaced_config_reader_init(struct qp_opt_reader *r, struct qpaced_config *c,
			       const char *file)
{
	qp_opt_reader_init(r, options, NOPTS, 0, c, file);
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
	if (c->fb_hold_ns % QP_NS_PER_MS)
		return qp_errmsg(-EINVAL, err, errlen, "fallback-hold: %llu ns: whole milliseconds, "
				 "1ms..60s", (unsigned long long)c->fb_hold_ns);
	if (c->wire_rate_bps && c->wire_rate_bps < AGENT_MIN_LINK_BPS)
		return qp_errmsg(-EINVAL, err, errlen, "wire-rate: %llu bit/s: 0 (the device's "
				 "speed) or %llu..%llu", (unsigned long long)c->wire_rate_bps,
				 (unsigned long long)AGENT_MIN_LINK_BPS,
				 (unsigned long long)AGENT_MAX_LINK_BPS);
	if (c->wire_start_bps && c->wire_start_bps < AGENT_MIN_LINK_BPS)
		return qp_errmsg(-EINVAL, err, errlen, "wire-start: %llu bit/s: 0 (a quarter of the "
				 "line) or %llu..%llu", (unsigned long long)c->wire_start_bps,
				 (unsigned long long)AGENT_MIN_LINK_BPS,
				 (unsigned long long)AGENT_MAX_LINK_BPS);
	if (c->wire_catchup_pct && c->wire_catchup_pct < WIRE_CATCHUP_MIN)
		return qp_errmsg(-EINVAL, err, errlen, "wire-catchup: %llu%%: 0 (off) or %u..1000 "
				 "(below, fq's maxrate would hold frames that are on schedule)",
				 (unsigned long long)c->wire_catchup_pct, WIRE_CATCHUP_MIN);
	if (c->wire_used_pct && c->wire_used_pct < WIRE_USED_MIN_PCT)
		return qp_errmsg(-EINVAL, err, errlen, "wire-used: %llu%%: 0 (off) or %u..1000 "
				 "(below, a flow paced at its rate could hardly grow)",
				 (unsigned long long)c->wire_used_pct, WIRE_USED_MIN_PCT);
	if (c->ecn_mark && c->enforce == QPACED_ENFORCE_OFF)
		return qp_errmsg(-EINVAL, err, errlen, "ecn-mark: the egress program marks: needs "
				 "enforce observe or tc");
	if (c->metrics_port && c->metrics_port == c->fb_port && c->metrics_ip == c->fb_ip)
		return qp_errmsg(-EINVAL, err, errlen, "metrics: same address as feedback");
	return 0;
}

int qpaced_config_help(char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");
	long used;

	if (!f)
		return -errno;
	qp_opt_usage(f, options, NOPTS, 0);
	used = ftell(f);
	fclose(f);
	return used >= 0 && (size_t)used + 1 < len ? 0 : -ENOSPC;
}
