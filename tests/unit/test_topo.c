/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Topology files and settings: the shipped examples parse, errors name file, line and
 * key, per-port settings override switch defaults, which override the command line's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../switchsim/conf.h"

static struct sw_conf conf;

static void test_examples_parse(void **state)
{
	static const struct { const char *file; int switches, ports0; } ex[] = {
		{ "switchsim/examples/star.topo", 1, 4 },
		{ "switchsim/examples/leaf-spine.topo", 4, 4 },
		{ "switchsim/examples/two-site.topo", 2, 3 },
	};
	char err[512];
	(void)state;

	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		sw_conf_defaults(&conf);
		int rc = sw_topo_load(&conf, ex[i].file, err, sizeof(err));
		if (rc)
			print_message("%s\n", err);
		assert_int_equal(rc, 0);
		assert_int_equal(conf.nswitches, ex[i].switches);
		assert_int_equal(conf.sw[0].nports, ex[i].ports0);
	}
	/* two-site: the WAN link's own settings, both ends */
	const struct sw_port_conf *wan = &conf.sw[0].ports[2];
	assert_int_equal(wan->kind, SW_PORT_LINK);
	assert_int_equal(wan->q.rate_bps, 100 * QP_MBPS);
	assert_int_equal(wan->q.delay_ns, 10 * QP_NS_PER_MS);
	assert_int_equal(wan->q.buffer_bytes, 4u << 20);
	assert_int_equal(wan->peer_switch, 1);
	assert_int_equal(conf.sw[1].ports[wan->peer_port].q.delay_ns, 10 * QP_NS_PER_MS);
	assert_int_equal(conf.sw[0].ports[0].q.rate_bps, QP_GBPS);
}

static void test_inheritance(void **state)
{
	char err[512];
	const char *text =
		"switch a rate=10G ecn=10K,40K,0.1\n"
		"port a p udp local=127.0.0.1:9000 remote=127.0.0.1:9001\n"
		"port a q udp local=127.0.0.1:9002 buffer=1M early=off int=echo\n"
		"switch b\n"
		"port b x packet dev=veth0 flood=off\n"
		"port b v vxlan local=10.0.0.1 remote=10.0.0.2 vni=42\n"
		"mac b 02:00:00:00:00:01 x\n";
	(void)state;

	sw_conf_defaults(&conf);
	conf.def.q.delay_ns = 7000;    /* as if --delay 7us */
	assert_int_equal(sw_topo_parse(&conf, text, "t.topo", err, sizeof(err)), 0);
	sw_conf_finish(&conf);
	const struct sw_port_conf *p = &conf.sw[0].ports[0], *q = &conf.sw[0].ports[1];
	assert_int_equal(p->q.rate_bps, 10 * QP_GBPS);
	assert_int_equal(p->q.delay_ns, 7000);
	assert_int_equal(p->q.red.kmax_bytes, 40 * 1024);
	/* early = BDP = 10G x 2 x 7us = 17500 B */
	assert_int_equal(p->telem.early_bytes, 17500);
	assert_int_equal(q->q.buffer_bytes, 1u << 20);
	assert_int_equal(q->telem.early_bytes, 0);
	assert_int_equal(q->telem.int_mode, SW_INT_ECHO);
	assert_int_equal(conf.sw[1].ports[0].q.rate_bps, QP_GBPS);   /* b kept the default */
	assert_true(conf.sw[1].ports[0].no_flood);
	assert_int_equal(conf.sw[1].ports[1].vni, 42);
	assert_int_equal(ntohs(conf.sw[1].ports[1].remote.sin_port), 4789);
	assert_int_equal(conf.sw[1].nstatic, 1);
	assert_int_equal(conf.sw[1].id, 2);
	assert_int_equal(conf.sw[1].mac[5], 2);
}

static void test_errors_name_file_line_key(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "switch s\nport s p udp local=127.0.0.1:1 rate=1X\n", "t.topo:2: rate '1X'" },
		{ "switch s\nport s p udp local=127.0.0.1:1 colour=red\n",
		  "t.topo:2: port: unknown key 'colour'" },
		{ "switch s\n\n\nport t p udp local=127.0.0.1:1\n", "t.topo:4: port: switch 't'" },
		{ "switch s\nport s p udp\n", "t.topo:2: port p: local=IP:PORT is required" },
		{ "switch s\nport s p udp local=1.2.3:80\n", "t.topo:2: local '1.2.3:80'" },
		{ "switch s\nport s p tcp local=127.0.0.1:1\n", "t.topo:2: port kind 'tcp'" },
		{ "switch s\nswitch s\n", "t.topo:2: switch: name 's' declared twice" },
		{ "switch s ecn=50K,10K,0.1\n", "t.topo:1: ecn '50K,10K,0.1'" },
		{ "switch s levels=3,2,1\n", "t.topo:1: levels '3,2,1'" },
		{ "bridge s\n", "t.topo:1: unknown directive 'bridge'" },
		{ "switch s\nport s v vxlan local=127.0.0.1 vni=99999999 remote=1.1.1.1\n",
		  "t.topo:2: vni '99999999'" },
		{ "switch s\nport s p udp local=127.0.0.1:1\nlink s:x t:y\n", "t.topo:3: link: switch 't'" },
		{ "switch s\nport s p udp local=127.0.0.1:1\nmac s 02:00 p\n", "t.topo:3: mac '02:00'" },
		{ "switch s\nport s p udp local=127.0.0.1:1 impair=loss=2\n",
		  "t.topo:2: impair 'loss=2': loss '2': a percentage in 0..100%" },
		{ "switch s\nswitch t\nlink s:a t:b impair=ge=1%:0%\n", "t.topo:3: impair 'ge=1%:0%'" },
		{ "switch s impair=bits=1%\n", "t.topo:1: impair 'bits=1%': unknown key 'bits'" },
		{ "switch s\nport s p shm local=127.0.0.1:1 remote=127.0.0.1:2\n",
		  "t.topo:2: port p: path=FILE and remote=IP:PORT" },
		{ "switch s\nport s p shm local=127.0.0.1:1 path=/dev/shm/x\n",
		  "t.topo:2: port p: path=FILE and remote=IP:PORT" },
		{ "switch s\nport s p shm local=127.0.0.1:1 remote=127.0.0.1:2 path=/x slots=3\n",
		  "t.topo:2: slots '3': a power of two" },
		{ "switch s\nport s p shm local=127.0.0.1:1 remote=127.0.0.1:2 path=\n",
		  "t.topo:2: path '': a file name of 1..95 bytes" },
		{ "switch s\nport s p udp local=127.0.0.1:1 path=/x\n",
		  "t.topo:2: port: unknown key 'path'" },
		{ "switch s\n", "switch 's' has no ports" },
		{ "# nothing\n", "no switch declared" },
	};
	char err[512];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sw_conf_defaults(&conf);
		assert_int_equal(sw_topo_parse(&conf, bad[i].text, "t.topo", err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].want))
			print_message("got: %s\nwant: %s\n", err, bad[i].want);
		assert_non_null(strstr(err, bad[i].want));
	}
	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_load(&conf, "/nonexistent.topo", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.topo: No such file"));
}

static void test_settings(void **state)
{
	struct sw_port_defaults d;
	char err[256];
	(void)state;

	sw_conf_defaults(&conf);
	d = conf.def;
	assert_int_equal(sw_conf_setting(&d, "int-sample", "every=4,interval=10us", err,
					 sizeof(err)), 0);
	assert_int_equal(d.telem.int_every, 4);
	assert_int_equal(d.telem.int_interval_ns, 10000);
	assert_int_equal(sw_conf_setting(&d, "int-sample", "8", err, sizeof(err)), 0);
	assert_int_equal(d.telem.int_every, 8);
	assert_int_equal(sw_conf_setting(&d, "int-sample", "sometimes", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "int-sample 'sometimes': accepted every=K"));
	assert_int_equal(sw_conf_setting(&d, "buffer", "1000", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1514..1G"));
	assert_int_equal(sw_conf_setting(&d, "flows", "1000", err, sizeof(err)), -EINVAL);
	assert_int_equal(sw_conf_setting(&d, "ecn", "off", err, sizeof(err)), 0);
	assert_int_equal(d.q.red.kmax_bytes, 0);
	assert_int_equal(sw_conf_star(&conf, 3, 7000, err, sizeof(err)), 0);
	assert_int_equal(ntohs(conf.sw[0].ports[2].local.sin_port), 7004);
	assert_int_equal(ntohs(conf.sw[0].ports[2].remote.sin_port), 7005);
}

/* impair= on a switch line is its ports' default, on a port or link line that port's
 * (a link: both ends, each with a seed of its own); the command line's --impair is every
 * port's default. */
static void test_impair_keys(void **state)
{
	char err[512];
	const char *text =
		"switch a impair=loss=1%,seed=10\n"
		"port a p udp local=127.0.0.1:9000\n"
		"port a q udp local=127.0.0.1:9002 impair=corrupt=0.1%,jitter=10us\n"
		"switch b\n"
		"port b x udp local=127.0.0.1:9004\n"
		"link a:up b:down impair=reorder=2%:30us,seed=4\n";
	(void)state;

	sw_conf_defaults(&conf);
	assert_int_equal(sw_conf_setting(&conf.def, "impair", "dup=1%", err, sizeof(err)), 0);
	assert_int_equal(sw_topo_parse(&conf, text, "t.topo", err, sizeof(err)), 0);
	sw_conf_finish(&conf);
	const struct sw_impair_params *p = &conf.sw[0].ports[0].impair,
				      *q = &conf.sw[0].ports[1].impair,
				      *up = &conf.sw[0].ports[2].impair,
				      *x = &conf.sw[1].ports[0].impair,
				      *down = &conf.sw[1].ports[1].impair;
	assert_true(p->loss == 0.01 && p->dup == 0 && p->seed == 10);   /* switch line */
	assert_true(q->corrupt == 0.001 && q->jitter_ns == 10000 && q->loss == 0);
	assert_int_equal(q->seed, 1);                   /* seed 0 + its port index */
	assert_true(x->dup == 0.01 && x->loss == 0);    /* the command line's default */
	assert_int_equal(x->seed, SW_MAX_PORTS);        /* switch 1, port 0 */
	assert_true(up->reorder == 0.02 && up->reorder_ns == 30000 && up->loss == 0);
	assert_true(down->reorder == 0.02 && down->reorder_ns == 30000);
	assert_int_equal(up->seed, 4 + 2);
	assert_int_equal(down->seed, 4 + SW_MAX_PORTS + 1);
	assert_int_equal(sw_conf_setting(&conf.def, "impair", "off", err, sizeof(err)), 0);
	assert_false(sw_impair_on(&conf.def.impair));
}

/* pfc=...: a switch line's spec is its ports' default, a link's applies to both ends,
 * headroom=auto resolves per port at finish; the star copies --pfc to every port; each
 * bad item names itself and the accepted range. */
static void test_pfc_settings(void **state)
{
	static const struct { const char *spec, *want; } bad[] = {
		{ "xon=1K", "pfc 'xon=1K': xoff=BYTES is required" },
		{ "xoff=0", "pfc 'xoff=0': xoff '0': accepted bytes in 1..1G" },
		{ "xoff=2G", "xoff '2G': accepted bytes in 1..1G" },
		{ "xoff=10K,xon=10K", "xon 10240 must be below xoff 10240" },
		{ "xoff=10K,headroom=lots",
		  "headroom 'lots': accepted bytes in 0..1G (e.g. 30K) or auto" },
		{ "xoff=10K,class=8", "class '8': accepted a priority in 0..7" },
		{ "xoff=10K,quanta=65536", "quanta '65536': accepted a pause time in 1..65535" },
		{ "xoff=10K,lossless=yes", "lossless 'yes': accepted lossless, lossless=on" },
		{ "xoff=10K,pause", "unknown item 'pause': accepted xoff=BYTES" },
		{ "xoff=10K,class", "class '': accepted a priority in 0..7" },
	};
	const char *text =
		"switch a pfc=xoff=40K,xon=20K,headroom=auto,lossless\n"
		"port a h1 udp local=127.0.0.1:9000\n"
		"port a h2 udp local=127.0.0.1:9002 pfc=off\n"
		"switch b rate=10G delay=2us\n"
		"port b h3 udp local=127.0.0.1:9004\n"
		"link a:up b:down pfc=xoff=64K,headroom=16K,class=5,quanta=1000\n";
	struct sw_port_defaults d;
	char err[512];
	(void)state;

	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_parse(&conf, text, "t.topo", err, sizeof(err)), 0);
	sw_conf_finish(&conf);
	const struct sw_pfc_params *h1 = &conf.sw[0].ports[0].pfc, *h2 = &conf.sw[0].ports[1].pfc;
	const struct sw_pfc_params *up = &conf.sw[0].ports[2].pfc, *down = &conf.sw[1].ports[1].pfc;
	assert_true(h1->on && h1->lossless);
	assert_int_equal(h1->xoff_bytes, 40 * 1024);
	assert_int_equal(h1->xon_bytes, 20 * 1024);
	assert_int_equal(h1->prio, 3);
	assert_int_equal(h1->quanta, 65535);
	/* auto at 1 Gb/s, 5 us: 1250 bytes over the round trip + 2 x 9216 */
	assert_int_equal(h1->headroom_bytes, 1250 + 2 * 9216);
	assert_false(h2->on);
	assert_false(conf.sw[1].ports[0].pfc.on);
	for (int e = 0; e < 2; e++) {
		const struct sw_pfc_params *c = e ? down : up;
		assert_true(c->on);
		assert_false(c->lossless);
		assert_int_equal(c->xoff_bytes, 64 * 1024);
		assert_int_equal(c->xon_bytes, 32 * 1024);   /* xoff / 2 */
		assert_int_equal(c->headroom_bytes, 16 * 1024);
		assert_int_equal(c->prio, 5);
		assert_int_equal(c->quanta, 1000);
	}
	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_parse(&conf, "switch s\nport s p udp local=127.0.0.1:1 "
				       "pfc=xoff=1K,xon=2K\n", "t.topo", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "t.topo:2: pfc 'xoff=1K,xon=2K': xon 2048 must be below"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = conf.def;
		assert_int_equal(sw_conf_setting(&d, "pfc", bad[i].spec, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].want))
			print_message("got: %s\nwant: %s\n", err, bad[i].want);
		assert_non_null(strstr(err, bad[i].want));
		assert_false(d.pfc.on);   /* a refused spec changes nothing */
	}
	conf.def.q.rate_bps = 100 * QP_GBPS;
	assert_int_equal(sw_conf_setting(&conf.def, "pfc", "xoff=100K,class=0", err,
					 sizeof(err)), 0);
	assert_int_equal(sw_conf_star(&conf, 2, 7000, err, sizeof(err)), 0);
	sw_conf_finish(&conf);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(conf.sw[0].ports[i].pfc.prio, 0);
		/* 100 Gb/s, 5 us: 125000 bytes over the round trip + 2 x 9216 */
		assert_int_equal(conf.sw[0].ports[i].pfc.headroom_bytes, 125000 + 2 * 9216);
	}
}

/* An shm port line: its kind, region path, slots and doorbell addresses. */
static void test_shm_port(void **state)
{
	char err[512];
	(void)state;

	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_parse(&conf, "switch s\nport s h0 shm path=/dev/shm/q.h0 "
				       "local=127.0.0.1:7000 remote=127.0.0.1:7001 slots=64\n",
				       "t.topo", err, sizeof(err)), 0);
	assert_int_equal(conf.sw[0].ports[0].kind, SW_PORT_SHM);
	assert_string_equal(sw_conf_shm_path(&conf, &conf.sw[0].ports[0]), "/dev/shm/q.h0");
	assert_int_equal(conf.sw[0].ports[0].shm_slots, 64);
	assert_int_equal(ntohs(conf.sw[0].ports[0].remote.sin_port), 7001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_parse),
		cmocka_unit_test(test_shm_port),
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_errors_name_file_line_key),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_impair_keys),
		cmocka_unit_test(test_pfc_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
