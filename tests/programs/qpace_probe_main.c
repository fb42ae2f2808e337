/* qpace-probe: craft and watch what flows into and out of a qpace agent, for tests and for
 * debugging a deployment by hand.
 *
 *   qpace-probe register local=IP peer=IP [qpn=N peer_qpn=N count=K receiver=1 ...]
 *   qpace-probe send to=IP:PORT type=level|int|echo|notice|credit [fields...]
 *   qpace-probe fuzz to=IP:PORT count=N seed=S
 *   qpace-probe listen port=P [count=N timeout=S]
 *   qpace-probe rate qpn=N [table=NAME]
 *   qpace-probe sender qpn=N seconds=S [table=NAME fallback=R]
 *
 * Arguments are key=value (each subcommand's table below is its help); output lines are
 * key=value too, so shell tests can pick fields with grep/sed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/ctl_client.h"
#include "qpace/fb_auth.h"
#include "qpace/feedback.h"
#include "qpace/gate.h"
#include "qpace/keyfile.h"
#include "qpace/units.h"

#define MAX_ARGS 24

struct arg {
	const char *key, *def, *help;
};

struct cmd {
	const char *name;
	int (*fn)(void);
	const struct arg *args;
	const char *help;
};

static const struct arg *cur_args;
static const char *vals[MAX_ARGS];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "qpace-probe: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	exit(2);
}

static const char *get(const char *key)
{
	for (int i = 0; cur_args[i].key; i++)
		if (strcmp(cur_args[i].key, key) == 0)
			return vals[i] ? vals[i] : cur_args[i].def;
	return die("internal: no argument %s%s", key, ""), NULL;
}

static uint64_t get_u64(const char *key)
{
	const char *s = get(key);
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno)
		die("%s=%s is not a number", key, s);
	return v;
}

static uint32_t get_ip(const char *key)
{
	uint32_t ip;

	if (qp_ipv4_parse(get(key), &ip))
		die("%s=%s is not an IPv4 address", key, get(key));
	return ip;
}

static uint64_t get_unit(const char *key, int (*parse)(const char *, uint64_t *))
{
	uint64_t v;

	if (parse(get(key), &v))
		die("%s=%s: bad value (rates 10G, times 10us, sizes 4K)", key, get(key));
	return v;
}

static struct sockaddr_in get_addr(const char *key)
{
	struct sockaddr_in sa;

	if (qp_sockaddr_parse(get(key), 0, 65535, 0, &sa, NULL, 0))
		die("%s=%s is not IP:PORT", key, get(key));
	return sa;
}

static bool load_key(struct qp_siphash_key *k)
{
	uint8_t raw[QP_SIPHASH_KEY_BYTES];
	char err[300];

	if (!*get("key"))
		return false;
	if (qp_keyfile_read(get("key"), raw, NULL, err, sizeof(err)))
		die("%s%s", err, "");
	qp_siphash_key_load(k, raw);
	return true;
}

static int udp_socket(const char *from)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint32_t ip;

	if (*from && qp_ipv4_parse(from, &ip) == 0) {
		struct sockaddr_in sa = qp_sockaddr_in(ip, 0);

		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("bind %s: %s", from, strerror(errno));
	}
	return fd;
}

/* ---- register ---- */

static const struct arg register_args[] = {
	{ "socket", "", "agent socket (default $QPACE_SOCKET or the agent's default)" },
	{ "local", "10.0.0.1", "this host's IP" }, { "peer", "10.0.0.2", "the peer's IP" },
	{ "qpn", "0x11", "first local QPN" }, { "peer_qpn", "0x21", "first peer QPN" },
	{ "count", "1", "QPs to register (QPNs counting up)" },
	{ "sport", "0", "UDP source port of our data (0 = unknown)" },
	{ "algo", "", "algorithm (\"\" = the agent's default)" }, { "params", "", "its params" },
	{ "receiver", "0", "1 = receives data: the agent paces credits to the peer" },
	{ "link", "1G", "link rate" }, { "rtt", "100us", "base RTT" }, { "mtu", "1000", "MTU" },
	{ "hold", "0", "seconds to stay registered (0 = until killed)" },
	{ .key = NULL },
};

static int cmd_register(void)
{
	struct ctl_client *c;
	char err[300];
	uint64_t n = get_u64("count"), hold = get_u64("hold");
	qp_time_ns end;

	if (ctl_client_open(get("socket"), &c, err, sizeof(err)))
		die("%s%s", err, "");
	for (uint64_t i = 0; i < n; i++) {
		struct ctl_msg m = { .type = CTL_T_REGISTER };
		struct agent_qp_reg *r = &m.u.reg;

		*r = (struct agent_qp_reg){
			.qpn = (uint32_t)(get_u64("qpn") + i),
			.peer_qpn = (uint32_t)(get_u64("peer_qpn") + i),
			.local_ip = get_ip("local"), .peer_ip = get_ip("peer"),
			.sport = (uint16_t)get_u64("sport"),
			.flags = get_u64("receiver") ? AGENT_QP_RECEIVER : 0,
			.mtu_bytes = (uint32_t)get_u64("mtu"),
			.link_bps = get_unit("link", qp_parse_rate),
			.base_rtt_ns = get_unit("rtt", qp_parse_time),
		};
		snprintf(r->algo, sizeof(r->algo), "%s", get("algo"));
		snprintf(r->params, sizeof(r->params), "%s", get("params"));
		if (ctl_client_call(c, &m, NULL, NULL, 5 * QP_NS_PER_S, NULL, err, sizeof(err))) {
			printf("register qpn=0x%06x status=error text=\"%s\"\n", r->qpn, err);
			fflush(stdout);
			ctl_client_close(c);
			return 1;
		}
		printf("register qpn=0x%06x status=ok\n", r->qpn);
	}
	fflush(stdout);
	end = hold ? qp_now_ns() + hold * QP_NS_PER_S : QP_TIME_NEVER;
	while (!stop && qp_now_ns() < end)
		usleep(20000);
	ctl_client_close(c);
	return 0;
}

/* ---- send, fuzz ---- */

static void receive(int fd, qp_time_ns start, qp_time_ns end, uint64_t count,
		    const struct qp_siphash_key *k);

static const struct arg send_args[] = {
	{ "to", "127.0.0.1:4792", "agent feedback address" },
	{ "from", "", "source IP to bind (\"\" = any)" },
	{ "key", "", "key file: sign each message" },
	{ "type", "level", "int, echo, notice, level or credit" },
	{ "src", "10.0.0.1", "flow: data sender" }, { "dst", "10.0.0.2", "flow: receiver" },
	{ "sport", "0", "flow: UDP source port" }, { "qp", "0x21", "flow: dest QP" },
	{ "level", "3", "level: 0..3 (7 = ack)" }, { "seq", "1", "level/credit sequence" },
	{ "bytes", "4000", "credit bytes" }, { "interval", "100us", "credit interval" },
	{ "psn", "1", "int: first PSN (+1 per message)" }, { "hops", "5", "int: hop count" },
	{ "util", "1.2", "int: utilization of the last hop (others 0.5)" },
	{ "qlen", "10000", "int/notice/level: queue bytes" }, { "link", "10G", "hop link" },
	{ "to_receiver", "0", "int: 1 = delivered to the receiver (echo role)" },
	{ "count", "1", "messages to send" }, { "gap", "10us", "time between messages" },
	{ "replies", "0", "then print replies to this socket for this many ms (level acks)" },
	{ .key = NULL },
};

static void build(struct fb_msg *m, uint64_t i, qp_time_ns now, uint64_t *tx)
{
	struct fb_flow f = { get_ip("src"), get_ip("dst"), (uint16_t)get_u64("sport"),
			     (uint32_t)get_u64("qp") };
	const char *type = get("type");
	qp_rate_bps link = get_unit("link", qp_parse_rate);
	uint32_t qlen = (uint32_t)get_u64("qlen");

	memset(m, 0, sizeof(*m));
	if (strcmp(type, "int") == 0 || strcmp(type, "echo") == 0) {
		unsigned nh = (unsigned)get_u64("hops");
		double util = atof(get("util"));

		m->type = type[0] == 'i' ? FB_T_INT : FB_T_ECHO;
		m->flags = get_u64("to_receiver") ? FB_F_TO_RECEIVER : 0;
		m->u.int_report.flow = f;
		m->u.int_report.psn = (uint32_t)(get_u64("psn") + i) & 0xffffff;
		m->u.int_report.nhops = (uint8_t)(nh < 1 || nh > QP_INT_MAX_HOPS ? 1 : nh);
		for (unsigned h = 0; h < m->u.int_report.nhops; h++) {
			bool last = h + 1 == m->u.int_report.nhops;

			tx[h] += (uint64_t)((last ? util : 0.5) * (double)link / 8e9 *
					    (double)get_unit("gap", qp_parse_time));
			m->u.int_report.hops[h] = (struct qp_int_hop){
				.switch_id = 100 + h, .port = 1, .ts_ns = now, .tx_bytes = tx[h],
				.qlen_bytes = last ? qlen : 0, .link_bps = link };
		}
	} else if (strcmp(type, "notice") == 0) {
		m->type = FB_T_NOTICE;
		m->u.notice = (struct fb_notice){ .flow = f, .switch_id = 100, .flows = 2,
						  .queue_bytes = qlen, .link_bps = link,
						  .reflected_ts_ns = now };
	} else if (strcmp(type, "level") == 0) {
		m->type = FB_T_LEVEL;
		m->u.level = (struct fb_level){ .flow = f, .switch_id = 100, .port = 1,
						.level = (uint8_t)get_u64("level"), .queue_bytes = qlen,
						.seq = (uint32_t)(get_u64("seq") + i) };
	} else if (strcmp(type, "credit") == 0) {
		m->type = FB_T_CREDIT;
		m->u.credit = (struct fb_credit){ f, (uint32_t)(get_u64("seq") + i),
						  (uint32_t)get_u64("bytes"),
						  get_unit("interval", qp_parse_time) };
	} else {
		die("type=%s: not int, echo, notice, level or credit%s", type, "");
	}
}

static int cmd_send(void)
{
	struct sockaddr_in to = get_addr("to");
	struct qp_siphash_key k;
	bool sign = load_key(&k);
	int fd = udp_socket(get("from"));
	uint64_t n = get_u64("count"), tx[QP_INT_MAX_HOPS] = { 0 }, sent = 0;
	qp_time_ns gap = get_unit("gap", qp_parse_time), next = qp_now_ns();

	for (uint64_t i = 0; i < n && !stop; i++) {
		uint8_t buf[FB_MAX_LEN];
		struct fb_msg m;
		int len;

		while (qp_now_ns() < next)
			;
		build(&m, i, qp_now_ns(), tx);
		len = fb_encode(buf, sizeof(buf), &m);
		if (len > 0 && sign)
			len = fb_auth_sign(buf, sizeof(buf), (size_t)len, &k);
		if (len <= 0)
			die("cannot encode this %s message%s", get("type"), "");
		sent += sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&to, sizeof(to)) == len;
		next += gap;
	}
	printf("send type=%s sent=%llu\n", get("type"), (unsigned long long)sent);
	fflush(stdout);
	if (get_u64("replies"))
		receive(fd, qp_now_ns(), qp_now_ns() + get_u64("replies") * QP_NS_PER_MS, 0,
			sign ? &k : NULL);
	close(fd);
	return 0;
}

static const struct arg fuzz_args[] = {
	{ "to", "127.0.0.1:4792", "agent feedback address" },
	{ "from", "", "source IP to bind" }, { "key", "", "unused" },
	{ "count", "10000", "datagrams" }, { "seed", "1", "generator seed" },
	{ .key = NULL },
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Random bytes, truncated and bit-flipped valid messages of every type, and oversized
 * datagrams, in a bounded, seeded stream. */
static int cmd_fuzz(void)
{
	struct sockaddr_in to = get_addr("to");
	int fd = udp_socket(get("from"));
	uint64_t seed = get_u64("seed"), n = get_u64("count"), sent = 0;
	static const uint8_t types[] = { FB_T_INT, FB_T_NOTICE, FB_T_LEVEL, FB_T_CREDIT,
					 FB_T_ECHO };

	for (uint64_t i = 0; i < n && !stop; i++) {
		uint8_t buf[3000];
		size_t len;
		struct fb_msg m = { .type = types[i % 5] };

		m.u.int_report.nhops = (uint8_t)(1 + splitmix(&seed) % QP_INT_MAX_HOPS);
		m.u.int_report.hops[0].link_bps = QP_GBPS;
		len = (size_t)fb_encode(buf, sizeof(buf), &m);
		switch (i % 4) {
		case 0: /* random bytes, any length up to oversize */
			len = splitmix(&seed) % sizeof(buf);
			for (size_t b = 0; b < len; b++)
				buf[b] = (uint8_t)splitmix(&seed);
			break;
		case 1: /* truncated */
			len = splitmix(&seed) % (len + 1);
			break;
		default: /* a few bytes changed */
			for (unsigned k = 1 + splitmix(&seed) % 4; k; k--)
				buf[splitmix(&seed) % len] = (uint8_t)splitmix(&seed);
		}
		sent += sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len;
		if (i % 64 == 63)
			usleep(200); /* bounded rate: the test is about content, not load */
	}
	printf("fuzz sent=%llu\n", (unsigned long long)sent);
	close(fd);
	return 0;
}

/* ---- listen ---- */

static void print_dgram(const uint8_t *buf, ssize_t len, qp_time_ns start,
			const struct qp_siphash_key *k)
{
	struct fb_msg m;
	const struct fb_flow *f = &m.u.level.flow;
	char s[QP_IPV4_STRLEN], d[QP_IPV4_STRLEN];

	if (fb_decode(&m, buf, (size_t)len)) {
		printf("t=%.6f undecodable len=%zd\n", (qp_now_ns() - start) / 1e9, len);
		return;
	}
	if (m.type == FB_T_INT || m.type == FB_T_ECHO)
		f = &m.u.int_report.flow;
	else if (m.type == FB_T_CREDIT)
		f = &m.u.credit.flow;
	else if (m.type == FB_T_NOTICE)
		f = &m.u.notice.flow;
	printf("t=%.6f type=%s src=%s dst=%s qp=0x%06x", (qp_now_ns() - start) / 1e9,
	       fb_type_name(m.type), qp_ipv4_fmt(f->src_ip, s, sizeof(s)),
	       qp_ipv4_fmt(f->dst_ip, d, sizeof(d)), f->dest_qp);
	if (m.type == FB_T_CREDIT)
		printf(" seq=%u bytes=%u interval_ns=%llu", m.u.credit.seq, m.u.credit.credit_bytes,
		       (unsigned long long)m.u.credit.interval_ns);
	if (m.type == FB_T_LEVEL)
		printf(" level=%u acked=%u seq=%u", m.u.level.level, m.u.level.acked, m.u.level.seq);
	if (m.type == FB_T_INT || m.type == FB_T_ECHO)
		printf(" psn=%u hops=%u", m.u.int_report.psn, m.u.int_report.nhops);
	if (k)
		printf(" tag=%s", fb_auth_verify(buf, (size_t)len, k) ? "bad" : "ok");
	printf("\n");
	fflush(stdout);
}

/* Print what arrives on @fd until @end, @count datagrams (0 = any number) or a signal. */
static void receive(int fd, qp_time_ns start, qp_time_ns end, uint64_t count,
		    const struct qp_siphash_key *k)
{
	struct timeval tv = { 0, 20000 };
	uint64_t n = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!stop && qp_now_ns() < end && (!count || n < count)) {
		uint8_t buf[4096];
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len <= 0)
			continue;
		n++;
		print_dgram(buf, len, start, k);
	}
}

static const struct arg listen_args[] = {
	{ "bind", "127.0.0.1", "address to listen on" }, { "port", "4792", "UDP port" },
	{ "count", "0", "stop after this many (0 = no limit)" },
	{ "timeout", "5", "stop after this many seconds" }, { "key", "", "check tags" },
	{ .key = NULL },
};

static int cmd_listen(void)
{
	struct sockaddr_in sa = qp_sockaddr_in(get_ip("bind"), (uint16_t)get_u64("port"));
	struct qp_siphash_key k;
	bool check = load_key(&k);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	qp_time_ns start = qp_now_ns();

	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind port %s: %s", get("port"), strerror(errno));
	printf("listen port=%s ready\n", get("port"));
	fflush(stdout);
	receive(fd, start, start + get_u64("timeout") * QP_NS_PER_S, get_u64("count"),
		check ? &k : NULL);
	close(fd);
	return 0;
}

/* ---- rate table: read a slot; pace a sender through the gate ---- */

static const struct arg rate_args[] = {
	{ "table", QP_RATETABLE_DEFAULT, "rate table name" }, { "qpn", "0x11", "QPN" },
	{ .key = NULL },
};

static int cmd_rate(void)
{
	struct qp_ratetable *t;
	struct qp_rate_entry e;
	uint32_t hint = 0;
	char err[300];
	int rc;

	if (qp_ratetable_open(get("table"), &t, err, sizeof(err))) {
		printf("rate status=no_table text=\"%s\"\n", err);
		return 1;
	}
	rc = qp_ratetable_lookup(t, (uint32_t)get_u64("qpn"), &hint, &e);
	if (rc)
		printf("rate status=no_slot\n");
	else
		printf("rate qpn=0x%06x rate_bps=%llu credit_bytes=%llu flags=%u gen=%u "
		       "heartbeat_age_ms=%.1f\n", e.qpn, (unsigned long long)e.rate_bps,
		       (unsigned long long)e.credit_bytes, e.flags, e.gen,
		       (qp_now_ns() - qp_ratetable_heartbeat_ns(t)) / 1e6);
	qp_ratetable_close(t);
	return rc ? 1 : 0;
}

static const struct arg sender_args[] = {
	{ "table", QP_RATETABLE_DEFAULT, "rate table name" }, { "qpn", "0x11", "QPN" },
	{ "seconds", "2", "how long to send" }, { "fallback", "100M", "gate fallback rate" },
	{ "chunk", "4K", "piece size" }, { "interval", "100ms", "report every" },
	{ "wait", "hybrid", "how the gate waits: hybrid, sleep or spin" },
	{ .key = NULL },
};

static const char *fallback_key(enum qp_gate_fallback f)
{
	static const char *const keys[QP_GATE_FB_COUNT] = {
		[QP_GATE_FB_NONE] = "none", [QP_GATE_FB_NO_TABLE] = "no_table",
		[QP_GATE_FB_NO_SLOT] = "no_slot", [QP_GATE_FB_STALE] = "stale",
		[QP_GATE_FB_NO_RATE] = "no_rate",
	};

	return (unsigned)f < QP_GATE_FB_COUNT ? keys[f] : "unknown";
}

static void gate_log(void *arg, const char *line)
{
	(void)arg;
	printf("gate %s\n", line);
	fflush(stdout);
}

/* A greedy sender through the real pacer (gate + rate source); the post is a no-op. One
 * line per interval: what the gate let through, the rate in force, fallback or not. */
static int cmd_sender(void)
{
	struct qp_gate_params gp = { .fallback_bps = get_unit("fallback", qp_parse_rate),
				     .chunk_bytes = get_unit("chunk", qp_parse_bytes) };
	struct qp_wait w = { .mode = QP_WAIT_HYBRID };
	struct qp_rate_src src;
	struct qp_pacer p;
	char err[300];
	qp_time_ns start = qp_now_ns(), end = start + get_u64("seconds") * QP_NS_PER_S;
	qp_time_ns every = get_unit("interval", qp_parse_time), mark = start + every;
	uint64_t bytes = 0;

	if (qp_gate_params_resolve(&gp, err, sizeof(err)))
		die("%s%s", err, "");
	if (qp_wait_mode_parse(get("wait"), &w.mode))
		die("wait=%s: not hybrid, sleep or spin%s", get("wait"), "");
	qp_rate_src_init(&src, get("table"), gp.stale_ns, gate_log, NULL);
	qp_pacer_init(&p, &gp, &w, &src, (uint32_t)get_u64("qpn"), start);
	while (!stop) {
		struct qp_gate_verdict v;
		qp_time_ns now;

		qp_pacer_take(&p, gp.chunk_bytes, 0, -1, NULL, NULL, &v);
		bytes += v.bytes;
		now = qp_now_ns();
		if (now >= mark) {
			printf("sender t=%.3f rate_bps=%.0f in_force_bps=%llu fallback=%s\n",
			       (now - start) / 1e9, bytes * 8e9 / (double)(now - mark + every),
			       (unsigned long long)v.rate_bps, fallback_key(v.fallback));
			fflush(stdout);
			bytes = 0;
			mark = now + every;
		}
		if (now >= end)
			break;
	}
	qp_rate_src_fini(&src);
	return 0;
}

static const struct cmd cmds[] = {
	{ "register", cmd_register, register_args, "register QPs with the agent and hold them" },
	{ "send", cmd_send, send_args, "send feedback messages" },
	{ "fuzz", cmd_fuzz, fuzz_args, "send random and mutated feedback datagrams" },
	{ "listen", cmd_listen, listen_args, "print the feedback messages that arrive" },
	{ "rate", cmd_rate, rate_args, "read a QP's rate-table slot" },
	{ "sender", cmd_sender, sender_args, "pace a no-op sender through the gate" },
	{ .name = NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: qpace-probe COMMAND [key=value...]\n");
	for (const struct cmd *c = cmds; c->name; c++) {
		fprintf(f, "\n%s: %s\n", c->name, c->help);
		for (const struct arg *a = c->args; a->key; a++)
			fprintf(f, "  %-12s %s (default \"%s\")\n", a->key, a->help, a->def);
	}
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	for (c = cmds; c->name && strcmp(c->name, argv[1]); c++)
		;
	if (!c->name) {
		fprintf(stderr, "qpace-probe: unknown command \"%s\"\n", argv[1]);
		usage(stderr);
		return 1;
	}
	cur_args = c->args;
	for (int i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		int k;

		for (k = 0; eq && c->args[k].key; k++)
			if (strlen(c->args[k].key) == (size_t)(eq - argv[i]) &&
			    strncmp(c->args[k].key, argv[i], (size_t)(eq - argv[i])) == 0)
				break;
		if (!eq || !c->args[k].key)
			die("%s: unknown argument \"%s\" (see qpace-probe help)", c->name, argv[i]);
		vals[k] = eq + 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	return c->fn();
}
