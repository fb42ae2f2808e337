/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Pcap capture with libpcap's dumper (see capture.h). */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "qpace/errmsg.h"
#include "capture.h"

struct sw_capture {
	pcap_t *dead;
	pcap_dumper_t *dump;
	qp_time_ns wall_offset_ns;   /* a leave time + this = the stamp */
	uint64_t frames;
};

struct sw_capture *sw_capture_open(const char *path, qp_time_ns wall_offset_ns, char *err,
				   size_t errlen)
{
	struct sw_capture *c = calloc(1, sizeof(*c));

	if (!c) {
		qp_errmsg(-ENOMEM, err, errlen, "--pcap: out of memory");
		return NULL;
	}
	c->dead = pcap_open_dead(DLT_EN10MB, 65535);
	c->dump = c->dead ? pcap_dump_open(c->dead, path) : NULL;
	if (!c->dump) {
		qp_errmsg(-EIO, err, errlen, "--pcap %s: %s", path,
			  c->dead ? pcap_geterr(c->dead) : "pcap_open_dead failed");
		sw_capture_close(c);
		return NULL;
	}
	c->wall_offset_ns = wall_offset_ns;
	return c;
}

void sw_capture_frame(struct sw_capture *c, const struct sw_port *p, const uint8_t *frame,
		      size_t len, qp_time_ns leave_ns)
{
	struct pcap_pkthdr h;
	qp_time_ns wall = leave_ns + c->wall_offset_ns;

	(void)p;
	h.ts.tv_sec = (time_t)(wall / QP_NS_PER_S);
	h.ts.tv_usec = (suseconds_t)((wall % QP_NS_PER_S) / 1000);
	h.caplen = h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)c->dump, &h, frame);
	c->frames++;
}

void sw_capture_flush(struct sw_capture *c)
{
	if (c && c->dump)
		pcap_dump_flush(c->dump);
}

void sw_capture_close(struct sw_capture *c)
{
	if (!c)
		return;
	if (c->dump)
		pcap_dump_close(c->dump);
	if (c->dead)
		pcap_close(c->dead);
	free(c);
}

uint64_t sw_capture_count(const struct sw_capture *c)
{
	return c ? c->frames : 0;
}
