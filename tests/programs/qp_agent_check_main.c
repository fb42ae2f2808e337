/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qp-agent-check: two soft-backend hosts wired to each other on loopback, one RC QP each,
 * a WRITE stream from A to B through the pacing gate — with the QPs registered with the
 * host's agent by the QP library itself. One line per interval: the rate the gate handed
 * on, the rate in force, fallback or not, and both QPs' registration state. For
 * tests/integration/agent_register.sh and for trying an agent by hand.
 *
 *   qp-agent-check [-s SOCKET] [-r TABLE] [-p PORT] [-f FALLBACK] [-l LINK] [-t SECONDS]
 *                  [-i INTERVAL]     (qp-agent-check --help: what each means)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/gate.h"
#include "qpace/opt.h"
#include "qpace/qp.h"
#include "qpace/soft.h"
#include "qpace/units.h"

#define MSG_BYTES (64u << 10)
#define BUF_BYTES (1u << 20)
#define INFLIGHT 16u

struct check {
	const char *sock, *table;
	unsigned port;
	qp_rate_bps link_bps;
	qp_time_ns hold_ns;
	qp_time_ns run_ns, every_ns;
	struct qp_ctx *ctx[2];
	struct qp *qp[2], *spare;
	struct qp_mr *mr[2];
	uint8_t *buf[2];
	unsigned inflight;
	uint64_t nposted;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int die(const char *what, const char *err)
{
	fprintf(stderr, "qp-agent-check: %s: %s\n", what, err);
	exit(1);
}

static void open_host(struct check *c, int i)
{
	char opts[160], err[256];
	struct qp_ctx_attr ca = { .options = opts, .rate_table = c->table,
				  .agent_socket = c->sock,
				  .agent = { .link_bps = c->link_bps } };
	struct qp_attr qa = { .flags = QP_F_NONBLOCK | QP_F_SIGNAL_ALL, .sq_depth = 64,
			      .gate = { .chunk_bytes = MSG_BYTES, .burst_bytes = 4 * MSG_BYTES,
					.hold_ns = c->hold_ns },
			      .wait = { .mode = QP_WAIT_SLEEP } };

	snprintf(opts, sizeof(opts), "bind=127.0.0.1:%u,peer=127.0.0.1:%u,ip=10.0.0.%d",
		 c->port + (unsigned)i, c->port + 1 - (unsigned)i, i + 1);
	if (qp_ctx_open("soft", &ca, &c->ctx[i], err, sizeof(err)))
		die("open", err);
	c->buf[i] = calloc(1, BUF_BYTES);
	if (!c->buf[i] || qp_mr_reg(c->ctx[i], c->buf[i], BUF_BYTES, QP_ACCESS_LOCAL_WRITE |
				    QP_ACCESS_REMOTE_WRITE, &c->mr[i]))
		die("memory", "cannot register");
	/* One agent serves both emulated hosts here, and QPNs are per host: B skips one so
	 * the two QPNs differ, as on two real hosts with their own agents they need not. */
	if (i == 1 && qp_create(c->ctx[i], &qa, &c->spare, err, sizeof(err)))
		die("create", err);
	if (qp_create(c->ctx[i], &qa, &c->qp[i], err, sizeof(err)))
		die("create", err);
}

static void connect_hosts(struct check *c)
{
	struct qp_conn_info ia, ib;
	char err[256];

	qp_local_info(c->qp[0], c->mr[0], &ia);
	qp_local_info(c->qp[1], c->mr[1], &ib);
	if (qp_connect(c->qp[0], &ib, err, sizeof(err)) ||
	    qp_connect(c->qp[1], &ia, err, sizeof(err)))
		die("connect", err);
}

static void pump(struct check *c, qp_time_ns now)
{
	struct qp_wc wc[16];
	int n;

	for (int i = 0; i < 2; i++)
		if (qp_ctx_progress(c->ctx[i], now) < 0)
			die("progress", "backend error");
	n = qp_poll(c->qp[0], wc, 16);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != QP_WC_SUCCESS)
			die("completion", qp_wc_status_str(wc[i].status));
		c->inflight--;
	}
	while (c->inflight < INFLIGHT) {
		uint64_t off = (c->nposted * MSG_BYTES) % BUF_BYTES;
		struct qp_wr wr = { .opcode = QP_OP_WRITE, .wr_id = c->nposted, .mr = c->mr[0],
				    .addr = c->buf[0] + off, .length = MSG_BYTES,
				    .remote_addr = (uintptr_t)c->buf[1] + off,
				    .rkey = c->mr[1]->rkey, .flags = QP_WR_SIGNALED };
		int rc = qp_post_send(c->qp[0], &wr);

		if (rc == -EAGAIN)
			break;
		if (rc)
			die("post", strerror(-rc));
		c->inflight++;
		c->nposted++;
	}
}

/* Sleep until something is due (at most 2 ms), or a host has input. */
static void wait_work(struct check *c, qp_time_ns now)
{
	qp_time_ns t = qp_time_min(qp_ctx_deadline(c->ctx[0]), qp_ctx_deadline(c->ctx[1]));
	struct pollfd p[2] = { { qp_ctx_fd(c->ctx[0]), POLLIN, 0 },
			       { qp_ctx_fd(c->ctx[1]), POLLIN, 0 } };
	qp_time_ns d;

	t = qp_time_min(t, qp_send_deadline(c->qp[0], now));
	d = t > now ? t - now : 0;
	d = d < 2 * QP_NS_PER_MS ? d : 2 * QP_NS_PER_MS;
	/* both armed (shm rings: frames may wait that no fd announces), or no sleep */
	bool armed0 = qp_soft_wait_arm(c->ctx[0]), armed1 = qp_soft_wait_arm(c->ctx[1]);
	if (!armed0 || !armed1)
		d = 0;
	if (d)
		ppoll(p, 2, &(struct timespec){ 0, (long)d }, NULL);
}

static void run(struct check *c)
{
	qp_time_ns t0 = qp_now_ns(), mark = t0 + c->every_ns, now = t0;
	uint64_t last = 0;

	printf("qpn a=0x%06x b=0x%06x\n", c->qp[0]->qpn, c->qp[1]->qpn);
	fflush(stdout);
	while (!stop && now - t0 < c->run_ns) {
		pump(c, now);
		wait_work(c, now);
		now = qp_now_ns();
		if (now >= mark) {
			struct qp_stats st;
			char fb[32];

			qp_get_stats(c->qp[0], &st);
			snprintf(fb, sizeof(fb), "%s", c->qp[0]->pacer.gate.fallback
				 ? qp_gate_fallback_str(c->qp[0]->pacer.gate.fallback) : "none");
			for (char *s = fb; *s; s++)
				*s = *s == ' ' ? '_' : *s;
			printf("interval t=%.3f rate_bps=%.0f in_force_bps=%llu fallback=%s mode=%s "
			       "a=%s b=%s\n", (double)(now - t0) / 1e9,
			       (double)(st.tx_bytes - last) * 8e9 / (double)(now - mark + c->every_ns),
			       (unsigned long long)c->qp[0]->pacer.gate.rate_bps, fb,
			       qp_gate_mode_str(c->qp[0]->pacer.gate.mode),
			       qp_agent_state(c->qp[0]), qp_agent_state(c->qp[1]));
			fflush(stdout);
			last = st.tx_bytes;
			mark = now + c->every_ns;
		}
	}
}

#define AT(field) QP_OPT_AT(struct check, field)

static const struct qp_opt opts[] = {
	{ "socket", 0, QP_OPT_STR, "SOCKET", AT(sock),
	  .old_short = 's',
	  .help = "the agent's socket (default: $QPACE_SOCKET, else the agent's default)" },
	{ "rate-table", 'r', QP_OPT_STR, "TABLE", AT(table), .help = "the agent's rate table",
	  .def = QP_RATETABLE_DEFAULT },
	{ "port", 'p', QP_OPT_UINT, "PORT", AT(port), .min = 1024, .max = 65534,
	  .help = "UDP port of host A; B takes the next one", .def = "30500" },
	{ "hold", 'H', QP_OPT_TIME, "TIME", AT(hold_ns), .max = QP_GATE_MAX_HOLD_NS,
	  .help = "agent lost: the gate holds its last rate this long, then 1/10 of the link\n"
		  "(0 = the agent's policy)", .def = "0" },
	{ "link", 'l', QP_OPT_RATE, "LINK", AT(link_bps), .min = QP_KBPS, .max = 10000 * QP_GBPS,
	  .help = "link rate the QPs register with", .def = "400M" },
	{ "time", 0, QP_OPT_TIME, "SECONDS", AT(run_ns), .min = QP_NS_PER_MS,
	  .max = 86400 * QP_NS_PER_S, .unit_ns = QP_NS_PER_S,
	  .old_short = 't',
	  .help = "how long to stream (a bare number is seconds)", .def = "5s" },
	{ "interval", 0, QP_OPT_TIME, "INTERVAL", AT(every_ns), .min = QP_NS_PER_MS,
	  .max = 60 * QP_NS_PER_S, .old_short = 'i',
	  .help = "one line per INTERVAL", .def = "100ms" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "qp-agent-check",
	.head = "usage: qp-agent-check [options]\n"
		"Two soft-backend hosts on loopback stream WRITEs from A to B through the gate,\n"
		"their QPs registered with the host's agent; one line per interval.\n\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

int main(int argc, char **argv)
{
	struct check c = { 0 };
	int rc = qp_opt_main(&prog, argc, argv, &c, NULL);

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	open_host(&c, 0);
	open_host(&c, 1);
	connect_hosts(&c);
	run(&c);
	qp_ctx_close(c.ctx[0]);
	qp_ctx_close(c.ctx[1]);
	free(c.buf[0]);
	free(c.buf[1]);
	return 0;
}
