/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control protocol codec: every type round-trips, every truncation and bad field is
 * refused with a message, and random / mutated bytes never crash the decoder. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "test_rng.h"

#include "qpace/cc.h"     /* CC_EV_INT: a cc event no application may send */
#include "qpace/ctl.h"

static struct ctl_msg samples[CTL_T_COUNT];

static void build_samples(void)
{
	struct ctl_msg *m = samples;

	memset(samples, 0, sizeof(samples));
	m[CTL_T_REGISTER] = (struct ctl_msg){ .type = CTL_T_REGISTER, .id = 1 };
	m[CTL_T_REGISTER].u.reg = (struct agent_qp_reg){
		.qpn = 0x123456, .peer_qpn = 0xabcdef, .local_ip = 0x0a000001,
		.peer_ip = 0x0a000002, .sport = 0xc123, .flags = AGENT_QP_RECEIVER,
		.mtu_bytes = 4096, .link_bps = 25 * QP_GBPS, .base_rtt_ns = 12345,
		.algo = "hpcc", .params = "eta=0.9,max_stage=0",
	};
	m[CTL_T_UNREGISTER] = (struct ctl_msg){ .type = CTL_T_UNREGISTER, .id = 2,
						.u.qpn = 0xffffff };
	m[CTL_T_EVENT] = (struct ctl_msg){ .type = CTL_T_EVENT, .id = 3,
					   .u.event = { 7, CTL_EV_RTT, 99999 } };
	m[CTL_T_STATS] = (struct ctl_msg){ .type = CTL_T_STATS, .id = 4,
					   .u.stats = { 7, 1ULL << 40, 12 } };
	m[CTL_T_LIST] = (struct ctl_msg){ .type = CTL_T_LIST, .id = 5 };
	m[CTL_T_SHOW] = (struct ctl_msg){ .type = CTL_T_SHOW, .id = 6, .u.qpn = 9 };
	m[CTL_T_SET] = (struct ctl_msg){ .type = CTL_T_SET, .id = 7 };
	m[CTL_T_SET].u.set = (struct ctl_set){ 9, CTL_SET_ALGO, 0, "ffd", "down=0.8" };
	m[CTL_T_STATUS] = (struct ctl_msg){ .type = CTL_T_STATUS, .id = 8 };
	m[CTL_T_REPLY] = (struct ctl_msg){ .type = CTL_T_REPLY, .id = 9 };
	m[CTL_T_REPLY].u.reply.status = -EEXIST;
	m[CTL_T_REPLY].u.reply.count = 3;
	strcpy(m[CTL_T_REPLY].u.reply.text, "qp 0x000009 already registered");
	m[CTL_T_QP] = (struct ctl_msg){ .type = CTL_T_QP, .id = 10 };
	m[CTL_T_QP].u.qp = (struct agent_qp_view){
		.reg = m[CTL_T_REGISTER].u.reg, .pid = 4321, .slot = 17, .rate_bps = 3 * QP_GBPS,
		.target_bps = 4 * QP_GBPS, .cap_bytes = 5119, .override = true, .credit_gated = true,
		.credits_rx_bytes = 1000, .credits_tx_bytes = 2000, .utilization = 0.953125,
		.queue_bytes = 65536, .rtt_ns = 20000, .tx_bytes = 1ULL << 33,
		.retransmissions = 5, .feedback = 77, .psn64 = (1ULL << 24) + 5,
		.wire = { .seen = true, .discovered = true, .bytes = 1ULL << 40, .pkts = 999,
			  .measured_bps = 123456789, .set_bps = 5 * QP_GBPS, .floored = true,
			  .resent = 77, .ackreqs = 1ULL << 33 },
		.enforce = AGENT_ENF_TC,
	};
	m[CTL_T_TXSTATE] = (struct ctl_msg){ .type = CTL_T_TXSTATE, .id = 12,
					     .u.txstate = { .qpn = 0x123456, .psn = 0xfffffe,
							    .enforce = AGENT_ENF_NIC } };
	m[CTL_T_AGENT] = (struct ctl_msg){ .type = CTL_T_AGENT, .id = 11 };
	m[CTL_T_AGENT].u.agent = (struct ctl_agent){ .pid = 1, .qps = 2, .max_qps = 3,
						     .uptime_ns = 4 };
	for (unsigned i = 0; i < AGENT_C_COUNT; i++)
		m[CTL_T_AGENT].u.agent.counters[i] = i * 1000 + 1;
	m[CTL_T_AGENT].u.agent.delay_samples = 5;
	m[CTL_T_AGENT].u.agent.delay_p50_ns = 6;
	m[CTL_T_AGENT].u.agent.delay_p99_ns = 7;
	m[CTL_T_AGENT].u.agent.delay_max_ns = 8;
}

static void test_roundtrip(void **state)
{
	uint8_t buf[CTL_MAX_LEN];
	char err[160];
	(void)state;

	build_samples();
	for (unsigned t = 1; t < CTL_T_COUNT; t++) {
		struct ctl_msg got;
		int n = ctl_encode(buf, sizeof(buf), &samples[t]);

		assert_true(n >= CTL_HDR_LEN);
		assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), 0);
		assert_memory_equal(&got, &samples[t], sizeof(got));
		/* a later revision's longer body: the extra bytes are ignored */
		buf[n] = 0xee;
		buf[4] = (uint8_t)((n + 1) >> 8);
		buf[5] = (uint8_t)(n + 1);
		assert_int_equal(ctl_decode(&got, buf, (size_t)n + 1, err, sizeof(err)), 0);
		assert_memory_equal(&got, &samples[t], sizeof(got));
		/* every truncation is refused and nothing is written */
		for (int len = 0; len < n; len++) {
			struct ctl_msg untouched;

			memset(&untouched, 0x5a, sizeof(untouched));
			buf[4] = (uint8_t)(len >> 8);
			buf[5] = (uint8_t)len;
			if (len < CTL_HDR_LEN || ctl_decode(&untouched, buf, (size_t)len, NULL, 0)) {
				assert_int_equal(((uint8_t *)&untouched)[0], 0x5a);
				continue;
			}
			/* optional tails: AGENT's delay figures, QP's window, then its wire
			 * figures (34 bytes), its enforcer (2), what guards its ACK timer
			 * (16); without them, zeros */
			if (t == CTL_T_AGENT && len >= n - 32 && untouched.u.agent.delay_samples == 0)
				continue;
			if (t == CTL_T_QP && len >= n - 16 && untouched.u.qp.wire.seen &&
			    untouched.u.qp.wire.floored && untouched.u.qp.wire.resent == 0 &&
			    untouched.u.qp.wire.ackreqs == 0)
				continue;
			if (t == CTL_T_QP && len >= n - 18 && len < n - 16 &&
			    untouched.u.qp.wire.seen && untouched.u.qp.enforce == AGENT_ENF_GATE)
				continue;
			if (t == CTL_T_QP && len >= n - 52 && len < n - 18 &&
			    !untouched.u.qp.wire.seen && untouched.u.qp.wire.bytes == 0 &&
			    untouched.u.qp.cap_bytes == 5119 && untouched.u.qp.enforce == 0)
				continue;
			if (t == CTL_T_QP && len >= n - 60 && len < n - 52 &&
			    !untouched.u.qp.wire.seen && untouched.u.qp.cap_bytes == 0)
				continue;
			fail_msg("%s decoded at %d of %d bytes", ctl_type_name(t), len, n);
		}
	}
}

static void test_bad_fields(void **state)
{
	static const struct {
		unsigned type;
		size_t off;       /* body offset */
		uint8_t value;
		int rc;
		const char *named;
	} cases[] = {
		{ CTL_T_REGISTER, 0, 0x01, -EINVAL, "qpn" },          /* qpn above 24 bits */
		{ CTL_T_REGISTER, 40, 'A', -EINVAL, "algo" },         /* upper case name */
		{ CTL_T_REGISTER, 56, 200, -EINVAL, "params" },       /* params length too long */
		{ CTL_T_REGISTER, 58, ' ', -EINVAL, "params" },       /* space in params */
		{ CTL_T_EVENT, 4, CC_EV_INT, -EINVAL, "event type" }, /* INT is no app event */
		{ CTL_T_SET, 4, 9, -EINVAL, "what" },
		{ CTL_T_REPLY, 9, '\n', -EINVAL, "text" },
		{ CTL_T_TXSTATE, 4, 2, -EINVAL, "version" },          /* a later record version */
		{ CTL_T_TXSTATE, 4, 0, -EINVAL, "version" },
		{ CTL_T_TXSTATE, 5, AGENT_ENF_TC, -EINVAL, "enforce" }, /* no program's enforcer */
		{ CTL_T_TXSTATE, 8, 0x01, -EINVAL, "psn" },           /* psn above 24 bits */
		{ CTL_T_TXSTATE, 0, 0x01, -EINVAL, "qpn" },
		{ CTL_T_QP, 153 + 19 + 8 + 34, AGENT_ENF_COUNT, -EINVAL, "enforce" },
	};
	uint8_t buf[CTL_MAX_LEN];
	char err[160];
	struct ctl_msg got;
	int n;
	(void)state;

	build_samples();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = ctl_encode(buf, sizeof(buf), &samples[cases[i].type]);
		buf[CTL_HDR_LEN + cases[i].off] = cases[i].value;
		assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), cases[i].rc);
		assert_non_null(strstr(err, cases[i].named));
	}
	print_message("e.g. %s\n", err);
	n = ctl_encode(buf, sizeof(buf), &samples[CTL_T_LIST]);
	buf[2] = 2;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), -EPROTO);
	print_message("%s\n", err);
	buf[2] = 1;
	buf[3] = 99;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), -ENOMSG);
	buf[3] = CTL_T_LIST;
	buf[0] = 0;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), -EPROTO);
	/* the encoder refuses what the decoder would */
	got = samples[CTL_T_REGISTER];
	got.u.reg.qpn = 0x1000000;
	assert_int_equal(ctl_encode(buf, sizeof(buf), &got), -EINVAL);
	got = samples[CTL_T_REGISTER];
	strcpy(got.u.reg.params, "a b");
	assert_int_equal(ctl_encode(buf, sizeof(buf), &got), -EINVAL);
	assert_int_equal(ctl_encode(buf, 20, &samples[CTL_T_REGISTER]), -EMSGSIZE);
}

/* TXSTATE, the sender's posted PSN: its own version, a length the decoder checks, and the
 * fields a program may send (gate or nic; 24-bit PSNs, the wrap's edge included). */
static void test_txstate(void **state)
{
	uint8_t buf[CTL_MAX_LEN];
	char err[160] = "";
	struct ctl_msg got, m = { .type = CTL_T_TXSTATE, .id = 3,
				  .u.txstate = { .qpn = 0x11, .psn = 0xffffff,
						 .enforce = AGENT_ENF_GATE } };
	int n;
	(void)state;

	n = ctl_encode(buf, sizeof(buf), &m);
	assert_int_equal(n, CTL_HDR_LEN + 12);
	assert_int_equal(buf[CTL_HDR_LEN + 4], CTL_TXSTATE_VERSION);
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), 0);
	assert_int_equal(got.u.txstate.psn, 0xffffff);
	assert_int_equal(got.u.txstate.enforce, AGENT_ENF_GATE);
	/* truncated: the header says 11 bytes of body */
	buf[5] = CTL_HDR_LEN + 11;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), -EMSGSIZE);
	assert_non_null(strstr(err, "txstate message body of 11 bytes, needs 12"));
	/* or the packet is shorter than its header says */
	buf[5] = CTL_HDR_LEN + 12;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n - 1, err, sizeof(err)), -EMSGSIZE);
	/* another version of the record */
	buf[CTL_HDR_LEN + 4] = CTL_TXSTATE_VERSION + 1;
	assert_int_equal(ctl_decode(&got, buf, (size_t)n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "txstate message: field version"));
	print_message("%s\n", err);
	/* the encoder refuses what the decoder would */
	m.u.txstate.psn = 0x1000000;
	assert_int_equal(ctl_encode(buf, sizeof(buf), &m), -EINVAL);
	m.u.txstate.psn = 0;
	m.u.txstate.enforce = AGENT_ENF_NONE;
	assert_int_equal(ctl_encode(buf, sizeof(buf), &m), -EINVAL);
	assert_string_equal(ctl_type_name(CTL_T_TXSTATE), "txstate");
	assert_string_equal(ctl_enforce_name(AGENT_ENF_NIC), "nic");
	assert_string_equal(ctl_enforce_name(AGENT_ENF_COUNT), "unknown");
}

/* Random and mutated messages (fixed seed): never a crash; whatever decodes re-encodes into
 * a message that decodes to the same thing. */
static void test_fuzz(void **state)
{
	uint8_t good[CTL_T_COUNT][CTL_MAX_LEN], buf[CTL_MAX_LEN + 8], again[CTL_MAX_LEN];
	int glen[CTL_T_COUNT];
	uint64_t seed = 7;
	unsigned decoded = 0, rounds = 60000;
	(void)state;

	build_samples();
	for (unsigned t = 1; t < CTL_T_COUNT; t++)
		glen[t] = ctl_encode(good[t], CTL_MAX_LEN, &samples[t]);
	for (unsigned i = 0; i < rounds; i++) {
		unsigned t = 1 + (unsigned)(test_rng(&seed) % (CTL_T_COUNT - 1));
		size_t len = (size_t)glen[t];
		struct ctl_msg a, b;
		int n;

		memcpy(buf, good[t], len);
		if (i % 3 == 0) {
			len = test_rng(&seed) % sizeof(buf);
			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)test_rng(&seed);
			if (len >= 4 && i % 2) {  /* keep a plausible header */
				memcpy(buf, good[t], 4);
			}
		} else {
			for (unsigned k = 1 + test_rng(&seed) % 3; k; k--)
				buf[test_rng(&seed) % len] = (uint8_t)test_rng(&seed);
		}
		if (ctl_decode(&a, buf, len, NULL, 0))
			continue;
		decoded++;
		n = ctl_encode(again, sizeof(again), &a);
		assert_true(n > 0);
		assert_int_equal(ctl_decode(&b, again, (size_t)n, NULL, 0), 0);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	print_message("%u of %u random/mutated messages decoded, each re-encoded identically\n",
		      decoded, rounds);
	assert_true(decoded > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_txstate),
		cmocka_unit_test(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
