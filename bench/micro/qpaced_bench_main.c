/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced-bench: how many feedback reports one agent sustains on one core, and how long a
 * datagram takes from its arrival to the rate-table write it causes.
 *
 * The real daemon (qpaced, default algorithm HPCC) runs pinned to one CPU; this program
 * registers QPs through the control socket and, pinned to another CPU, sends 5-hop INT
 * reports over loopback UDP, generated on the fly so that every report is a fresh
 * measurement (per-QP PSN, switch clocks and byte counters advance; one hop swings between
 * 70% and 110% with a queue), so HPCC does its full work and writes the table each time.
 *
 *   core       the agent core alone, in this process (agent_feed_datagram in a loop, no
 *              sockets): the ceiling the daemon could reach
 *   throughput send as fast as possible for the duration; the agent's accepted count over
 *              the time it kept processing = reports per second on one core
 *   latency    send at fixed rates, evenly spaced; the agent measures each datagram from its
 *              kernel arrival timestamp (SO_TIMESTAMPNS) to the rate-table write, and
 *              qpacectl status / this program read p50, p99 and max (a fresh agent per rate)
 *
 *   qpaced-bench [-q 64] [-d 3s] [-l 10000,100000] [-a 0] [-s 1] [-p PATH] [-j]
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qpace/addr.h"
#include "qpace/agent.h"
#include "qpace/ctl_client.h"
#include "qpace/errmsg.h"
#include "qpace/fb_auth.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/units.h"

#define MAX_RATES 8
#define BATCH 32
#define HOPS 5
#define LINK_BPS (100 * QP_GBPS)

struct opts {
	unsigned qps;
	qp_time_ns duration_ns;
	uint64_t rates[MAX_RATES];
	unsigned nrates;
	int cpu_agent, cpu_sender;
	char busy_poll[32];      /* the second latency variant's --busy-poll; "0" = none */
	int fifo;                /* run the agent SCHED_FIFO at this priority; 0 = no */
	char qpaced[512];
	int json;
};

/* ---- report generation ---- */

struct flowgen {
	uint32_t psn;
	qp_time_ns ts;
	uint64_t tx[HOPS];
	unsigned step;
};

struct gen {
	struct flowgen *f;
	unsigned n, next;
};

static int gen_init(struct gen *g, unsigned n)
{
	g->f = calloc(n, sizeof(*g->f));
	g->n = n;
	g->next = 0;
	return g->f ? 0 : -ENOMEM;
}

/* The next report, round-robin over the QPs; returns its encoded length. */
static int gen_next(struct gen *g, uint8_t *buf, size_t cap)
{
	unsigned q = g->next++ % g->n;
	struct flowgen *f = &g->f[q];
	struct fb_msg m = { .type = FB_T_INT };
	const qp_time_ns dt = 2 * QP_NS_PER_US;
	double u = 0.7 + 0.4 * (double)(f->step % 64) / 63.0;

	f->step++;
	f->psn = (f->psn + 1) & 0xffffff;
	f->ts += dt;
	m.u.int_report.flow = (struct fb_flow){ 0x7f000001u, 0x0a000002u, 0, 0x200 + q };
	m.u.int_report.psn = f->psn;
	m.u.int_report.nhops = HOPS;
	for (unsigned h = 0; h < HOPS; h++) {
		double hu = h == 3 ? u : 0.5;

		f->tx[h] += (uint64_t)(hu * (double)LINK_BPS / 8e9 * (double)dt);
		m.u.int_report.hops[h] = (struct qp_int_hop){
			.switch_id = 1 + h, .port = 1, .ts_ns = f->ts, .tx_bytes = f->tx[h],
			.qlen_bytes = h == 3 ? (f->step % 64) * 800 : 0, .link_bps = LINK_BPS };
	}
	return fb_encode(buf, cap, &m);
}

static struct agent_qp_reg bench_reg(unsigned i)
{
	struct agent_qp_reg r = {
		.qpn = 0x100 + i, .peer_qpn = 0x200 + i, .local_ip = 0x7f000001u,
		.peer_ip = 0x0a000002u, .mtu_bytes = 4096, .link_bps = LINK_BPS,
		.base_rtt_ns = 10 * QP_NS_PER_US,
	};
	return r;
}

/* ---- the core alone ---- */

/* Reports per second through agent_feed_datagram; @keyed: each report signed here first
 * (fb_signer) and checked by the agent (tag, replay window), so the figure bounds what
 * checking costs from above. */
static double bench_core(const struct opts *o, bool keyed)
{
	static const uint8_t key[QP_SIPHASH_KEY_BYTES] = { 1, 2, 3, 4 };
	struct agent_params p;
	struct qp_ratetable *t;
	struct fb_signer sg;
	struct agent *a;
	struct gen g;
	char err[256];
	uint8_t buf[FB_MAX_LEN];
	const unsigned n = 2000000;
	qp_time_ns t0, t1;

	agent_params_default(&p);
	p.max_qps = o->qps;
	p.have_key = keyed;
	memcpy(p.key, key, sizeof(key));
	fb_signer_init(&sg, key, 1);
	if (qp_ratetable_create_mem(o->qps, &t, err, sizeof(err)) ||
	    !(a = agent_create(&p, t, 1, err, sizeof(err))) || gen_init(&g, o->qps)) {
		fprintf(stderr, "qpaced-bench: %s\n", err);
		exit(1);
	}
	for (unsigned i = 0; i < o->qps; i++) {
		struct agent_qp_reg r = bench_reg(i);

		if (agent_register(a, &r, 0, 0, 1, err, sizeof(err))) {
			fprintf(stderr, "qpaced-bench: %s\n", err);
			exit(1);
		}
	}
	t0 = qp_now_ns();
	for (unsigned i = 0; i < n; i++) {
		int len = gen_next(&g, buf, sizeof(buf));

		if (keyed)
			len = fb_signer_sign(&sg, buf, sizeof(buf), (size_t)len, 1 + i);
		agent_feed_datagram(a, buf, (size_t)len, 0x7f000001u, 4792, t0 + i * 500);
	}
	t1 = qp_now_ns();
	agent_destroy(a);
	qp_ratetable_close(t);
	free(g.f);
	return n / ((t1 - t0) / 1e9);
}

/* ---- the daemon ---- */

struct daemon {
	pid_t pid;
	char sock[108], table[64], log[128];
	uint16_t port;
	struct ctl_client *c;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "qpaced-bench: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
}

static void daemon_stop(struct daemon *d)
{
	ctl_client_close(d->c);
	d->c = NULL;
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
	}
	d->pid = 0;
}

static int daemon_start(const struct opts *o, struct daemon *d, unsigned run,
			const char *busy_poll)
{
	char port[16], maxq[16], err[300];

	snprintf(d->sock, sizeof(d->sock), "/tmp/qpaced-bench.%d.sock", (int)getpid());
	snprintf(d->table, sizeof(d->table), "/qpaced-bench-%d", (int)getpid());
	snprintf(d->log, sizeof(d->log), "/tmp/qpaced-bench.%d.log", (int)getpid());
	d->port = (uint16_t)(40000 + getpid() % 10000 + run);
	snprintf(port, sizeof(port), "127.0.0.1:%u", d->port);
	snprintf(maxq, sizeof(maxq), "%u", o->qps);
	d->pid = fork();
	if (d->pid == 0) {
		char *argv[] = { (char *)o->qpaced, "--cc", "hpcc", "--feedback", port,
				 "--metrics", "off", "--socket", d->sock, "--rate-table", d->table,
				 "--max-qps", maxq, "--busy-poll", (char *)busy_poll, NULL };

		pin(o->cpu_agent);
		if (o->fifo) {
			struct sched_param sp = { .sched_priority = o->fifo };

			if (sched_setscheduler(0, SCHED_FIFO, &sp))
				fprintf(stderr, "qpaced-bench: SCHED_FIFO %d: %s\n", o->fifo,
					strerror(errno));
		}
		if (!freopen(d->log, "w", stderr))
			_exit(127);
		execv(o->qpaced, argv);
		_exit(127);
	}
	for (int i = 0; i < 300; i++) {
		if (ctl_client_open(d->sock, &d->c, err, sizeof(err)) == 0)
			break;
		usleep(10000);
	}
	if (!d->c) {
		fprintf(stderr, "qpaced-bench: %s did not start (%s; log in %s)\n", o->qpaced, err,
			d->log);
		return -1;
	}
	for (unsigned i = 0; i < o->qps; i++) {
		struct ctl_msg m = { .type = CTL_T_REGISTER, .u.reg = bench_reg(i) };

		if (ctl_client_call(d->c, &m, NULL, NULL, 5 * QP_NS_PER_S, NULL, err, sizeof(err))) {
			fprintf(stderr, "qpaced-bench: register: %s\n", err);
			return -1;
		}
	}
	return 0;
}

static void got_agent(void *arg, const struct ctl_msg *m)
{
	if (m->type == CTL_T_AGENT)
		*(struct ctl_agent *)arg = m->u.agent;
}

static struct ctl_agent status(struct daemon *d)
{
	struct ctl_msg m = { .type = CTL_T_STATUS };
	struct ctl_agent a = { 0 };
	char err[300];

	if (ctl_client_call(d->c, &m, got_agent, &a, 5 * QP_NS_PER_S, NULL, err, sizeof(err)))
		fprintf(stderr, "qpaced-bench: status: %s\n", err);
	return a;
}

static int udp_to(struct daemon *d, struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), buf = 4 << 20;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	*sa = qp_sockaddr_in(INADDR_LOOPBACK, d->port);
	return fd;
}

struct tput {
	double sent_per_s, agent_per_s;
	uint64_t accepted, drops;
	struct ctl_agent end;
};

#define POOL 65536   /* reports prepared before the blast, replayed in order */

/* Blast for the duration, then wait until the agent stops counting. The reports are
 * prepared first, so the sender spends its time in sendmmsg; replaying the pool makes each
 * QP's counters jump back once per 1024 reports (HPCC then takes one as a new baseline). */
static struct tput run_throughput(const struct opts *o, struct daemon *d)
{
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in sa;
	struct gen g;
	struct tput r = { 0 };
	uint8_t (*pool)[FB_MAX_LEN] = malloc((size_t)POOL * FB_MAX_LEN);
	uint16_t *plen = malloc(POOL * sizeof(*plen));
	struct ctl_agent a0, a1;
	int fd = udp_to(d, &sa);
	uint64_t sent = 0, last, k = 0;
	qp_time_ns t0, end, t_last;

	if (!pool || !plen || gen_init(&g, o->qps))
		exit(1);
	for (unsigned i = 0; i < POOL; i++)
		plen[i] = (uint16_t)gen_next(&g, pool[i], FB_MAX_LEN);
	a0 = status(d);
	t0 = qp_now_ns();
	end = t0 + o->duration_ns;
	while (qp_now_ns() < end) {
		int n;

		for (unsigned i = 0; i < BATCH; i++, k++) {
			iov[i] = (struct iovec){ pool[k % POOL], plen[k % POOL] };
			m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &sa, .msg_namelen = sizeof(sa),
							      .msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		n = sendmmsg(fd, m, BATCH, 0);
		if (n > 0)
			sent += (uint64_t)n;
		k -= (uint64_t)(BATCH - (n > 0 ? n : 0));
	}
	r.sent_per_s = sent / ((qp_now_ns() - t0) / 1e9);
	/* the agent drains its socket buffer: stop the clock at its last accepted report */
	last = a0.counters[AGENT_C_FB_ACCEPTED];
	t_last = qp_now_ns();
	for (;;) {
		usleep(50000);
		a1 = status(d);
		if (a1.counters[AGENT_C_FB_ACCEPTED] == last)
			break;
		last = a1.counters[AGENT_C_FB_ACCEPTED];
		t_last = qp_now_ns() - 25 * QP_NS_PER_MS;
	}
	r.accepted = last - a0.counters[AGENT_C_FB_ACCEPTED];
	r.drops = a1.counters[AGENT_C_FB_KERNEL_DROPS] - a0.counters[AGENT_C_FB_KERNEL_DROPS];
	r.agent_per_s = r.accepted / ((t_last - t0) / 1e9);
	r.end = a1;
	close(fd);
	free(g.f);
	free(pool);
	free(plen);
	return r;
}

/* Evenly spaced single datagrams at @rate per second for the duration. */
static struct ctl_agent run_latency(const struct opts *o, struct daemon *d, uint64_t rate)
{
	uint8_t buf[FB_MAX_LEN];
	struct sockaddr_in sa;
	struct gen g;
	int fd = udp_to(d, &sa);
	qp_time_ns gap = QP_NS_PER_S / rate, next = qp_now_ns(), end = next + o->duration_ns;

	gen_init(&g, o->qps);
	while (next < end) {
		int len = gen_next(&g, buf, sizeof(buf));

		while (qp_now_ns() < next)
			;
		sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&sa, sizeof(sa));
		next += gap;
	}
	usleep(100000);
	close(fd);
	free(g.f);
	return status(d);
}

/* ---- command line ---- */

static int opt_rates(const struct qp_opt *opt, void *conf, const char *arg, char *err,
		     size_t len)
{
	struct opts *o = conf;
	char list[128], *save = NULL, *tok;

	(void)opt;
	snprintf(list, sizeof(list), "%s", arg);
	o->nrates = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nrates == MAX_RATES)
			return qp_errmsg(-EINVAL, err, len, "at most %d rates", MAX_RATES);
		if (qp_parse_u64(tok, &o->rates[o->nrates]) || o->rates[o->nrates] < 100)
			return qp_errmsg(-EINVAL, err, len, "'%s' is not a rate of 100/s or more", tok);
		o->nrates++;
	}
	return o->nrates ? 0 : qp_errmsg(-EINVAL, err, len, "give at least one rate");
}

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "qps", 'q', QP_OPT_UINT, "N", AT(qps), .min = 1, .max = 4096,
	  .help = "QPs registered, reports round-robin over them", .def = "64" },
	{ "duration", 0, QP_OPT_TIME, "TIME", AT(duration_ns), .min = QP_NS_PER_S / 10,
	  .max = 86400 * QP_NS_PER_S, .old_short = 'd',
	  .help = "length of each run", .def = "3s" },
	{ "latency-rates", 0, QP_OPT_FN, "LIST", .fn = opt_rates,
	  .old_short = 'l',
	  .help = "report rates for the latency runs", .def = "10000,100000" },
	{ "cpu-agent", 0, QP_OPT_UINT, "CPU", AT(cpu_agent), .max = 1023,
	  .old_short = 'a', .help = "CPU the agent is pinned to", .def = "0" },
	{ "cpu-sender", 0, QP_OPT_UINT, "CPU", AT(cpu_sender), .max = 1023,
	  .old_short = 's', .help = "CPU this program is pinned to", .def = "1" },
	{ "busy-poll", 0, QP_OPT_STRBUF, "TIME", AT(busy_poll),
	  .old_short = 'b',
	  .help = "latency again with qpaced --busy-poll TIME (0 = no)", .def = "1ms" },
	{ "fifo", 0, QP_OPT_UINT, "PRIO", AT(fifo), .min = 1, .max = 99,
	  .old_short = 'f',
	  .help = "run the agent SCHED_FIFO at PRIO (as chrt -f; default: normal)" },
	{ "qpaced", 0, QP_OPT_STRBUF, "PATH", AT(qpaced),
	  .old_short = 'p', .help = "the daemon (default: qpaced next to this program)" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "one JSON object instead of text" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "qpaced-bench",
	.head = "usage: qpaced-bench [options]\nReports per second one agent sustains (HPCC, "
		"5-hop INT) and arrival-to-rate-table delay.\n\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

/* qpaced beside this program, the rows' defaults, then the command line: 0, 1 (--help printed) or
 * -EINVAL (printed). */
static int parse(int argc, char **argv, struct opts *o)
{
	char exe[400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	*o = (struct opts){ 0 };
	exe[n > 0 ? n : 0] = 0;
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = 0;
	snprintf(o->qpaced, sizeof(o->qpaced), "%s/qpaced", exe);
	return qp_opt_main(&prog, argc, argv, o, NULL);
}

static void print_latency(const char *variant, uint64_t rate, const struct ctl_agent *a)
{
	printf("  arrival -> rate table, %-14s at %6llu/s: p50 %5.1f us, p99 %7.1f us, max "
	       "%7.1f us (%llu samples)\n", variant, (unsigned long long)rate,
	       a->delay_p50_ns / 1e3, a->delay_p99_ns / 1e3, a->delay_max_ns / 1e3,
	       (unsigned long long)a->delay_samples);
}

static void json_latency(struct qp_out *j, const char *variant, uint64_t rate,
			 const struct ctl_agent *a)
{
	qp_out_obj(j, NULL);
	qp_out_str(j, "agent", variant);
	qp_out_u64(j, "rate", rate);
	qp_out_u64(j, "samples", a->delay_samples);
	qp_out_u64(j, "p50_ns", a->delay_p50_ns);
	qp_out_u64(j, "p99_ns", a->delay_p99_ns);
	qp_out_u64(j, "max_ns", a->delay_max_ns);
	qp_out_end(j);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct daemon d = { 0 };
	struct tput t;
	struct ctl_agent lat[2][MAX_RATES];
	char variant[2][48];
	unsigned nvar;
	double core, core_keyed;
	int rc;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	nvar = strcmp(o.busy_poll, "0") ? 2 : 1;
	snprintf(variant[0], sizeof(variant[0]), "sleeping");
	snprintf(variant[1], sizeof(variant[1]), "busy-poll %s", o.busy_poll);
	pin(o.cpu_sender);
	core = bench_core(&o, false);
	core_keyed = bench_core(&o, true);
	if (daemon_start(&o, &d, 0, "0"))
		return daemon_stop(&d), 1;
	t = run_throughput(&o, &d);
	daemon_stop(&d);
	for (unsigned v = 0; v < nvar; v++) {
		for (unsigned i = 0; i < o.nrates; i++) {
			if (daemon_start(&o, &d, 1 + v * MAX_RATES + i, v ? o.busy_poll : "0"))
				return daemon_stop(&d), 1;
			lat[v][i] = run_latency(&o, &d, o.rates[i]);
			daemon_stop(&d);
		}
	}
	unlink(d.log);
	if (o.json) {
		struct qp_out j;

		qp_out_init(&j, stdout, QP_OUT_JSON);
		qp_out_obj(&j, NULL);
		qp_out_u64(&j, "qps", o.qps);
		qp_out_i64(&j, "hops", HOPS);
		qp_out_str(&j, "cc", "hpcc");
		qp_out_double(&j, "core_reports_per_s", core, "%.0f");
		qp_out_double(&j, "core_signed_reports_per_s", core_keyed, "%.0f");
		qp_out_double(&j, "sent_per_s", t.sent_per_s, "%.0f");
		qp_out_double(&j, "agent_reports_per_s", t.agent_per_s, "%.0f");
		qp_out_u64(&j, "kernel_drops", t.drops);
		qp_out_u64(&j, "saturated_delay_p50_ns", t.end.delay_p50_ns);
		qp_out_u64(&j, "saturated_delay_p99_ns", t.end.delay_p99_ns);
		qp_out_arr(&j, "latency");
		for (unsigned v = 0; v < nvar; v++)
			for (unsigned i = 0; i < o.nrates; i++)
				json_latency(&j, variant[v], o.rates[i], &lat[v][i]);
		qp_out_end(&j);
		qp_out_end(&j);
		return 0;
	}
	printf("qpaced-bench: HPCC, %d-hop INT reports over %u QPs; agent on CPU %d%s, sender on "
	       "CPU %d, %.1f s per run\n", HOPS, o.qps, o.cpu_agent,
	       o.fifo ? " (SCHED_FIFO)" : "", o.cpu_sender, o.duration_ns / 1e9);
	printf("  core alone (no sockets)   %9.0f reports/s  (%.0f ns each)\n", core, 1e9 / core);
	printf("    signed, checked         %9.0f reports/s  (%.0f ns each, signing here "
	       "included)\n", core_keyed, 1e9 / core_keyed);
	printf("  daemon, saturated         %9.0f reports/s  (target >= 300000; sender %.0f/s, "
	       "kernel drops %llu)\n", t.agent_per_s, t.sent_per_s, (unsigned long long)t.drops);
	printf("    delay while saturated   p50 %.1f us, p99 %.1f us (socket queueing included)\n",
	       t.end.delay_p50_ns / 1e3, t.end.delay_p99_ns / 1e3);
	for (unsigned v = 0; v < nvar; v++)
		for (unsigned i = 0; i < o.nrates; i++)
			print_latency(variant[v], o.rates[i], &lat[v][i]);
	printf("  (target: p99 < 50 us)\n");
	return 0;
}
