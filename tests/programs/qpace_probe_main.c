/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-probe: craft and watch what flows into and out of a qpace agent, for tests and for
 * debugging a deployment by hand.
 *
 *   qpace-probe register local=IP peer=IP [qpn=N peer_qpn=N count=K receiver=on txstate=on ...]
 *   qpace-probe send to=IP:PORT type=level|int|echo|notice|credit [fields...]
 *   qpace-probe fuzz to=IP:PORT count=N seed=S
 *   qpace-probe listen port=P [count=N timeout=S]
 *   qpace-probe replay pcap=FILE to=IP:PORT [count=N port=4792]
 *   qpace-probe rate qpn=N [table=NAME]
 *   qpace-probe sender qpn=N seconds=S [table=NAME link=R fb_hold=T safe=PERMILLE]
 *
 * Arguments are key=value, fed through one option table (qpace/opt.h) whose rows name the
 * subcommands that take them, their ranges and defaults (`qpace-probe help` lists them);
 * output lines are key=value too, so shell tests can pick fields with grep/sed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/ctl_client.h"
#include "qpace/errmsg.h"
#include "qpace/fb_auth.h"
#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "qpace/gate.h"
#include "qpace/keyfile.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "pcap_frames.h"

enum { C_REGISTER = 1, C_SEND = 2, C_FUZZ = 4, C_LISTEN = 8, C_RATE = 16, C_SENDER = 32,
       C_REPLAY = 64 };

static const char *const type_names[] = { "int", "echo", "notice", "level", "credit", NULL };
static const char *const enforce_names[] = { "gate", "nic", NULL };  /* AGENT_ENF_* */
enum { T_INT, T_ECHO, T_NOTICE, T_LEVEL, T_CREDIT };

/* Every argument of every subcommand; a row says which take it. */
static struct probe {
	const char *socket, *from, *key, *bind, *table, *pcap;
	char algo[AGENT_ALGO_MAX], params[AGENT_PARAMS_MAX];
	uint32_t local, peer, src, dst;          /* host order */
	struct sockaddr_in to;
	uint64_t qpn, peer_qpn, qp, count, sport, hold, mtu, level, seq, bytes, psn, hops, qlen;
	uint64_t replies, seed, port, timeout, seconds, chunk, sender, safe;
	bool receiver, to_receiver, txstate;
	unsigned type, enforce;
	uint64_t txpsn;
	double util;
	qp_rate_bps link_bps;
	qp_time_ns rtt_ns, interval_ns, gap_ns, fb_hold_ns;
	enum qp_wait_mode wait;
} P;

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
	exit(QP_EXIT_FAIL);
}

/* ---- the values that are not the engine's own types; each finds its field by .off ---- */

#define FIELD(type) ((type *)(void *)((char *)conf + o->off))

static int opt_ip(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	uint32_t ip;

	if (qp_ipv4_parse(v, &ip))
		return qp_errmsg(-EINVAL, err, len, "not an IPv4 address");
	*FIELD(uint32_t) = ip;
	return 0;
}

static int opt_addr(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	if (qp_sockaddr_parse(v, 0, 65535, 0, FIELD(struct sockaddr_in), NULL, 0))
		return qp_errmsg(-EINVAL, err, len, "not IP:PORT");
	return 0;
}

static int opt_util(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	double u;

	if (qp_parse_double(v, &u) || u < 0 || u > 100)
		return qp_errmsg(-EINVAL, err, len, "not a utilization in 0..100 (1.2 = 120%%)");
	*FIELD(double) = u;
	return 0;
}

static int opt_wait(const struct qp_opt *o, void *conf, const char *v, char *err, size_t len)
{
	if (qp_wait_mode_parse(v, FIELD(enum qp_wait_mode)))
		return qp_errmsg(-EINVAL, err, len, "not hybrid, sleep or spin");
	return 0;
}

#define AT(field) QP_OPT_AT(struct probe, field)
#define QPN(field) QP_OPT_UINT, "QPN", AT(field), .max = QP_RATE_QPN_MAX, .flags = QP_OPT_F_HEX
#define IP(field) QP_OPT_FN, "IP", AT(field), .fn = opt_ip
#define ADDR(field) QP_OPT_FN, "IP:PORT", AT(field), .fn = opt_addr
#define N(lo, hi) .min = (lo), .max = (hi)

static const struct qp_opt args[] = {
	/* register */
	{ "socket", 0, QP_OPT_STR, "PATH", AT(socket), .cmds = C_REGISTER,
	  .help = "agent socket (default $QPACE_SOCKET or the agent's default)" },
	{ "local", 0, IP(local), .cmds = C_REGISTER, .help = "this host's IP", .def = "10.0.0.1" },
	{ "peer", 0, IP(peer), .cmds = C_REGISTER, .help = "the peer's IP", .def = "10.0.0.2" },
	{ "qpn", 0, QPN(qpn), .cmds = C_REGISTER, .help = "first local QPN", .def = "0x11" },
	{ "peer_qpn", 0, QPN(peer_qpn), .cmds = C_REGISTER, .help = "first peer QPN",
	  .def = "0x21" },
	{ "count", 0, QP_OPT_UINT, "N", AT(count), N(1, QP_RATE_QPN_MAX), .cmds = C_REGISTER,
	  .help = "QPs to register (QPNs counting up)", .def = "1" },
	{ "sport", 0, QP_OPT_UINT, "PORT", AT(sport), N(0, 65535), .cmds = C_REGISTER | C_SEND,
	  .help = "UDP source port of the data (0 = unknown)", .def = "0" },
	{ "algo", 0, QP_OPT_STRBUF, "ALGO", AT(algo), .cmds = C_REGISTER,
	  .help = "algorithm (default: the agent's)" },
	{ "params", 0, QP_OPT_STRBUF, "K=V,...", AT(params), .cmds = C_REGISTER,
	  .help = "its params (default: its own)" },
	{ "receiver", 0, QP_OPT_FLAG, "on|off", AT(receiver), .cmds = C_REGISTER,
	  .help = "on = receives data: the agent paces credits to the peer", .def = "off" },
	{ "link", 0, QP_OPT_RATE, "RATE", AT(link_bps), N(QP_KBPS, 10000 * QP_GBPS),
	  .cmds = C_REGISTER, .help = "link rate", .def = "1G" },
	{ "rtt", 0, QP_OPT_TIME, "TIME", AT(rtt_ns), N(0, 100 * QP_NS_PER_S), .cmds = C_REGISTER,
	  .help = "base RTT", .def = "100us" },
	{ "mtu", 0, QP_OPT_UINT, "BYTES", AT(mtu), N(1, 65535), .cmds = C_REGISTER, .help = "MTU",
	  .def = "1000" },
	{ "txstate", 0, QP_OPT_FLAG, "on|off", AT(txstate), .cmds = C_REGISTER,
	  .help = "on = then report each QP's posted PSN and enforcer (TXSTATE)", .def = "off" },
	{ "txpsn", 0, QP_OPT_UINT, "PSN", AT(txpsn), N(0, 0xffffff), .cmds = C_REGISTER,
	  .help = "txstate: the posted PSN", .def = "0" },
	{ "enforce", 0, QP_OPT_CHOICE, "gate|nic", AT(enforce), .choices = enforce_names,
	  .cmds = C_REGISTER, .help = "txstate: what enforces the rate", .def = "gate" },
	{ "hold", 0, QP_OPT_UINT, "S", AT(hold), N(0, 86400), .cmds = C_REGISTER,
	  .help = "seconds to stay registered (0 = until killed)", .def = "0" },
	/* send, fuzz */
	{ "to", 0, ADDR(to), .cmds = C_SEND | C_FUZZ | C_REPLAY, .help = "agent feedback address",
	  .def = "127.0.0.1:4792" },
	{ "from", 0, QP_OPT_STR, "IP", AT(from), .cmds = C_SEND | C_FUZZ | C_REPLAY,
	  .help = "source IP to bind (default: any)" },
	{ "key", 0, QP_OPT_STR, "FILE", AT(key), .cmds = C_SEND | C_FUZZ | C_LISTEN,
	  .help = "key file: send signs each message, listen checks tags (fuzz: unused)" },
	{ "sender", 0, QP_OPT_UINT, "ID", AT(sender), N(0, UINT32_MAX), .cmds = C_SEND,
	  .help = "with key: the signer id the messages carry (0 = a random one)", .def = "0" },
	{ "type", 0, QP_OPT_CHOICE, "TYPE", AT(type), .choices = type_names, .cmds = C_SEND,
	  .help = "int, echo, notice, level or credit", .def = "level" },
	{ "src", 0, IP(src), .cmds = C_SEND, .help = "flow: data sender", .def = "10.0.0.1" },
	{ "dst", 0, IP(dst), .cmds = C_SEND, .help = "flow: receiver", .def = "10.0.0.2" },
	{ "qp", 0, QPN(qp), .cmds = C_SEND, .help = "flow: dest QP", .def = "0x21" },
	{ "level", 0, QP_OPT_UINT, "L", AT(level), N(0, 7), .cmds = C_SEND,
	  .help = "level: 0..3 (7 = ack)", .def = "3" },
	{ "seq", 0, QP_OPT_UINT, "N", AT(seq), N(0, UINT32_MAX), .cmds = C_SEND,
	  .help = "level/credit sequence", .def = "1" },
	{ "bytes", 0, QP_OPT_UINT, "N", AT(bytes), N(0, UINT32_MAX), .cmds = C_SEND,
	  .help = "credit bytes", .def = "4000" },
	{ "interval", 0, QP_OPT_TIME, "TIME", AT(interval_ns), N(0, 100 * QP_NS_PER_S),
	  .cmds = C_SEND, .help = "credit interval", .def = "100us" },
	{ "psn", 0, QP_OPT_UINT, "PSN", AT(psn), N(0, 0xffffff), .cmds = C_SEND,
	  .help = "int: first PSN (+1 per message)", .def = "1" },
	{ "hops", 0, QP_OPT_UINT, "N", AT(hops), N(1, QP_INT_MAX_HOPS), .cmds = C_SEND,
	  .help = "int: hop count", .def = "5" },
	{ "util", 0, QP_OPT_FN, "U", AT(util), .fn = opt_util, .cmds = C_SEND,
	  .help = "int: utilization of the last hop (others 0.5)", .def = "1.2" },
	{ "qlen", 0, QP_OPT_UINT, "BYTES", AT(qlen), N(0, UINT32_MAX), .cmds = C_SEND,
	  .help = "int/notice/level: queue bytes", .def = "10000" },
	{ "link", 0, QP_OPT_RATE, "RATE", AT(link_bps), N(QP_KBPS, 10000 * QP_GBPS),
	  .cmds = C_SEND, .help = "hop link", .def = "10G" },
	{ "to_receiver", 0, QP_OPT_FLAG, "on|off", AT(to_receiver), .cmds = C_SEND,
	  .help = "int: on = delivered to the receiver (echo role)", .def = "off" },
	{ "count", 0, QP_OPT_UINT, "N", AT(count), N(0, UINT32_MAX), .cmds = C_SEND,
	  .help = "messages to send", .def = "1" },
	{ "gap", 0, QP_OPT_TIME, "TIME", AT(gap_ns), N(0, 100 * QP_NS_PER_S), .cmds = C_SEND,
	  .help = "time between messages", .def = "10us" },
	{ "replies", 0, QP_OPT_UINT, "MS", AT(replies), N(0, 3600000), .cmds = C_SEND,
	  .help = "then print replies to this socket for this many ms (level acks)", .def = "0" },
	{ "count", 0, QP_OPT_UINT, "N", AT(count), N(0, UINT32_MAX), .cmds = C_FUZZ,
	  .help = "datagrams", .def = "10000" },
	{ "seed", 0, QP_OPT_UINT, "N", AT(seed), N(0, UINT64_MAX), .cmds = C_FUZZ,
	  .help = "generator seed", .def = "1" },
	/* listen */
	{ "bind", 0, QP_OPT_STR, "IP", AT(bind), .cmds = C_LISTEN, .help = "address to listen on",
	  .def = "127.0.0.1" },
	{ "port", 0, QP_OPT_UINT, "PORT", AT(port), N(1, 65535), .cmds = C_LISTEN,
	  .help = "UDP port", .def = "4792" },
	{ "count", 0, QP_OPT_UINT, "N", AT(count), N(0, UINT32_MAX), .cmds = C_LISTEN,
	  .help = "stop after this many (0 = no limit)", .def = "0" },
	{ "timeout", 0, QP_OPT_UINT, "S", AT(timeout), N(0, 86400), .cmds = C_LISTEN,
	  .help = "stop after this many seconds", .def = "5" },
	/* replay */
	{ "pcap", 0, QP_OPT_STR, "FILE", AT(pcap), .cmds = C_REPLAY,
	  .help = "capture to replay (qpace-switch --pcap, tcpdump -w)" },
	{ "port", 0, QP_OPT_UINT, "PORT", AT(port), N(1, 65535), .cmds = C_REPLAY,
	  .help = "replay the UDP payloads of frames to this destination port", .def = "4792" },
	{ "count", 0, QP_OPT_UINT, "N", AT(count), N(0, UINT32_MAX), .cmds = C_REPLAY,
	  .help = "at most this many datagrams (0 = all)", .def = "0" },
	/* rate, sender */
	{ "table", 0, QP_OPT_STR, "NAME", AT(table), .cmds = C_RATE | C_SENDER,
	  .help = "rate table name", .def = QP_RATETABLE_DEFAULT },
	{ "qpn", 0, QPN(qpn), .cmds = C_RATE | C_SENDER, .help = "QPN", .def = "0x11" },
	{ "seconds", 0, QP_OPT_UINT, "S", AT(seconds), N(0, 86400), .cmds = C_SENDER,
	  .help = "how long to send", .def = "2" },
	{ "link", 0, QP_OPT_RATE, "RATE", AT(link_bps), N(QP_GATE_MIN_BPS, QP_GATE_MAX_BPS),
	  .cmds = C_SENDER, .help = "the QP's line rate (the gate's line_bps)", .def = "400M" },
	{ "fb_hold", 0, QP_OPT_TIME, "TIME", AT(fb_hold_ns), N(0, QP_GATE_MAX_HOLD_NS),
	  .cmds = C_SENDER, .help = "agent lost: hold its rate this long (0 = the agent's policy)",
	  .def = "0" },
	{ "safe", 0, QP_OPT_UINT, "PERMILLE", AT(safe), N(0, QP_GATE_MAX_PERMILLE),
	  .cmds = C_SENDER, .help = "then this share of link, 1/1000 (0 = the agent's policy)",
	  .def = "0" },
	{ "chunk", 0, QP_OPT_BYTES, "BYTES", AT(chunk), N(QP_GATE_MIN_BYTES, QP_GATE_MAX_BYTES),
	  .cmds = C_SENDER, .help = "piece size", .def = "4K" },
	{ "interval", 0, QP_OPT_TIME, "TIME", AT(interval_ns), N(QP_NS_PER_MS, 60 * QP_NS_PER_S),
	  .cmds = C_SENDER, .help = "report every", .def = "100ms" },
	{ "wait", 0, QP_OPT_FN, "MODE", AT(wait), .fn = opt_wait, .cmds = C_SENDER,
	  .help = "how the gate waits: hybrid, sleep or spin", .def = "hybrid" },
};
#define NARGS (sizeof(args) / sizeof(args[0]))
_Static_assert(NARGS <= QP_OPT_MAX, "one table");

static bool load_key(struct qp_siphash_key *k, uint8_t raw[QP_SIPHASH_KEY_BYTES])
{
	char err[300];

	if (!P.key)
		return false;
	if (qp_keyfile_read(P.key, raw, NULL, err, sizeof(err)))
		die("%s%s", err, "");
	qp_siphash_key_load(k, raw);
	return true;
}

static int udp_socket(const char *from)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint32_t ip;

	if (from && qp_ipv4_parse(from, &ip) == 0) {
		struct sockaddr_in sa = qp_sockaddr_in(ip, 0);

		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("bind %s: %s", from, strerror(errno));
	}
	return fd;
}

/* ---- register ---- */


static int cmd_register(void)
{
	struct ctl_client *c;
	char err[300];
	uint64_t n = P.count, hold = P.hold;
	qp_time_ns end;

	if (ctl_client_open(P.socket, &c, err, sizeof(err)))
		die("%s%s", err, "");
	for (uint64_t i = 0; i < n; i++) {
		struct ctl_msg m = { .type = CTL_T_REGISTER };
		struct agent_qp_reg *r = &m.u.reg;

		*r = (struct agent_qp_reg){
			.qpn = (uint32_t)(P.qpn + i),
			.peer_qpn = (uint32_t)(P.peer_qpn + i),
			.local_ip = P.local, .peer_ip = P.peer,
			.sport = (uint16_t)P.sport,
			.flags = P.receiver ? AGENT_QP_RECEIVER : 0,
			.mtu_bytes = (uint32_t)P.mtu,
			.link_bps = P.link_bps,
			.base_rtt_ns = P.rtt_ns,
		};
		snprintf(r->algo, sizeof(r->algo), "%s", P.algo);
		snprintf(r->params, sizeof(r->params), "%s", P.params);
		if (ctl_client_call(c, &m, NULL, NULL, 5 * QP_NS_PER_S, NULL, err, sizeof(err))) {
			printf("register qpn=0x%06x status=error text=\"%s\"\n", r->qpn, err);
			fflush(stdout);
			ctl_client_close(c);
			return 1;
		}
		if (P.txstate) {
			struct ctl_msg t = { .type = CTL_T_TXSTATE, .u.txstate = {
				.qpn = (uint32_t)(P.qpn + i), .psn = (uint32_t)P.txpsn,
				.enforce = (uint8_t)P.enforce } };

			if (ctl_client_send(c, &t))
				die("sending txstate failed%s%s", "", "");
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


static void build(struct fb_msg *m, uint64_t i, qp_time_ns now, uint64_t *tx)
{
	struct fb_flow f = { P.src, P.dst, (uint16_t)P.sport, (uint32_t)P.qp };
	qp_rate_bps link = P.link_bps;
	uint32_t qlen = (uint32_t)P.qlen;

	memset(m, 0, sizeof(*m));
	if (P.type == T_INT || P.type == T_ECHO) {
		double util = P.util;

		m->type = P.type == T_INT ? FB_T_INT : FB_T_ECHO;
		m->flags = P.to_receiver ? FB_F_TO_RECEIVER : 0;
		m->u.int_report.flow = f;
		m->u.int_report.psn = (uint32_t)(P.psn + i) & 0xffffff;
		m->u.int_report.nhops = (uint8_t)P.hops;
		for (unsigned h = 0; h < m->u.int_report.nhops; h++) {
			bool last = h + 1 == m->u.int_report.nhops;

			tx[h] += (uint64_t)((last ? util : 0.5) * (double)link / 8e9 *
					    (double)P.gap_ns);
			m->u.int_report.hops[h] = (struct qp_int_hop){
				.switch_id = 100 + h, .port = 1, .ts_ns = now, .tx_bytes = tx[h],
				.qlen_bytes = last ? qlen : 0, .link_bps = link };
		}
	} else if (P.type == T_NOTICE) {
		m->type = FB_T_NOTICE;
		m->u.notice = (struct fb_notice){ .flow = f, .switch_id = 100, .flows = 2,
						  .queue_bytes = qlen, .link_bps = link,
						  .reflected_ts_ns = now };
	} else if (P.type == T_LEVEL) {
		m->type = FB_T_LEVEL;
		m->u.level = (struct fb_level){ .flow = f, .switch_id = 100, .port = 1,
						.level = (uint8_t)P.level, .queue_bytes = qlen,
						.seq = (uint32_t)(P.seq + i) };
	} else {
		m->type = FB_T_CREDIT;
		m->u.credit = (struct fb_credit){ f, (uint32_t)(P.seq + i), (uint32_t)P.bytes,
						  P.interval_ns };
	}
}

static int cmd_send(void)
{
	struct sockaddr_in to = P.to;
	uint8_t raw[QP_SIPHASH_KEY_BYTES];
	struct qp_siphash_key k;
	struct fb_signer signer;
	bool sign = load_key(&k, raw);
	int fd = udp_socket(P.from);
	uint64_t n = P.count, tx[QP_INT_MAX_HOPS] = { 0 }, sent = 0;
	qp_time_ns gap = P.gap_ns, next = qp_now_ns(), wall = qp_wall_offset_ns();
	uint32_t sender = (uint32_t)P.sender;

	if (sign && !sender && getrandom(&sender, sizeof(sender), GRND_NONBLOCK) < 0)
		sender = (uint32_t)(next ^ (uint64_t)getpid());
	fb_signer_init(&signer, raw, sender);

	for (uint64_t i = 0; i < n && !stop; i++) {
		uint8_t buf[FB_MAX_LEN];
		struct fb_msg m;
		int len;

		while (qp_now_ns() < next)
			;
		/* stamped on schedule, as a switch would: the rates it implies do not hinge on
		 * how late this process ran */
		build(&m, i, next, tx);
		len = fb_encode(buf, sizeof(buf), &m);
		if (len > 0 && sign)
			len = fb_signer_sign(&signer, buf, sizeof(buf), (size_t)len,
					     qp_now_ns() + wall);
		if (len <= 0)
			die("cannot encode this %s message%s", type_names[P.type], "");
		sent += sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&to, sizeof(to)) == len;
		next += gap;
	}
	printf("send type=%s sent=%llu\n", type_names[P.type], (unsigned long long)sent);
	fflush(stdout);
	if (P.replies)
		receive(fd, qp_now_ns(), qp_now_ns() + P.replies * QP_NS_PER_MS, 0,
			sign ? &k : NULL);
	close(fd);
	return 0;
}


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
	struct sockaddr_in to = P.to;
	int fd = udp_socket(P.from);
	uint64_t seed = P.seed, n = P.count, sent = 0;
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
	if (k) {
		uint64_t seq = 0;
		uint32_t sender = 0;
		bool ok = fb_auth_verify(buf, (size_t)len, k, &sender, &seq) == 0;

		printf(" tag=%s", ok ? "ok" : "bad");
		if (ok)
			printf(" sender=0x%08x seq=%llu", sender, (unsigned long long)seq);
	}
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


static int cmd_listen(void)
{
	struct sockaddr_in sa;
	uint8_t raw[QP_SIPHASH_KEY_BYTES];
	struct qp_siphash_key k;
	bool check = load_key(&k, raw);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	qp_time_ns start = qp_now_ns();
	char port[8];
	uint32_t ip;

	if (qp_ipv4_parse(P.bind, &ip))
		die("bind=%s is not an IPv4 address%s", P.bind, "");
	sa = qp_sockaddr_in(ip, (uint16_t)P.port);
	snprintf(port, sizeof(port), "%u", (unsigned)P.port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind port %s: %s", port, strerror(errno));
	printf("listen port=%s ready\n", port);
	fflush(stdout);
	receive(fd, start, start + P.timeout * QP_NS_PER_S, P.count,
		check ? &k : NULL);
	close(fd);
	return 0;
}

/* ---- replay: what an attacker who captured telemetry can send ---- */

#define REPLAY_MAX_FRAMES 100000

/* The UDP payload of every frame to port=P in the capture, once, in order, from=IP. */
static int cmd_replay(void)
{
	struct pcap_frame *f = calloc(REPLAY_MAX_FRAMES, sizeof(*f));
	struct sockaddr_in to = P.to;
	int fd = udp_socket(P.from);
	size_t n = 0;
	uint64_t sent = 0, frames = 0;

	if (!f || !P.pcap || pcap_frames_load(P.pcap, f, REPLAY_MAX_FRAMES, &n))
		die("replay: %s%s", P.pcap ? "cannot read the capture" : "pcap=FILE is required",
		    "");
	for (size_t i = 0; i < n && !stop && (!P.count || sent < P.count); i++) {
		struct frame_parsed p;

		if (frame_parse(&p, f[i].b, f[i].len) || !(p.layers & FRAME_L_UDP) ||
		    p.udp.dport != P.port)
			continue;
		frames++;
		sent += sendto(fd, f[i].b + p.payload_off, p.payload_len, 0,
			       (struct sockaddr *)&to, sizeof(to)) == (ssize_t)p.payload_len;
		usleep(100);
	}
	printf("replay frames=%zu matching=%llu sent=%llu\n", n, (unsigned long long)frames,
	       (unsigned long long)sent);
	free(f);
	close(fd);
	return 0;
}

/* ---- rate table: read a slot; pace a sender through the gate ---- */


static int cmd_rate(void)
{
	struct qp_ratetable *t;
	struct qp_rate_entry e;
	uint32_t hint = 0;
	char err[300];
	int rc;

	if (qp_ratetable_open(P.table, &t, err, sizeof(err))) {
		printf("rate status=no_table text=\"%s\"\n", err);
		return 1;
	}
	rc = qp_ratetable_lookup(t, (uint32_t)P.qpn, &hint, &e);
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
 * line per interval: what the gate let through, the rate in force, why no agent rate is in
 * force (fallback) and the gate's mode (agent, hold, safe). */
static int cmd_sender(void)
{
	struct qp_gate_params gp = { .line_bps = P.link_bps, .hold_ns = P.fb_hold_ns,
				     .safe_permille = P.safe, .chunk_bytes = P.chunk };
	struct qp_wait w = { .mode = P.wait };
	struct qp_rate_src src;
	struct qp_pacer p;
	char err[300];
	qp_time_ns start = qp_now_ns(), end = start + P.seconds * QP_NS_PER_S;
	qp_time_ns every = P.interval_ns, mark = start + every;
	uint64_t bytes = 0;

	if (qp_gate_params_resolve(&gp, err, sizeof(err)))
		die("%s%s", err, "");
	qp_rate_src_init(&src, P.table, gp.stale_ns, gate_log, NULL);
	qp_pacer_init(&p, &gp, &w, &src, (uint32_t)P.qpn, start);
	while (!stop) {
		struct qp_gate_verdict v;
		qp_time_ns now;

		qp_pacer_take(&p, gp.chunk_bytes, 0, -1, NULL, NULL, &v);
		bytes += v.bytes;
		now = qp_now_ns();
		if (now >= mark) {
			printf("sender t=%.3f rate_bps=%.0f in_force_bps=%llu fallback=%s mode=%s\n",
			       (now - start) / 1e9, bytes * 8e9 / (double)(now - mark + every),
			       (unsigned long long)v.rate_bps, fallback_key(v.fallback),
			       qp_gate_mode_str(v.mode));
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

static const struct cmd {
	const char *name;
	unsigned bit;
	int (*fn)(void);
	const char *help;
} cmds[] = {
	{ "register", C_REGISTER, cmd_register, "register QPs with the agent and hold them" },
	{ "send", C_SEND, cmd_send, "send feedback messages" },
	{ "fuzz", C_FUZZ, cmd_fuzz, "send random and mutated feedback datagrams" },
	{ "listen", C_LISTEN, cmd_listen, "print the feedback messages that arrive" },
	{ "rate", C_RATE, cmd_rate, "read a QP's rate-table slot" },
	{ "sender", C_SENDER, cmd_sender, "pace a no-op sender through the gate" },
	{ "replay", C_REPLAY, cmd_replay, "send the UDP payloads captured in a pcap file again" },
	{ .name = NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: qpace-probe COMMAND [key=value...]\n");
	for (const struct cmd *c = cmds; c->name; c++) {
		fprintf(f, "\n%s: %s\n", c->name, c->help);
		qp_opt_usage_keys(f, args, NARGS, c->bit);
	}
}

/* argv[2..]: key=value each, through the table's rows of @c (after their defaults). */
static int parse_args(const struct cmd *c, int argc, char **argv)
{
	char err[400], msg[480], key[32];
	int rc = qp_opt_defaults(args, NARGS, c->bit, &P, err, sizeof(err));

	for (int i = 2; !rc && i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (!eq || (size_t)(eq - argv[i]) >= sizeof(key)) {
			rc = qp_errmsg(-EINVAL, err, sizeof(err), "\"%s\" is not key=value", argv[i]);
			break;
		}
		memcpy(key, argv[i], (size_t)(eq - argv[i]));
		key[eq - argv[i]] = 0;
		rc = qp_opt_set(args, NARGS, c->bit, &P, key, eq + 1, err, sizeof(err));
	}
	if (rc) {
		snprintf(msg, sizeof(msg), "%s: %s", c->name, err);
		return qp_opt_fail("qpace-probe", msg);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? QP_EXIT_USAGE : QP_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		qp_opt_version(stdout, "qpace-probe");
		return QP_EXIT_OK;
	}
	for (c = cmds; c->name && strcmp(c->name, argv[1]); c++)
		;
	if (!c->name) {
		fprintf(stderr, "qpace-probe: unknown command \"%s\"\n", argv[1]);
		usage(stderr);
		return QP_EXIT_USAGE;
	}
	if (parse_args(c, argc, argv))
		return QP_EXIT_USAGE;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	return c->fn();
}
