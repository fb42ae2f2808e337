/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Impairments inside the switch's data path (pipeline.c's leave hook), with injected
 * time: two switches, a host port on each (udp on loopback; this test holds the sockets
 * at their remote ends) and an impaired link between them. RoCEv2 frames from host 1
 * enter s1 at model times of its choosing; sw_fabric_emit runs them out.
 *   reorder + dup on the link, dup + jitter on s2's host port: every frame arrives, as
 *     many copies as the counters say, reordered by the link only; the INT reports s2
 *     makes for them carry s1's hop, kept with each frame the link held back
 *   corruption on the link: s2 drops the frames whose IPv4 header checksum fails,
 *     forwards the rest and counts exactly those whose ICRC does not verify
 *   --icrc-check N: the ICRC of every N-th RoCEv2 frame a port receives is checked. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "qpace/addr.h"
#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "sw.h"
#include "soft_net.h"

#define NFRAMES 3000
#define PAYLOAD 1000

static const struct frame_addr h1 = { { 0x02, 0, 10, 0, 0, 1 }, 0x0a000001, 0xc001 };
static const struct frame_addr h2 = { { 0x02, 0, 10, 0, 0, 2 }, 0x0a000002, 0 };

struct rig {
	struct sw_conf conf;
	struct sw_fabric *f;
	int sock1, sock2;          /* the far ends of s1's and s2's host ports */
	struct sw_port *in, *out, *l1, *l2;
	/* what arrived */
	uint32_t *copies;          /* per PSN, at host 2 */
	uint64_t got, inversions, corrupt_got;
	uint64_t corrupt_masked;   /* ... in what the switch's ICRC check does not cover */
	uint32_t last_psn;
	uint64_t reports, reports_two_hops;
};

static int udp_bound(unsigned port)
{
	struct sockaddr_in a = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)port);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static int build(uint8_t *f, uint32_t psn)
{
	struct frame_roce_spec s = {
		.src = h1, .dst = h2,
		.bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .dest_qp = 0x11, .psn = psn },
		.payload_len = PAYLOAD,
	};
	int n = frame_build_roce(f, SW_FRAME_MAX, &s);

	assert_true(n > 0);
	return n;
}

static struct rig *rig_open(unsigned salt, const char *link_impair, const char *out_impair)
{
	struct rig *r = calloc(1, sizeof(*r));
	unsigned b = soft_port_base(salt);
	char text[800], err[512];

	snprintf(text, sizeof(text),
		 "switch s1 rate=1G delay=1us\n"
		 "port s1 in udp local=127.0.0.1:%u remote=127.0.0.1:%u\n"
		 "switch s2 rate=1G delay=1us\n"
		 "port s2 out udp local=127.0.0.1:%u remote=127.0.0.1:%u impair=%s\n"
		 "link s1:l s2:l impair=%s\n", b, b + 1, b + 2, b + 3, out_impair, link_impair);
	sw_conf_defaults(&r->conf);
	r->conf.def.telem.int_flows = SW_INT_FLOWS_ALL;   /* raw frames: no agent asks */
	assert_int_equal(sw_topo_parse(&r->conf, text, "t.topo", err, sizeof(err)), 0);
	sw_conf_finish(&r->conf);
	r->conf.quiet = true;
	r->conf.icrc_every = 1;   /* every frame's ICRC checked */
	r->f = sw_fabric_create(&r->conf, err, sizeof(err));
	if (!r->f)
		fail_msg("%s", err);
	r->in = &r->f->sw[0]->ports[0];
	r->l1 = &r->f->sw[0]->ports[1];
	r->out = &r->f->sw[1]->ports[0];
	r->l2 = &r->f->sw[1]->ports[1];
	r->sock1 = udp_bound(b + 1);
	r->sock2 = udp_bound(b + 3);
	r->copies = calloc(NFRAMES, sizeof(*r->copies));
	return r;
}

static void rig_close(struct rig *r)
{
	sw_fabric_destroy(r->f);
	sw_conf_free(&r->conf);
	close(r->sock1);
	close(r->sock2);
	free(r->copies);
	free(r);
}

/* Byte @at of a RoCEv2 frame is one the ICRC does not cover (UDP checksum, BTH byte 4). */
static bool icrc_masked(size_t at)
{
	size_t udp = FRAME_ETH_HLEN + FRAME_IPV4_HLEN, bth = udp + FRAME_UDP_HLEN;
	return at == udp + 6 || at == udp + 7 || at == bth + 4;
}

static void drain(struct rig *r)
{
	uint8_t buf[SW_FRAME_MAX], ref[SW_FRAME_MAX];
	struct frame_parsed p;
	struct fb_msg m;
	ssize_t n;

	while ((n = recv(r->sock2, buf, sizeof(buf), 0)) > 0) {
		size_t diff = SIZE_MAX;
		uint32_t psn;
		int len;

		r->got++;
		assert_int_equal(frame_parse(&p, buf, (size_t)n), 0);   /* else s2 dropped it */
		if (!(p.layers & FRAME_L_ROCE)) {   /* a flipped UDP port: no ICRC to check */
			r->corrupt_got++;
			r->corrupt_masked++;
			continue;
		}
		psn = p.bth.psn;
		/* the frame this PSN makes: a flipped PSN shows in the ICRC */
		len = build(ref, psn < NFRAMES ? psn : 0);
		for (size_t i = 0; i < (size_t)n && i < (size_t)len; i++)
			if (buf[i] != ref[i])
				diff = diff == SIZE_MAX ? i : diff;
		if (diff != SIZE_MAX || psn >= NFRAMES) {
			r->corrupt_got++;
			r->corrupt_masked += diff != SIZE_MAX && icrc_masked(diff);
			continue;
		}
		r->copies[psn]++;
		r->inversions += r->copies[psn] == 1 && r->got > 1 && psn < r->last_psn;
		if (r->copies[psn] == 1)
			r->last_psn = psn > r->last_psn ? psn : r->last_psn;
	}
	while ((n = recv(r->sock1, buf, sizeof(buf), 0)) > 0) {
		const uint8_t *pl;
		size_t left;

		if (frame_parse(&p, buf, (size_t)n) || !(p.layers & FRAME_L_UDP) ||
		    p.udp.dport != FB_PORT)
			continue;   /* the flooded learning frame */
		pl = buf + p.payload_off;
		left = p.payload_len;
		while (left && fb_decode(&m, pl, left) == 0 && m.length <= left) {
			if (m.type == FB_T_INT) {
				r->reports++;
				r->reports_two_hops += m.u.int_report.nhops == 2 &&
						       m.u.int_report.hops[0].switch_id == 1 &&
						       m.u.int_report.hops[1].switch_id == 2;
			}
			pl += m.length;
			left -= m.length;
		}
	}
}

/* Host 2 speaks first (so the switches learn where it is), then host 1 sends NFRAMES
 * frames 10 us apart; the fabric runs in 1 us steps until nothing waits. */
static void rig_run(struct rig *r)
{
	uint8_t f[SW_FRAME_MAX];
	int n;
	qp_time_ns t = QP_NS_PER_MS;

	n = frame_build_udp(f, sizeof(f), &h2, &h1, NULL, (const uint8_t *)"hello", 5);
	sw_ingress(r->out, f, (size_t)n, NULL, t);
	for (uint32_t i = 0; i < NFRAMES; i++) {
		for (qp_time_ns end = t + 10 * QP_NS_PER_US; t < end; t += QP_NS_PER_US) {
			sw_fabric_emit(r->f, t);
			drain(r);
		}
		n = build(f, i);
		sw_ingress(r->in, f, (size_t)n, NULL, t);
	}
	for (int guard = 0; sw_fabric_next_ns(r->f) != QP_TIME_NEVER && guard < 100000; guard++) {
		t += QP_NS_PER_US;
		sw_fabric_emit(r->f, t);
		drain(r);
	}
	assert_int_equal(sw_fabric_next_ns(r->f), QP_TIME_NEVER);
	usleep(10000);
	drain(r);
}

static const struct sw_impair_stats *imp(const struct sw_port *p)
{
	return sw_impair_stats(p->imp);
}

static void test_link_reorder_dup_jitter(void **state)
{
	struct rig *r = rig_open(31, "reorder=5%:30us,dup=2%,seed=3", "dup=1%,jitter=4us,seed=8");
	uint64_t once = 0, all = 0;

	(void)state;
	rig_run(r);
	for (uint32_t i = 0; i < NFRAMES; i++) {
		once += r->copies[i] >= 1;
		all += r->copies[i];
	}
	print_message("link s1->s2: %llu held back, %llu duplicated; s2 host port: %llu "
		      "duplicated, %llu jittered; host 2 got %llu frames (%llu distinct of %d), "
		      "%llu out of order; %llu INT reports, %llu with both hops\n",
		      (unsigned long long)imp(r->l1)->impair_reorder,
		      (unsigned long long)imp(r->l1)->impair_dup,
		      (unsigned long long)imp(r->out)->impair_dup,
		      (unsigned long long)imp(r->out)->impair_jitter, (unsigned long long)r->got,
		      (unsigned long long)once, NFRAMES, (unsigned long long)r->inversions,
		      (unsigned long long)r->reports, (unsigned long long)r->reports_two_hops);
	assert_int_equal(once, NFRAMES);
	assert_int_equal(r->corrupt_got, 0);
	/* every copy: the frames, the link's second copies, then s2's port's */
	assert_int_equal(all, NFRAMES + imp(r->l1)->impair_dup + imp(r->out)->impair_dup);
	assert_int_equal(r->out->st.tx_frames, all);
	assert_true(imp(r->l1)->impair_reorder > 0 && imp(r->l1)->impair_dup > 0);
	assert_true(imp(r->out)->impair_dup > 0 && imp(r->out)->impair_jitter > 0);
	/* frames 10 us apart held 30 us: each held one is passed (s2's jitter keeps FIFO) */
	assert_true(r->inversions > 0 && r->inversions <= imp(r->l1)->impair_reorder);
	assert_int_equal(imp(r->l1)->impair_hold_drops + imp(r->out)->impair_hold_drops, 0);
	/* one report per frame s2 sent on (before its own duplicates), each with s1's hop
	 * that crossed the link with the frame, held or not */
	assert_int_equal(r->out->st.int_reports, NFRAMES + imp(r->l1)->impair_dup);
	assert_int_equal(r->reports, r->out->st.int_reports);
	assert_int_equal(r->reports_two_hops, r->reports);
	/* every RoCEv2 frame s2 took off the link had its ICRC checked, and none failed */
	assert_int_equal(r->l2->st.icrc_checked, NFRAMES + imp(r->l1)->impair_dup);
	assert_int_equal(r->l2->st.icrc_bad + r->l2->st.ip_csum_drops, 0);
	rig_close(r);
}

/* --icrc-check 16: the first RoCEv2 frame a port receives and every 16th after it. */
static void test_icrc_sampled(void **state)
{
	struct rig *r = rig_open(33, "off", "off");

	(void)state;
	r->conf.icrc_every = 16;
	rig_run(r);
	assert_int_equal(r->got, NFRAMES);
	assert_int_equal(r->in->st.icrc_checked, (NFRAMES + 15) / 16);
	assert_int_equal(r->l2->st.icrc_checked, (NFRAMES + 15) / 16);
	assert_int_equal(r->out->st.icrc_checked, 0);   /* host 2 sent no RoCEv2 */
	r->conf.icrc_every = 0;
	rig_run(r);
	assert_int_equal(r->in->st.icrc_checked, (NFRAMES + 15) / 16);   /* none more */
	rig_close(r);
}

static void test_link_corruption_checked(void **state)
{
	struct rig *r = rig_open(32, "corrupt=5%,seed=11", "off");
	const struct sw_port_stats *st;
	uint64_t forwarded_bad;

	(void)state;
	rig_run(r);
	st = &r->l2->st;
	forwarded_bad = imp(r->l1)->impair_corrupt - st->ip_csum_drops - st->malformed;
	print_message("link s1->s2: %llu corrupted; s2 dropped %llu (IPv4 checksum) + %llu "
		      "(malformed), counted %llu ICRC failures; host 2 got %llu corrupted "
		      "(%llu in bits the ICRC masks)\n",
		      (unsigned long long)imp(r->l1)->impair_corrupt,
		      (unsigned long long)st->ip_csum_drops, (unsigned long long)st->malformed,
		      (unsigned long long)st->icrc_bad, (unsigned long long)r->corrupt_got,
		      (unsigned long long)r->corrupt_masked);
	assert_true(imp(r->l1)->impair_corrupt > 0 && st->ip_csum_drops > 0 && st->icrc_bad > 0);
	assert_int_equal(r->corrupt_got, forwarded_bad);
	assert_int_equal(st->icrc_bad, r->corrupt_got - r->corrupt_masked);
	assert_int_equal(r->got - r->corrupt_got, NFRAMES - imp(r->l1)->impair_corrupt);
	rig_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_reorder_dup_jitter),
		cmocka_unit_test(test_link_corruption_checked),
		cmocka_unit_test(test_icrc_sampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
