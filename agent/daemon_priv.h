/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's private state, shared by agent/daemon*.c. */
#ifndef QPACE_DAEMON_PRIV_H
#define QPACE_DAEMON_PRIV_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <ev.h>

#include "qpace/agent.h"
#include "evtimer.h"
#include "qpace/hist.h"
#include "qpaced.h"
#include "qpace/strbuf.h"

#define QPACED_BATCH 64
#define QPACED_RX_BUF 2048         /* > a switch's packed datagram (1400 B of messages) */
#define QPACED_MAX_CONNS 256
#define QPACED_MAX_HTTP 16

struct qpaced_conn;
struct qpaced_http;
struct qpaced_tc;
struct qpaced_ecn;
struct qpaced_ia;
struct qp_tci;
struct qp_tc_key;

struct qpaced {
	struct qpaced_config cfg;
	struct ev_loop *loop;
	struct agent *agent;
	struct qp_ratetable *table;
	qp_time_ns start_ns;
	/* feedback */
	int fb_fd;
	ev_io fb_io;
	struct mmsghdr rx_msgs[QPACED_BATCH];
	struct iovec rx_iov[QPACED_BATCH];
	struct sockaddr_in rx_addr[QPACED_BATCH];
	uint8_t rx_buf[QPACED_BATCH][QPACED_RX_BUF];
	char rx_ctrl[QPACED_BATCH][128];
	struct agent_dgram tx[QPACED_BATCH];
	uint32_t rx_drops;         /* SO_RXQ_OVFL's running count */
	ev_idle spin;              /* --busy-poll: active while traffic is recent */
	qp_time_ns spin_until;
	struct qp_hist delay;
	/* timers and signals */
	struct qp_evtimer timer;
	ev_timer heartbeat;
	ev_timer reap;
	ev_signal sig_term, sig_int;
	/* control socket */
	int ctl_fd;
	ev_io ctl_io;
	struct qpaced_conn *conns;     /* list */
	unsigned nconns;
	uint32_t next_conn_id;
	bool ctl_bound;
	/* metrics */
	int http_fd;
	ev_io http_io;
	struct qpaced_http *https;
	unsigned nhttp;
	/* --enforce observe|tc (daemon_tc.c); NULL when off */
	struct qpaced_tc *tc;
	/* --cnp on with --enforce (daemon_ecn.c); NULL when off */
	struct qpaced_ecn *ecn;
	/* --credits ia with --enforce tc: receiving flows from the ingress program
	 * (daemon_ia.c); NULL when off */
	struct qpaced_ia *ia;
	/* --enforce observe|tc: RTT samples and NAKs from the tc programs (daemon_rtt.c);
	 * NULL when off */
	struct qpaced_rtt *rtt;
	/* --enforce tc: fq on the device and what puts it back (daemon_qdisc.c) */
	struct qpaced_qdisc *qdisc;
};

/* daemon.c */
void qpaced_log(enum agent_log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* After any callback that touched the core: send its datagrams, re-arm the timer. */
void qpaced_after(struct qpaced *d);
struct ctl_agent;
void qpaced_status(struct qpaced *d, struct ctl_agent *out);

/* daemon_ctl.c */
int qpaced_ctl_open(struct qpaced *d, char *err, size_t errlen);
void qpaced_ctl_close(struct qpaced *d);
void qpaced_ctl_reap_dead(struct qpaced *d);

/* daemon_tc.c: the tc egress program (--enforce); a no-op when off */
int qpaced_tc_open(struct qpaced *d, char *err, size_t errlen);
void qpaced_tc_close(struct qpaced *d);
/* Rates of the QPs found on the wire into the program's map. */
void qpaced_tc_sync(struct qpaced *d);
/* The program's own counters (frames by what it did with them), Prometheus text. */
void qpaced_tc_metrics(struct qpaced *d, struct qp_strbuf *b);

/* The --enforce device (after qpaced_tc_open), and the line rate QPs from the wire get. */
const char *qpaced_tc_dev(const struct qpaced *d);
qp_rate_bps qpaced_tc_line_bps(const struct qpaced *d);
/* The base RTT of a QP found on the wire on a line of @line: --wire-rtt, or auto
 * (wire_rate.h wire_rtt_auto). */
qp_time_ns qpaced_wire_rtt(const struct qpaced *d, qp_rate_bps line);

/* daemon_qdisc.c: fq where the departure times need it (qdisc_plan.h), the device put
 * back on close. Open refuses (negative errno, the reason in @err) a device whose root is
 * the operator's and --wire-qdisc / --wire-fq-parent do not allow; a kernel without
 * sch_fq is logged and leaves the device as it was (installed false). */
int qpaced_qdisc_open(struct qpaced *d, const char *dev, qp_rate_bps maxrate, char *err,
		      size_t errlen);
bool qpaced_qdisc_installed(const struct qpaced *d);
qp_rate_bps qpaced_qdisc_maxrate(const struct qpaced *d);
int qpaced_qdisc_set_maxrate(struct qpaced *d, qp_rate_bps maxrate, char *err, size_t errlen);
void qpaced_qdisc_close(struct qpaced *d);
/* --enforce off: put @dev back as the record a dead qpaced left says (what was done into
 * @what); -ENOENT when there is no record. */
int qpaced_qdisc_left(struct qpaced *d, const char *dev, char *what, size_t len);

/* The egress program's RTT stamps (qp_tc_rtt_fd; -1 when off), and the agent's QP of
 * the flow with egress key @k (a QP found on the wire or one a program registered):
 * 0 or -ENOENT. */
int qpaced_tc_rtt_fd(const struct qpaced *d);
int qpaced_tc_flow_qpn(struct qpaced *d, const struct qp_tc_key *k, uint32_t *qpn);

/* daemon_ecn.c: the tc ingress program, CNPs sent for CE, CNPs into cc events */
int qpaced_ecn_open(struct qpaced *d, char *err, size_t errlen);
void qpaced_ecn_close(struct qpaced *d);
void qpaced_ecn_metrics(struct qpaced *d, struct qp_strbuf *b);

/* daemon_ia.c: IA credits for receiving flows the ingress program counts (opened and
 * closed by daemon_ecn.c, which owns the program) */
int qpaced_ia_open(struct qpaced *d, struct qp_tci *prog, char *err, size_t errlen);
void qpaced_ia_close(struct qpaced *d);
void qpaced_ia_metrics(struct qpaced *d, struct qp_strbuf *b);

/* daemon_rtt.c: RTT and NAK reports of the ingress program into QPs' transport events
 * (opened and closed by daemon_ecn.c, which owns the program) */
struct qp_tci_report;
int qpaced_rtt_open(struct qpaced *d, char *err, size_t errlen);
void qpaced_rtt_close(struct qpaced *d);
void qpaced_rtt_report(struct qpaced *d, const struct qp_tci_report *r, qp_time_ns now);
void qpaced_rtt_metrics(struct qpaced *d, struct qp_strbuf *b);

/* daemon_http.c */
int qpaced_http_open(struct qpaced *d, char *err, size_t errlen);
void qpaced_http_close(struct qpaced *d);

#endif
