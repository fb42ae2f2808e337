/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "fb_samples.h"

const struct fb_flow fb_sample_flow = {
	.src_ip = 0x0a000001, .dst_ip = 0x0a000002, .sport = 0xc0de, .dest_qp = 0x00abcd,
};

const struct fb_flow fb_sample_flow6 = {
	.sport = 0xc0df, .dest_qp = 0x00abce,
	.src6 = { 0xfe, 0x80, [8] = 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 },
	.dst6 = { 0xfe, 0x80, [8] = 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x66 },
};

struct fb_msg fb_sample_int(unsigned nhops)
{
	struct fb_msg m = { .type = FB_T_INT };

	m.u.int_report.flow = fb_sample_flow;
	m.u.int_report.psn = 0xfffffe;
	m.u.int_report.nhops = (uint8_t)nhops;
	for (unsigned i = 0; i < nhops && i < QP_INT_MAX_HOPS; i++)
		m.u.int_report.hops[i] = (struct qp_int_hop){
			.switch_id = 100 + i, .port = (uint16_t)(7 + i),
			.ts_ns = 0x0123456789abcdefULL + i, .tx_bytes = (1ULL << 40) + i,
			.qlen_bytes = 0x80000000u + i, .link_bps = 400 * QP_GBPS,
		};
	return m;
}

void fb_samples(struct fb_msg *out, size_t *n)
{
	const struct fb_flow flow = fb_sample_flow;
	size_t k = 0;

	for (unsigned h = 1; h <= QP_INT_MAX_HOPS; h++)
		out[k++] = fb_sample_int(h);
	out[k] = fb_sample_int(3);
	out[k].type = FB_T_ECHO;
	out[k++].flags = FB_F_TO_RECEIVER;
	out[k] = (struct fb_msg){ .type = FB_T_NOTICE };
	out[k++].u.notice = (struct fb_notice){
		.flow = flow, .psn = 77, .switch_id = 9, .port = 3, .flows = 12,
		.queue_bytes = 150000, .link_bps = 25 * QP_GBPS, .reflected_ts_ns = 1ULL << 50,
	};
	for (uint8_t lv = 0; lv <= 3; lv++) {
		out[k] = (struct fb_msg){ .type = FB_T_LEVEL };
		out[k++].u.level = (struct fb_level){ .flow = flow, .switch_id = 9, .port = 2,
						      .level = lv, .queue_bytes = 4000, .seq = lv,
						      .psn = 100u + lv };
	}
	out[k] = (struct fb_msg){ .type = FB_T_LEVEL };
	out[k++].u.level = (struct fb_level){ .flow = flow, .switch_id = 9, .level = FB_LEVEL_ACK,
					      .acked = 2, .seq = 5 };
	out[k] = (struct fb_msg){ .type = FB_T_CREDIT };
	out[k++].u.credit = (struct fb_credit){ .flow = flow, .seq = 3, .credit_bytes = 4096,
						.interval_ns = 12345 };
	out[k] = (struct fb_msg){ .type = FB_T_WANT };
	out[k++].u.want = (struct fb_want){ .flow = flow, .int_every = 16,
					    .int_interval_ns = 1ULL << 40 };
	out[k] = fb_sample_int(2);
	out[k].flags = FB_F_IPV6;
	out[k++].u.int_report.flow = fb_sample_flow6;
	out[k] = (struct fb_msg){ .type = FB_T_LEVEL, .flags = FB_F_IPV6 };
	out[k++].u.level = (struct fb_level){ .flow = fb_sample_flow6, .switch_id = 9, .port = 1,
					      .level = 3, .queue_bytes = 9000, .seq = 4, .psn = 7 };
	*n = k;
}
