/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: qpace-switch's path after parsing, on a small fabric of two switches
 * joined by a link (switchsim/sw.h): s1 with a udp and a vxlan port, s2 with a udp port;
 * INT (direct on s1, echo on s2), ECN, early notices, levels and CNPs on. The input is a
 * script (fuzz_input.h) of frames into a port (raw bytes, or RoCEv2 over IPv4 or IPv6 /
 * ARP / level-ack frames built with valid checksums and ICRC and then maybe damaged), VXLAN datagrams sent
 * to the vxlan port's socket and read by its backend (decapsulation, VNI and VTEP checks),
 * and clock steps that let the queues drain across the link and out of the ports. So
 * learning (MAC and IP), forwarding and flooding, the queue model, RED, telemetry and its
 * packing, and the link's metadata all see hostile frames.
 *
 * Properties: no crash, no undefined behaviour, no leak; no queue ever holds more than its
 * buffer. The fabric is built once (building it per input costs 3 ms) and lives on as a
 * switch does: learning tables carry over, each input starts after the last one drained.
 * The ports bind ephemeral loopback ports and send to the discard port. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame6.h"
#include "fuzz_input.h"
#include "io.h"
#include "qpace/feedback.h"
#include "qpace/frame.h"
#include "sw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char topo[] =
	"switch s1 id=1 rate=1G buffer=64K delay=1us int=direct ecn=8K,32K,0.5 early=16K "
	"levels=4K,16K,32K cnp=on\n"
	"port s1 h1 udp local=127.0.0.1:1 remote=127.0.0.1:9\n"
	"port s1 v1 vxlan local=127.0.0.1:2 remote=127.0.0.1:9 vni=42\n"
	"switch s2 id=2 rate=100M buffer=32K delay=5us int=echo int-sample=2\n"
	"port s2 h2 udp local=127.0.0.1:3 remote=127.0.0.1:9\n"
	"link s1:up s2:down\n"
	"mac s1 02:00:0a:00:00:02 up\n";

/* The I/O ports in the order of the file: h1, v1, h2. */
static struct sw_port *io_port(struct sw_fabric *f, unsigned i)
{
	return f->io_ports[i % (unsigned)f->nio];
}

static const uint8_t opcodes[] = { 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0a,
				   0x0b, 0x11, 0x81, 0x64, 0xff };

/* Two hosts behind the fabric, and the switch's own address. */
static void host(unsigned i, struct frame_addr *a)
{
	uint32_t ip = i == 2 ? 0xa9feff01u : 0x0a000001u + i;   /* s1's telemetry address */

	*a = (struct frame_addr){ { 0x02, 0x00, 0x0a, 0, 0, (uint8_t)(1 + i) }, ip, 0 };
	if (i == 2)
		memcpy(a->mac, (uint8_t[6]){ 0x02, 0x51, 0x46, 0, 0, 1 }, 6);
}

static int build(struct fz *f, uint8_t *buf, size_t cap)
{
	struct frame_addr src, dst;
	int n = -1;

	host(fz_pick(f, 2), &src);
	host(fz_pick(f, 3), &dst);
	switch (fz_pick(f, 4)) {
	case 0: {
		struct frame_roce_spec s = { .src = src, .dst = dst };
		uint8_t payload[1024] = { 0 };

		s.src.port = 0xc000 | fz_u16(f);
		s.ip.tos = fz_u8(f);
		s.bth.opcode = opcodes[fz_pick(f, sizeof(opcodes))];
		s.bth.dest_qp = fz_u8(f) % 4 ? 0x12 : fz_u32(f) & 0xffffff;
		s.bth.psn = fz_u32(f) & 0xffffff;
		s.bth.ackreq = fz_u8(f) & 1;
		s.reth = (struct frame_reth){ fz_u64(f), fz_u32(f), fz_u16(f) };
		s.aeth = (struct frame_aeth){ fz_u8(f), fz_u32(f) & 0xffffff };
		s.payload = payload;
		s.payload_len = fz_u16(f) % sizeof(payload);
		n = frame_build_roce(buf, cap, &s);
		break;
	}
	case 3: {   /* RoCEv2 over IPv6, link-local addresses from the MACs, any TC */
		struct frame6_spec s = {
			.src = { 0xfe, 0x80, [15] = src.mac[5] }, .dst = { 0xfe, 0x80, [15] = dst.mac[5] },
			.tclass = fz_u8(f), .flow_label = fz_u32(f), .sport = 0xc000 | fz_u16(f),
			.bth = { .opcode = opcodes[fz_pick(f, sizeof(opcodes))],
				 .dest_qp = fz_u8(f) % 4 ? 0x12 : fz_u32(f) & 0xffffff,
				 .psn = fz_u32(f) & 0xffffff },
			.payload_len = fz_u16(f) % 1100,
		};
		memcpy(s.src_mac, src.mac, 6);
		memcpy(s.dst_mac, dst.mac, 6);
		n = frame6_build(buf, cap, &s);
		break;
	}
	case 1:
		n = frame_build_arp(buf, cap, (uint16_t)(1 + fz_pick(f, 2)), src.mac, src.ip,
				    fz_pick(f, 2) ? dst.mac : (uint8_t[6]){ 0 }, dst.ip);
		break;
	default: {
		/* a level acknowledgement for the switch, as an agent sends it */
		struct fb_msg m = { .type = FB_T_LEVEL };
		uint8_t body[FB_MAX_LEN];
		int len;

		m.u.level = (struct fb_level){ .flow = { .src_ip = src.ip, .dst_ip = dst.ip,
							 .sport = fz_u16(f), .dest_qp = 0x12 },
					       .switch_id = fz_pick(f, 3), .port = fz_u8(f),
					       .level = FB_LEVEL_ACK, .acked = fz_u8(f) & 3,
					       .seq = fz_u32(f) };
		if (fz_u8(f) & 1) {   /* about an IPv6 flow */
			m.flags = FB_F_IPV6;
			m.u.level.flow.src_ip = m.u.level.flow.dst_ip = 0;
			m.u.level.flow.src6[0] = m.u.level.flow.dst6[0] = 0xfe;
			m.u.level.flow.src6[1] = m.u.level.flow.dst6[1] = 0x80;
			m.u.level.flow.src6[15] = src.mac[5];
			m.u.level.flow.dst6[15] = dst.mac[5];
		}
		len = fb_encode(body, sizeof(body), &m);
		dst.port = FB_PORT;
		src.port = FB_PORT;
		if (len > 0)
			n = frame_build_udp(buf, cap, &src, &dst, NULL, body, (size_t)len);
	}
	}
	if (n > 0 && fz_u8(f) == 0x5a)           /* damaged on the way */
		buf[fz_u16(f) % (unsigned)n] ^= (uint8_t)(1u << fz_pick(f, 8));
	return n;
}

/* A VXLAN datagram to the vxlan port: its header (flags, VNI: ours or not) and a frame. */
static void vxlan_in(struct sw_fabric *fab, struct fz *f, int sock, qp_time_ns now)
{
	struct sw_port *p = NULL;
	struct sockaddr_in to;
	socklen_t tl = sizeof(to);
	uint8_t dg[8 + SW_FRAME_MAX];
	struct sw_rx_frame rx[SW_BATCH];
	uint32_t vni = fz_u8(f) % 4 ? 42 : fz_u32(f) & 0xffffff;
	size_t got;
	int n;

	for (int i = 0; i < fab->nio; i++)
		if (fab->io_ports[i]->conf->kind == SW_PORT_VXLAN)
			p = fab->io_ports[i];
	if (!p || getsockname(p->io->fd, (struct sockaddr *)&to, &tl))
		return;
	dg[0] = fz_u8(f) % 8 ? 0x08 : fz_u8(f);
	dg[1] = dg[2] = dg[3] = 0;
	dg[4] = (uint8_t)(vni >> 16);
	dg[5] = (uint8_t)(vni >> 8);
	dg[6] = (uint8_t)vni;
	dg[7] = 0;
	if (fz_pick(f, 2)) {
		n = build(f, dg + 8, sizeof(dg) - 8);
		got = n > 0 ? (size_t)n : 0;
	} else {
		const uint8_t *raw = fz_bytes(f, fz_u16(f) % 1600, &got);

		memcpy(dg + 8, raw, got);
	}
	if (sendto(sock, dg, 8 + got, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return;
	n = p->io->ops->recv(p->io, rx, &p->st.rx_skipped);
	for (int i = 0; i < n; i++)
		sw_ingress(p, rx[i].data, rx[i].len, NULL, now);
}

static void check(struct sw_fabric *f, qp_time_ns now)
{
	for (int i = 0; i < f->nports; i++) {
		struct sw_port *p = f->all[i];

		if (sw_queue_bytes(p->q, now) > sw_queue_params(p->q)->buffer_bytes)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sw_conf c;
	static struct sw_fabric *fab;
	static int sock = -1;
	static qp_time_ns now = 1000 * QP_NS_PER_S;
	struct fz f = { data, size };
	uint8_t frame[SW_FRAME_MAX];
	char err[512];

	if (sock < 0) {
		struct sockaddr_in lo = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		sw_conf_defaults(&c);
		if (sw_topo_parse(&c, topo, "fuzz", err, sizeof(err)))
			abort();
		sw_conf_finish(&c);
		for (int s = 0; s < c.nswitches; s++)
			for (int i = 0; i < c.sw[s].nports; i++)
				c.sw[s].ports[i].local.sin_port = 0;  /* ephemeral */
		c.quiet = true;
		sock = socket(AF_INET, SOCK_DGRAM, 0);
		if (sock < 0 || bind(sock, (struct sockaddr *)&lo, sizeof(lo)) ||
		    !(fab = sw_fabric_create(&c, err, sizeof(err))))
			abort();
	}
	while (f.n) {
		unsigned op = fz_pick(&f, 4);
		struct sw_port *p = io_port(fab, fz_u8(&f));
		int n;

		now += (uint64_t)fz_u16(&f) << fz_pick(&f, 12);
		if (op == 0) {
			size_t got;
			const uint8_t *raw = fz_bytes(&f, fz_u16(&f) % SW_FRAME_MAX, &got);

			memcpy(frame, raw, got);
			sw_ingress(p, frame, got, NULL, now);
		} else if (op == 1 && (n = build(&f, frame, sizeof(frame))) > 0) {
			sw_ingress(p, frame, (size_t)n, NULL, now);
		} else if (op == 2) {
			vxlan_in(fab, &f, sock, now);
		}
		sw_fabric_emit(fab, now);
		check(fab, now);
	}
	now += 10 * QP_NS_PER_S;       /* every queue drains before the next input */
	sw_fabric_emit(fab, now);
	check(fab, now);
	return 0;
}
