/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-switch's fabric in this process on real loopback sockets (a --star 2; the hosts are
 * sockets here): what a udp port learns, and signed telemetry.
 *   learning  a 1-byte datagram from a new socket does not re-point the port (the next 20
 *             frames still reach the host), nor a frame from the switch's own MAC; a
 *             well-formed frame from a new peer does; with learn=off nothing does, and the
 *             stranger's frames are not taken; every change and refusal in --stats-json
 *   signing   with a key, every INT report the switch sends is signed (its sender id, an
 *             increasing sequence) and a keyed agent core takes it once; level acks are
 *             taken only signed and new
 *   config    --key and key= on a switch line (a switch may say none), learn=off on udp
 *             ports only and with a remote, --learn for --star only
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_fx.h"
#include "tmpdir.h"
#include "qpace/addr.h"
#include "qpace/fb_auth.h"
#include "qpace/frame.h"
#include "qpace/jsonr.h"
#include "io.h"
#include "sw.h"

#define SENDER 0x51000001u
static const uint8_t key[QP_SIPHASH_KEY_BYTES] = { 0x51, 0x46, 1, 2, 3, 4, 5, 6 };
static const struct frame_addr host_a = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0a }, .ip = 0x0a000001, .port = 0xc011 };
static const struct frame_addr host_b = {
	.mac = { 0x02, 0, 0, 0, 0, 0x0b }, .ip = 0x0a000002, .port = 9000 };

struct rig {
	struct sw_conf conf;
	struct sw_fabric *f;
	int ha, hb, x;           /* the hosts on ports 0 and 1, and a stranger */
	unsigned base;
};

static int udp_bound(uint16_t port)
{
	struct sockaddr_in sa = qp_sockaddr_in(INADDR_LOOPBACK, port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* A --star 2 on a free base port; @fixed: learn=off on both ports; @signed_: the key. */
static void rig_open(struct rig *r, bool fixed, bool signed_)
{
	char err[256];

	memset(r, 0, sizeof(*r));
	for (int tries = 0; tries < 50 && !r->f; tries++) {
		r->base = 30000 + (unsigned)((getpid() * 7 + tries * 131) % 8000) * 4;
		sw_conf_defaults(&r->conf);
		r->conf.def.telem.int_flows = SW_INT_FLOWS_ALL;   /* raw frames: no agent asks */
		r->conf.have_key = signed_;
		memcpy(r->conf.key, key, sizeof(key));
		r->conf.auth_sender = SENDER;
		assert_int_equal(sw_conf_star(&r->conf, 2, r->base, err, sizeof(err)), 0);
		for (int i = 0; i < 2; i++)
			r->conf.sw[0].ports[i].no_learn = fixed;
		sw_conf_finish(&r->conf);
		r->f = sw_fabric_create(&r->conf, err, sizeof(err));
	}
	assert_non_null(r->f);
	r->ha = udp_bound((uint16_t)(r->base + 1));
	r->hb = udp_bound((uint16_t)(r->base + 3));
	r->x = udp_bound(0);
}

static void rig_close(struct rig *r)
{
	sw_fabric_destroy(r->f);
	close(r->ha);
	close(r->hb);
	close(r->x);
}

/* Everything waiting on the switch's sockets goes through the pipeline and out. */
static void pump(struct rig *r)
{
	struct sw_rx_frame rx[SW_BATCH];

	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < r->f->nio; i++) {
			struct sw_port *p = r->f->io_ports[i];
			int n;

			while ((n = p->io->ops->recv(p->io, rx, &p->st.rx_skipped)) > 0)
				for (int k = 0; k < n; k++)
					sw_ingress(p, rx[k].data, rx[k].len, NULL, rx[k].ts_ns);
		}
		sw_fabric_emit(r->f, qp_now_ns() + QP_NS_PER_S);
	}
}

static void send_to_port(int fd, const struct rig *r, int port, const void *b, size_t len)
{
	struct sockaddr_in sa = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(r->base + 2 * port));

	assert_int_equal(sendto(fd, b, len, 0, (struct sockaddr *)&sa, sizeof(sa)), (ssize_t)len);
}

static void send_udp_frame(int fd, const struct rig *r, int port, const struct frame_addr *src,
			   const struct frame_addr *dst)
{
	uint8_t f[256], payload[64] = { 1, 2, 3 };
	int n = frame_build_udp(f, sizeof(f), src, dst, NULL, payload, sizeof(payload));

	assert_true(n > 0);
	send_to_port(fd, r, port, f, (size_t)n);
}

/* Frames waiting on @fd (not blocking). */
static unsigned drain(int fd)
{
	uint8_t b[SW_FRAME_MAX];
	unsigned n = 0;

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		n++;
	return n;
}

/* @n frames from host A to host B: how many reached B's socket and the stranger's. */
static void a_to_b(struct rig *r, int n, unsigned want_b, unsigned want_x)
{
	for (int i = 0; i < n; i++)
		send_udp_frame(r->ha, r, 0, &host_a, &host_b);
	pump(r);
	assert_int_equal(drain(r->hb), want_b);
	assert_int_equal(drain(r->x), want_x);
}

/* ---- --stats-json ---- */

struct port_json {
	uint64_t changes[2], refused[2];
	char remote[2][QP_HOSTPORT_STRLEN];
	uint64_t acks_notag, acks_replay, signed_msgs;
};

static void on_json(void *arg, const char *path, const struct jsonr_val *v)
{
	struct port_json *j = arg;
	unsigned i;
	int used = 0;

	if (!strcmp(path, "switches.0.acks_rejected_notag"))
		j->acks_notag = v->u64;
	if (!strcmp(path, "switches.0.acks_rejected_replay"))
		j->acks_replay = v->u64;
	if (!strcmp(path, "switches.0.signed_messages"))
		j->signed_msgs = v->u64;
	if (sscanf(path, "switches.0.ports.%u.%n", &i, &used) != 1 || !used || i > 1)
		return;
	if (!strcmp(path + used, "remote_changes"))
		j->changes[i] = v->u64;
	else if (!strcmp(path + used, "remote_refused"))
		j->refused[i] = v->u64;
	else if (!strcmp(path + used, "remote") && v->type == JSONR_STR)
		snprintf(j->remote[i], sizeof(j->remote[i]), "%s", v->str);
}

static struct port_json stats(struct rig *r)
{
	struct port_json j = { 0 };
	char *text = NULL, err[200];
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	sw_stats_json(r->f, m, qp_now_ns());
	fclose(m);
	assert_int_equal(jsonr_walk(text, len, on_json, &j, err, sizeof(err)), 0);
	free(text);
	return j;
}

/* ---- learning ---- */

static void test_learning(void **state)
{
	static const uint8_t one = 0x55;
	struct frame_addr own = host_b;
	struct port_json j;
	struct rig r;
	char want[QP_HOSTPORT_STRLEN];
	(void)state;

	rig_open(&r, false, false);
	memcpy(own.mac, r.conf.sw[0].mac, 6);
	send_udp_frame(r.hb, &r, 1, &host_b, &host_a);   /* the switch learns B on port 1 */
	pump(&r);
	drain(r.ha);
	/* a stranger's 1-byte datagram, then one from the switch's own MAC: not followed */
	send_to_port(r.x, &r, 1, &one, 1);
	send_udp_frame(r.x, &r, 1, &own, &host_a);
	pump(&r);
	drain(r.ha);
	a_to_b(&r, 20, 20, 0);
	j = stats(&r);
	assert_int_equal(j.changes[1], 0);
	assert_int_equal(j.refused[1], 2);
	snprintf(want, sizeof(want), "127.0.0.1:%u", r.base + 3);
	assert_string_equal(j.remote[1], want);
	/* a well-formed frame from a new peer: followed (a guest whose socket moved) */
	send_udp_frame(r.x, &r, 1, &host_b, &host_a);
	pump(&r);
	drain(r.ha);
	a_to_b(&r, 5, 0, 5);
	j = stats(&r);
	assert_int_equal(j.changes[1], 1);
	assert_int_equal(j.changes[0], 0);
	print_message("learning: 1-byte datagram and own-MAC frame refused (20/20 frames still "
		      "to the host), a real frame followed: port 1 now %s, remote_changes %llu, "
		      "remote_refused %llu\n", j.remote[1], (unsigned long long)j.changes[1],
		      (unsigned long long)j.refused[1]);
	rig_close(&r);
}

static void test_fixed(void **state)
{
	struct port_json j;
	struct rig r;
	(void)state;

	rig_open(&r, true, false);
	send_udp_frame(r.hb, &r, 1, &host_b, &host_a);
	pump(&r);
	assert_int_equal(drain(r.ha), 1);
	/* a well-formed frame from a new peer: neither followed nor forwarded */
	send_udp_frame(r.x, &r, 1, &host_b, &host_a);
	pump(&r);
	assert_int_equal(drain(r.ha), 0);
	a_to_b(&r, 20, 20, 0);
	j = stats(&r);
	assert_int_equal(j.changes[1], 0);
	assert_int_equal(j.refused[1], 1);
	print_message("learn=off: a real frame from a new peer refused and not forwarded, 20/20 "
		      "frames to the configured host; remote_refused %llu\n",
		      (unsigned long long)j.refused[1]);
	rig_close(&r);
}

/* ---- signing ---- */

/* The telemetry waiting on the host's socket (INT reports, and early notices when the
 * queue grew), into the agent fixture; each message checked signed by SENDER with an
 * increasing sequence. Returns the number of messages (*@ints of them INT); their
 * datagrams are kept in @saved for a replay. */
static unsigned take_telemetry(struct rig *r, struct afx *f, uint8_t (*saved)[2048],
			       size_t *saved_len, unsigned *nsaved, unsigned *ints)
{
	struct qp_siphash_key k;
	uint8_t b[SW_FRAME_MAX];
	uint64_t last = 0;
	unsigned msgs = 0;
	ssize_t n;

	qp_siphash_key_load(&k, key);
	while ((n = recv(r->ha, b, sizeof(b), MSG_DONTWAIT)) > 0) {
		struct frame_parsed p;
		size_t off = 0;

		if (frame_parse(&p, b, (size_t)n) || !(p.layers & FRAME_L_UDP) ||
		    p.udp.dport != FB_PORT)
			continue;
		while (off < p.payload_len) {
			const uint8_t *m = b + p.payload_off + off;
			uint32_t sender;
			uint64_t seq;
			struct fb_msg d;

			assert_int_equal(fb_auth_verify(m, p.payload_len - off, &k, &sender, &seq),
					 0);
			assert_int_equal(sender, SENDER);
			assert_true(seq > last);
			last = seq;
			assert_int_equal(fb_decode(&d, m, p.payload_len - off), 0);
			off += d.length;
			msgs++;
			*ints += d.type == FB_T_INT;
		}
		assert_true(agent_feed_datagram(f->a, b + p.payload_off, p.payload_len, p.ip.src,
						FB_PORT, qp_now_ns()) & AGENT_RX_ACCEPTED);
		if (*nsaved < 64) {
			memcpy(saved[*nsaved], b + p.payload_off, p.payload_len);
			saved_len[(*nsaved)++] = p.payload_len;
		}
	}
	return msgs;
}

static void test_signed_telemetry(void **state)
{
	static uint8_t saved[64][2048];
	size_t saved_len[64];
	unsigned nsaved = 0, msgs, ints = 0;
	struct agent_params ap = afx_params("hpcc");
	struct frame_roce_spec s = {
		.src = host_a, .dst = host_b,
		.bth = { .opcode = FRAME_OP_RC_WRITE_MIDDLE, .dest_qp = 0x21 },
		.payload_len = 1024,
	};
	struct agent_qp_reg reg = afx_reg(0x11, 0x21);
	struct port_json j;
	struct afx *f;
	struct rig r;
	(void)state;

	rig_open(&r, false, true);
	ap.have_key = true;
	memcpy(ap.key, key, sizeof(key));
	ap.allow[0] = (struct agent_net){ 0, 0 };
	ap.clock_offset_ns = r.f->sw[0]->auth.clock_offset_ns;
	f = afx_new(&ap);
	reg.sport = host_a.port;
	afx_register(f, &reg);
	send_udp_frame(r.hb, &r, 1, &host_b, &host_a);
	pump(&r);
	drain(r.ha);
	for (int i = 0; i < 40; i++) {
		uint8_t fr[2048];
		int n;

		s.bth.psn = (uint32_t)i;
		n = frame_build_roce(fr, sizeof(fr), &s);
		assert_true(n > 0);
		send_to_port(r.ha, &r, 0, fr, (size_t)n);
	}
	pump(&r);
	assert_int_equal(drain(r.hb), 40);
	msgs = take_telemetry(&r, f, saved, saved_len, &nsaved, &ints);
	assert_int_equal(ints, 40);                       /* INT on every frame */
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_ACCEPTED], msgs);
	for (unsigned i = 0; i < nsaved; i++)
		assert_int_equal(agent_feed_datagram(f->a, saved[i], saved_len[i], host_b.ip,
						     FB_PORT, qp_now_ns()), 0);
	assert_int_equal(agent_counters(f->a)[AGENT_C_FB_REJ_REPLAY], nsaved);
	j = stats(&r);
	assert_int_equal(j.signed_msgs, msgs);
	print_message("signed: 40 INT reports and %u notices in %u datagrams, all signed by "
		      "0x%08x with rising sequences, all taken by a keyed agent core; the %u "
		      "datagrams again: %llu replays refused\n", msgs - ints, nsaved, SENDER,
		      nsaved, (unsigned long long)agent_counters(f->a)[AGENT_C_FB_REJ_REPLAY]);
	afx_free(f);
	rig_close(&r);
}

/* Level acks: unsigned refused, signed taken once, its replay refused. */
static void test_signed_level_acks(void **state)
{
	struct fb_msg ack = { .type = FB_T_LEVEL };
	struct qp_siphash_key k;
	struct frame_addr sw_addr;
	uint8_t m[FB_MAX_LEN], fr[512];
	struct port_json j;
	struct rig r;
	int n, len;
	(void)state;

	rig_open(&r, false, true);
	qp_siphash_key_load(&k, key);
	sw_addr = (struct frame_addr){ .ip = r.conf.sw[0].ip, .port = FB_PORT };
	memcpy(sw_addr.mac, r.conf.sw[0].mac, 6);
	ack.u.level = (struct fb_level){ .flow = { host_a.ip, host_b.ip, host_a.port, 0x21 },
					 .switch_id = r.conf.sw[0].id, .port = 1,
					 .level = FB_LEVEL_ACK, .acked = 2, .seq = 1 };
	/* unsigned */
	len = fb_encode(m, sizeof(m), &ack);
	n = frame_build_udp(fr, sizeof(fr), &(struct frame_addr){ .mac = { 2, 0, 0, 0, 0, 0x0a },
				.ip = host_a.ip, .port = FB_PORT }, &sw_addr, NULL, m, (size_t)len);
	send_to_port(r.ha, &r, 0, fr, (size_t)n);
	/* signed, twice */
	len = fb_auth_sign(m, sizeof(m), (size_t)len, &k, 0xa9e17, qp_now_ns() +
			   r.f->sw[0]->auth.clock_offset_ns);
	n = frame_build_udp(fr, sizeof(fr), &(struct frame_addr){ .mac = { 2, 0, 0, 0, 0, 0x0a },
				.ip = host_a.ip, .port = FB_PORT }, &sw_addr, NULL, m, (size_t)len);
	send_to_port(r.ha, &r, 0, fr, (size_t)n);
	send_to_port(r.ha, &r, 0, fr, (size_t)n);
	pump(&r);
	j = stats(&r);
	assert_int_equal(j.acks_notag, 1);
	assert_int_equal(j.acks_replay, 1);
	assert_int_equal(r.f->sw[0]->auth.acks_badtag, 0);
	print_message("level acks with a key: unsigned refused %llu, replay refused %llu\n",
		      (unsigned long long)j.acks_notag, (unsigned long long)j.acks_replay);
	rig_close(&r);
}

/* ---- configuration ---- */

static void test_config(void **state)
{
	static struct sw_conf c;
	char dir[128], path[192], text[1024], err[600];
	FILE *kf;
	(void)state;

	assert_int_equal(tmpdir_make(dir, sizeof(dir), "swtrust"), 0);
	snprintf(path, sizeof(path), "%s/key", dir);
	kf = fopen(path, "w");
	assert_non_null(kf);
	fputs("000102030405060708090a0b0c0d0e0f\n", kf);
	fclose(kf);
	chmod(path, 0600);
	sw_conf_defaults(&c);
	snprintf(text, sizeof(text),
		 "switch a key=%s\nport a p0 udp local=127.0.0.1:9000 remote=127.0.0.1:9001 "
		 "learn=off\nport a p1 udp local=127.0.0.1:9002\nswitch b key=none\n"
		 "port b q0 udp local=127.0.0.1:9004\n", path);
	assert_int_equal(sw_topo_parse(&c, text, "t.topo", err, sizeof(err)), 0);
	assert_true(c.sw[0].have_key && c.sw[0].key[15] == 0x0f && !c.sw[1].have_key);
	assert_true(c.sw[0].ports[0].no_learn && !c.sw[0].ports[1].no_learn);
	/* --key's key is every switch's default */
	c.have_key = true;
	memset(c.key, 0xab, sizeof(c.key));
	assert_int_equal(sw_topo_parse(&c, "switch a\nport a p0 udp local=127.0.0.1:9000\n",
				       "t.topo", err, sizeof(err)), 0);
	assert_true(c.sw[0].have_key && c.sw[0].key[0] == 0xab);
	static const char *const bad[] = {
		"switch a\nport a p0 udp local=127.0.0.1:9000 learn=off\n",
		"switch a\nport a p0 vxlan local=127.0.0.1 remote=127.0.0.2 vni=1 learn=off\n",
		"switch a\nport a p0 udp local=127.0.0.1:9000 remote=127.0.0.1:9 learn=maybe\n",
		"switch a key=/nonexistent/key\nport a p0 udp local=127.0.0.1:9000\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(sw_topo_parse(&c, bad[i], "t.topo", err, sizeof(err)), 0);
		assert_non_null(strstr(err, "t.topo:"));
		print_message("%s\n", err);
	}
	/* the command line */
	{
		char *argv[] = { "qpace-switch", "--star", "2", "--learn", "off", "--key", path,
				 "--quiet", NULL };
		char *argv2[] = { "qpace-switch", "-c", "t.topo", "--learn", "off", NULL };

		assert_int_equal(sw_cli_parse(&c, 8, argv), 0);
		assert_true(c.sw[0].have_key && c.sw[0].key[1] == 1);
		assert_true(c.sw[0].ports[0].no_learn && c.sw[0].ports[1].no_learn);
		assert_int_equal(sw_cli_parse(&c, 5, argv2), -1);
	}
	assert_int_equal(tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learning),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_signed_telemetry),
		cmocka_unit_test(test_signed_level_acks),
		cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
