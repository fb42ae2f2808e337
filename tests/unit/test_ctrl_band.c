/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A port's priority band starts without a ring and doubles up to SW_CTRL_SLOTS frames:
 * 600 frames queued at once on a link keep the first 512 (the rest dropped and counted,
 * as with a full-size ring) and hand them on in order, every byte (the far port receives
 * their bytes, each frame of another length); 100 frames on an I/O port leave as 100
 * datagrams in order with their own bytes. */
#include <arpa/inet.h>
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
#include "soft_net.h"
#include "sw.h"

/* A frame of 64 + @i bytes to a MAC nobody has, its bytes from @i. */
static size_t frame(uint8_t *f, unsigned i)
{
	size_t len = 64 + i % 1000;

	memset(f, 0, len);
	f[0] = 0x02, f[1] = 0x77, f[5] = 0x01;          /* to no one: the far switch floods */
	f[6] = 0x02, f[7] = 0x66;                       /* from a MAC of its own */
	f[12] = 0x88, f[13] = 0xb5;                     /* a local experimental EtherType */
	for (size_t k = 14; k < len; k++)
		f[k] = (uint8_t)(i * 7 + k);
	return len;
}

static void test_band_grows(void **state)
{
	unsigned b = soft_port_base(73);
	char text[600], err[400];
	struct sw_conf conf = { 0 };
	struct sw_fabric *f;
	struct sw_port *l1, *l2, *h;
	uint8_t buf[2048];
	uint64_t want = 0;
	int fd;
	struct sockaddr_in a = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(b + 1));
	(void)state;

	snprintf(text, sizeof(text),
		 "switch s1 rate=1G delay=1us\nport s1 h udp local=127.0.0.1:%u remote=127.0.0.1:%u\n"
		 "switch s2 rate=1G delay=1us\nport s2 g udp local=127.0.0.1:%u\n"
		 "link s1:l s2:l\n", b, b + 1, b + 2);
	sw_conf_defaults(&conf);
	assert_int_equal(sw_topo_parse(&conf, text, "t.topo", err, sizeof(err)), 0);
	assert_int_equal(sw_conf_finish(&conf), 0);
	conf.quiet = true;
	conf.tx_early_ns = 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	f = sw_fabric_create(&conf, err, sizeof(err));
	if (!f)
		fail_msg("%s", err);
	h = &f->sw[0]->ports[0];
	l1 = &f->sw[0]->ports[1];
	l2 = &f->sw[1]->ports[1];
	assert_null(l1->ctrl);                     /* no ring until the first frame */
	for (unsigned i = 0; i < 600; i++) {
		size_t n = frame(buf, i);
		sw_port_send_ctrl(l1, buf, n, 1000);
		if (i < SW_CTRL_SLOTS)
			want += n;
	}
	assert_int_equal(l1->ctrl_cap, SW_CTRL_SLOTS);
	assert_int_equal(l1->st.ctrl_drops, 600 - SW_CTRL_SLOTS);
	sw_fabric_emit(f, 10000);
	assert_int_equal(l2->st.rx_frames, SW_CTRL_SLOTS);
	assert_int_equal(l2->st.rx_bytes, want);
	/* an I/O port: in order, each its own bytes */
	for (unsigned i = 0; i < 100; i++) {
		size_t n = frame(buf, i);
		sw_port_send_ctrl(h, buf, n, 20000);
	}
	sw_fabric_emit(f, 30000);
	for (unsigned i = 0; i < 100; i++) {
		uint8_t want_f[2048];
		size_t n = frame(want_f, i);
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		assert_int_equal(got, (ssize_t)n);
		assert_memory_equal(buf, want_f, n);
	}
	assert_true(recv(fd, buf, sizeof(buf), 0) < 0);
	sw_fabric_destroy(f);
	sw_conf_free(&conf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_band_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
