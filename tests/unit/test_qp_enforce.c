/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Hardware rate limits as the second enforcement backend (verbs/qp_enforce.c), against a
 * fake device: a backend whose rate_caps / rate_limit slots are test functions. The caps
 * absent, present, a rate outside them, and a limit the NIC refuses (EINVAL: this QP back
 * to the gate; EOPNOTSUPP: every later QP too), counted, one line per context. And the
 * soft backend, which like rxe has no per-QP rate limits: the automatic choice is the gate.
 * Time is injected (virtual), the rate comes from an in-process table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "qp_enforce.h"
#include "qpace/qp.h"
#include "qpace/soft.h"
#include "soft_net.h"

/* ---- the fake device ---- */

struct fake_dev {
	int caps_rc;                 /* what rate_caps returns */
	struct qp_rate_caps caps;
	int limit_rc;                /* what rate_limit returns for a non-zero limit */
	uint32_t limits[64];         /* every limit asked for, in order */
	unsigned nlimits;
	unsigned caps_queries;
	unsigned pieces;
};

static struct fake_dev dev;
static uint32_t next_qpn = 0x200;
static qp_time_ns vnow;

static qp_time_ns vclock(void *arg)
{
	(void)arg;
	return vnow;
}

static int fake_qp_init(struct qp *qp, char *err, size_t errlen)
{
	(void)err; (void)errlen;
	qp->qpn = next_qpn++;
	qp->local = (struct qp_conn_info){ .qpn = qp->qpn, .psn = 1, .mtu_bytes = 4096 };
	return 0;
}
static int fake_connect(struct qp *qp, char *err, size_t errlen)
{
	(void)qp; (void)err; (void)errlen;
	return 0;
}
static int fake_post(struct qp *qp, const struct qp_wr *wr)
{
	(void)qp; (void)wr;
	dev.pieces++;
	return 0;
}
static int fake_mr(struct qp_mr *mr)
{
	mr->lkey = mr->rkey = 1;
	return 0;
}
static int fake_caps(struct qp_ctx *ctx, struct qp_rate_caps *caps)
{
	(void)ctx;
	dev.caps_queries++;
	if (dev.caps_rc == 0)
		*caps = dev.caps;
	return dev.caps_rc;
}
static int fake_limit(struct qp *qp, uint32_t kbps)
{
	(void)qp;
	if (dev.nlimits < 64)
		dev.limits[dev.nlimits++] = kbps;
	return kbps ? dev.limit_rc : 0;
}

static const struct qp_backend_ops fake_ops = {
	.name = "fakenic", .qp_init = fake_qp_init, .qp_connect = fake_connect,
	.post_send = fake_post, .mr_init = fake_mr, .rate_caps = fake_caps,
	.rate_limit = fake_limit,
};

/* ---- fixture: a context on the fake device, its table, QPs at a rate ---- */

#define LINE_BPS (100 * QP_GBPS)

struct fx {
	struct qp_ctx *ctx;
	struct qp_ratetable *rates;
	struct qp_mr *mr;
	uint8_t buf[1 << 20];
	unsigned log_lines;
	char last_log[256];
};

static void fx_log(void *arg, const char *line)
{
	struct fx *f = arg;

	f->log_lines++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", line);
	print_message("  log: %s\n", line);
}

static struct fx *fx_open(void)
{
	static struct fx f;
	struct qp_ctx_attr ca = { .log = fx_log, .log_arg = &f, .clock = vclock };
	char err[200];

	memset(&f, 0, sizeof(f));
	vnow = QP_NS_PER_S;
	assert_int_equal(qp_ratetable_create_mem(8, &f.rates, err, sizeof(err)), 0);
	ca.rate_table_mem = f.rates;
	assert_int_equal(qp_ctx_open_ops(&fake_ops, &ca, &f.ctx, err, sizeof(err)), 0);
	assert_int_equal(qp_mr_reg(f.ctx, f.buf, sizeof(f.buf), QP_ACCESS_LOCAL_WRITE, &f.mr), 0);
	return &f;
}

static void fx_close(struct fx *f)
{
	qp_ctx_close(f->ctx);
	qp_ratetable_close(f->rates);
}

/* The agent publishes @bps for @qp (and beats). */
static void fx_rate(struct fx *f, const struct qp *qp, qp_rate_bps bps)
{
	int slot = qp_ratetable_assign(f->rates, qp->qpn);

	assert_true(slot >= 0);
	qp_ratetable_set(f->rates, (uint32_t)slot, bps, 0, 0, vnow);
	qp_ratetable_heartbeat(f->rates, vnow);
}

static struct qp *fx_qp(struct fx *f)
{
	struct qp_attr qa = { .flags = QP_F_NONBLOCK,
			      .gate = { .line_bps = LINE_BPS, .chunk_bytes = 65536 } };
	struct qp_conn_info peer = { .qpn = 0x900, .psn = 1, .mtu_bytes = 4096 };
	struct qp *qp;
	char err[200];

	assert_int_equal(qp_create(f->ctx, &qa, &qp, err, sizeof(err)), 0);
	assert_int_equal(qp_connect(qp, &peer, err, sizeof(err)), 0);
	return qp;
}

/* Post a 1 MiB WRITE at the current virtual time; returns the pieces handed on now. */
static unsigned fx_post_mib(struct fx *f, struct qp *qp)
{
	unsigned before = dev.pieces;
	int rc = qp_post_send(qp, &(struct qp_wr){ .opcode = QP_OP_WRITE, .mr = f->mr,
		.addr = f->buf, .length = sizeof(f->buf) });

	assert_true(rc == 0 || rc == -EAGAIN);
	return dev.pieces - before;
}

/* Let a pending WR finish (the gate's pace, in virtual time). */
static void fx_drain(struct fx *f, struct qp *qp)
{
	for (int i = 0; i < 100000 && qp->pend.active; i++) {
		vnow = qp->retry_ns > vnow ? qp->retry_ns : vnow;
		qp_ratetable_heartbeat(f->rates, vnow);
		assert_true(qp_ctx_progress(f->ctx, vnow) >= 0);
	}
	assert_false(qp->pend.active);
}

static void dev_reset(int caps_rc, uint32_t min_kbps, uint32_t max_kbps, int limit_rc)
{
	memset(&dev, 0, sizeof(dev));
	dev.caps_rc = caps_rc;
	dev.caps = (struct qp_rate_caps){ min_kbps, max_kbps };
	dev.limit_rc = limit_rc;
}

/* ---- tests ---- */

static void test_kbps_conversion(void **state)
{
	struct qp_rate_caps caps = { 1000, 100000000 };
	bool clamped;
	(void)state;

	assert_int_equal(qp_enforce_kbps(2500 * QP_MBPS, &caps, &clamped), 2500000);
	assert_false(clamped);
	assert_int_equal(qp_enforce_kbps(1499, &(struct qp_rate_caps){ 0, 10 }, &clamped), 1);
	assert_int_equal(qp_enforce_kbps(1500, &(struct qp_rate_caps){ 0, 10 }, &clamped), 2);
	assert_int_equal(qp_enforce_kbps(1, &(struct qp_rate_caps){ 0, 10 }, &clamped), 1);
	assert_false(clamped);
	assert_int_equal(qp_enforce_kbps(100 * QP_KBPS, &caps, &clamped), 1000);
	assert_true(clamped);
	assert_int_equal(qp_enforce_kbps(400 * QP_GBPS, &caps, &clamped), 100000000);
	assert_true(clamped);
	assert_string_equal(qp_enforcer_name(QP_ENF_NIC), "nic");
	assert_string_equal(qp_enforcer_name(QP_ENF_GATE), "gate");
}

/* No caps (rxe's answer): the gate paces, the NIC is never asked for a limit, no line. */
static void test_caps_absent_gate(void **state)
{
	struct fx *f;
	struct qp *qp;
	unsigned now_pieces;
	qp_time_ns t0;
	(void)state;

	dev_reset(-EOPNOTSUPP, 0, 0, 0);
	f = fx_open();
	qp = fx_qp(f);
	assert_int_equal(qp->enforce.which, QP_ENF_GATE);
	assert_non_null(strstr(f->ctx->enforce.why, "no per-QP rate limits"));
	fx_rate(f, qp, QP_GBPS);
	t0 = vnow;
	now_pieces = fx_post_mib(f, qp);
	assert_true(now_pieces < 16);           /* the gate holds the rest back */
	fx_drain(f, qp);
	/* 1 MiB at 1 Gb/s: at least (1 MiB - the bucket) / rate of virtual time */
	assert_true(vnow - t0 >= qp_tx_time_ns(sizeof(f->buf) - qp_gate_cap_bytes(&qp->pacer.gate),
					      QP_GBPS));
	assert_int_equal(dev.nlimits, 0);
	assert_int_equal(f->log_lines, 0);
	print_message("no caps: gate; 1 MiB at 1 Gb/s took %.3f ms virtual, %u pieces at once\n",
		      (double)(vnow - t0) / 1e6, now_pieces);
	fx_close(f);
}

/* Caps present: every QP is the NIC's (one line), the whole WRITE is handed on at once
 * (the gate waits for no tokens), and the rate goes to the NIC in kbit/s, set only on a
 * change; the device is queried once per context. */
static void test_caps_present_nic(void **state)
{
	struct fx *f;
	struct qp *a, *b;
	(void)state;

	dev_reset(0, 1000, 100000000, 0);
	f = fx_open();
	a = fx_qp(f);
	b = fx_qp(f);
	assert_int_equal(dev.caps_queries, 1);
	assert_int_equal(a->enforce.which, QP_ENF_NIC);
	assert_int_equal(b->enforce.which, QP_ENF_NIC);
	assert_int_equal(f->log_lines, 1);
	assert_non_null(strstr(f->last_log, "the NIC enforces each QP's rate (per-QP rate "
			       "limits 1000..100000000 kbit/s)"));
	fx_rate(f, a, QP_GBPS);
	assert_int_equal(fx_post_mib(f, a), 16);   /* 16 pieces of 64 KiB, none held */
	assert_false(a->pend.active);
	assert_int_equal(dev.nlimits, 1);
	assert_int_equal(dev.limits[0], 1000000);
	assert_int_equal(a->pacer.gate.stats.nic_pieces, 16);
	assert_int_equal(a->pacer.gate.stats.token_waits, 0);
	/* the same rate: nothing set; a new one: set once */
	assert_int_equal(fx_post_mib(f, a), 16);
	assert_int_equal(dev.nlimits, 1);
	fx_rate(f, a, 2500 * QP_MBPS);
	assert_int_equal(fx_post_mib(f, a), 16);
	assert_int_equal(dev.nlimits, 2);
	assert_int_equal(dev.limits[1], 2500000);
	assert_int_equal(a->enforce.sets, 2);
	assert_int_equal(a->enforce.kbps, 2500000);
	/* no agent rate for b: the gate's fallback (safe: 1/10 of the line) goes to the NIC */
	assert_int_equal(fx_post_mib(f, b), 16);
	assert_int_equal(dev.limits[2], LINE_BPS / 10 / QP_KBPS);
	assert_int_equal(b->pacer.gate.mode, QP_GATE_SAFE);
	print_message("caps 1000..100000000 kbit/s: nic; limits set %u, %u, %u kbit/s\n",
		      dev.limits[0], dev.limits[1], dev.limits[2]);
	fx_close(f);
}

/* A rate outside the caps is clamped into them (counted). */
static void test_rate_out_of_caps(void **state)
{
	struct fx *f;
	struct qp *qp;
	(void)state;

	dev_reset(0, 10000, 1000000, 0);   /* 10 Mb/s .. 1 Gb/s */
	f = fx_open();
	qp = fx_qp(f);
	fx_rate(f, qp, QP_MBPS);
	fx_post_mib(f, qp);
	fx_rate(f, qp, 5 * QP_GBPS);
	fx_post_mib(f, qp);
	fx_rate(f, qp, 500 * QP_MBPS);
	fx_post_mib(f, qp);
	assert_int_equal(dev.nlimits, 3);
	assert_int_equal(dev.limits[0], 10000);
	assert_int_equal(dev.limits[1], 1000000);
	assert_int_equal(dev.limits[2], 500000);
	assert_int_equal(qp->enforce.clamped, 2);
	assert_int_equal(qp->enforce.which, QP_ENF_NIC);
	fx_close(f);
}

/* The NIC refuses a limit: that QP goes back to the gate (its limit cleared, counted, one
 * line); with EINVAL the next QP still starts on the NIC, with EOPNOTSUPP on the gate. The
 * gate then paces what the NIC would have. */
static void refused(int limit_rc, enum qp_enforcer next_starts_on)
{
	struct fx *f;
	struct qp *a, *b;
	qp_time_ns t0;
	unsigned first;

	dev_reset(0, 1000, 100000000, limit_rc);
	f = fx_open();
	a = fx_qp(f);
	assert_int_equal(a->enforce.which, QP_ENF_NIC);
	fx_rate(f, a, QP_GBPS);
	t0 = vnow;
	first = fx_post_mib(f, a);
	assert_int_equal(a->enforce.which, QP_ENF_GATE);
	assert_int_equal(a->enforce.failures, 1);
	assert_int_equal(a->enforce.sets, 0);
	assert_int_equal(dev.nlimits, 2);
	assert_int_equal(dev.limits[0], 1000000);
	assert_int_equal(dev.limits[1], 0);           /* cleared */
	assert_int_equal(f->log_lines, 2);            /* "the NIC enforces", then this */
	assert_non_null(strstr(f->last_log, "the NIC refused a rate limit of 1000000 kbit/s"));
	assert_non_null(strstr(f->last_log, strerror(-limit_rc)));
	assert_non_null(strstr(f->last_log, "the pacing gate enforces its rate from now on"));
	/* the first piece went on the NIC's verdict; the gate paces the rest */
	assert_true(first < 16);
	fx_drain(f, a);
	assert_true(vnow - t0 >= qp_tx_time_ns(sizeof(f->buf) - 2 * 65536 -
					       qp_gate_cap_bytes(&a->pacer.gate), QP_GBPS));
	b = fx_qp(f);
	assert_int_equal(b->enforce.which, next_starts_on);
	print_message("refused (%s): back to the gate; 1 MiB at 1 Gb/s took %.3f ms virtual; "
		      "next QP starts on %s\n", strerror(-limit_rc), (double)(vnow - t0) / 1e6,
		      qp_enforcer_name(b->enforce.which));
	if (next_starts_on == QP_ENF_NIC) {
		fx_rate(f, b, QP_GBPS);
		fx_post_mib(f, b);
		assert_int_equal(b->enforce.failures, 1);
		assert_int_equal(f->log_lines, 2);    /* counted, not said again */
	}
	fx_close(f);
}

static void test_refused_einval(void **state)
{
	(void)state;
	refused(-EINVAL, QP_ENF_NIC);
}

static void test_refused_eopnotsupp(void **state)
{
	(void)state;
	refused(-EOPNOTSUPP, QP_ENF_GATE);
}

/* The soft backend (userspace RoCEv2, rxe's frames) has no per-QP rate limits, as kernel
 * rxe: the automatic choice is the gate, for both ends of a real connection. */
static void test_soft_backend_picks_gate(void **state)
{
	struct soft_side sa, sb;
	unsigned p = soft_port_base(41);
	char a[160], b[160];
	(void)state;

	snprintf(a, sizeof(a), "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.1", p, p + 1);
	snprintf(b, sizeof(b), "bind=%u,peer=127.0.0.1:%u,ip=10.0.0.2", p + 1, p);
	soft_side_open(&sa, a, 8192, QP_ACCESS_LOCAL_WRITE, NULL);
	soft_side_open(&sb, b, 8192, QP_ACCESS_LOCAL_WRITE | QP_ACCESS_REMOTE_WRITE, NULL);
	soft_connect(&sa, &sb);
	assert_int_equal(sa.qp->enforce.which, QP_ENF_GATE);
	assert_int_equal(sb.qp->enforce.which, QP_ENF_GATE);
	assert_int_equal(sa.ctx->enforce.rc, -EOPNOTSUPP);
	print_message("soft: %s\n", sa.ctx->enforce.why);
	soft_side_close(&sa);
	soft_side_close(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kbps_conversion),
		cmocka_unit_test(test_caps_absent_gate),
		cmocka_unit_test(test_caps_present_nic),
		cmocka_unit_test(test_rate_out_of_caps),
		cmocka_unit_test(test_refused_einval),
		cmocka_unit_test(test_refused_eopnotsupp),
		cmocka_unit_test(test_soft_backend_picks_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
