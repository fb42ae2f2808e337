/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch an incast starts and its senders' settings, read from the algorithm's ops
 * (see incast.h): the kinds of feedback it has handlers for, and the values it declares
 * for them in ops->feedback.
 *
 *   INT reports               --int echo: to the receiver, whose agent echoes each to
 *                             the sender (HPCC's loop; the bench's --int direct
 *                             replaces it), else --int off
 *   CNPs, with ECN settings   --ecn KMIN,KMAX,PMAX (the algorithm's, scaled with the
 *                             link rate) --early off; the senders' QPs send ECT(0)
 *                             (traffic class 2) and the receivers' NP makes the CNPs
 *   ECN echoes                the same marking; the hosts' QPs echo the marks in their
 *                             ACKs (soft ecn_echo=on) instead of sending CNPs
 *   notices, or CNPs without  --early BYTES (one BDP: this network's, not the switch's
 *                             guess from its own delays) [--notice-interval TIME];
 *                             for CNPs the hosts take each notice as the CNP
 *   notices                   also --flow-idle 2 x the base RTT (BDP / rate): the
 *                             notices count flows that sent within it, and a falling
 *                             count draws a notice (ACC's ramp-up in advance)
 *   congestion levels         --levels MIN,MID,MAX
 *   none of these             --early off (the switch's default is one BDP)
 */
#include <stdio.h>
#include <string.h>

#include "qpace/frame.h"
#include "qpace/units.h"
#include "incast.h"

/* An algorithm that takes HPCC's parameters (hpcc, and acc, which is HPCC underneath) runs
 * with the settings of HPCC's own experiments for this network: incast_hpcc_params. */
static const char *const hpcc_params[] = { "eta", "max_stage", "rate_ai", "min_rate" };

/* RED's thresholds for a link of @link_bps: the declared ones scaled by the rate, Kmax at
 * least one byte above Kmin. */
static void ecn_scaled(const struct cc_feedback *fb, qp_rate_bps link_bps, char *buf, size_t len)
{
	double k = (double)link_bps / (double)fb->ecn_at_bps;
	uint64_t kmin = (uint64_t)((double)fb->ecn_kmin_bytes * k + 0.5);
	uint64_t kmax = (uint64_t)((double)fb->ecn_kmax_bytes * k + 0.5);

	snprintf(buf, len, "%llu,%llu,%g", (unsigned long long)kmin,
		 (unsigned long long)(kmax > kmin ? kmax : kmin + 1), fb->ecn_pmax);
}

void incast_feedback(const struct cc_ops *ops, qp_rate_bps link_bps, uint64_t bdp_bytes,
		     struct incast_feedback *f)
{
	const struct cc_feedback *fb = &ops->feedback;
	unsigned needs = cc_needs(ops);
	bool ecn = (needs & (CC_NEED_CNP | CC_NEED_ECN)) && fb->ecn_kmax_bytes && fb->ecn_at_bps;
	size_t n = 0;

	memset(f, 0, sizeof(*f));
	f->sw_args[n++] = "--int";
	f->sw_args[n++] = needs & CC_NEED_INT ? "echo" : "off";
	if (ecn) {
		ecn_scaled(fb, link_bps, f->ecn, sizeof(f->ecn));
		f->sw_args[n++] = "--ecn";
		f->sw_args[n++] = f->ecn;
		f->tos = FRAME_ECN_ECT0;
	}
	f->sw_args[n++] = "--early";
	if ((needs & CC_NEED_NOTICE) || ((needs & CC_NEED_CNP) && !ecn)) {
		if (fb->notice_bytes)
			qp_fmt_bytes(fb->notice_bytes, f->early, sizeof(f->early));
		else
			snprintf(f->early, sizeof(f->early), "%llu", (unsigned long long)bdp_bytes);
		f->sw_args[n++] = f->early;
		if (fb->notice_interval_ns) {
			f->sw_args[n++] = "--notice-interval";
			f->sw_args[n++] = qp_fmt_time(fb->notice_interval_ns, f->interval,
						      sizeof(f->interval));
		}
	} else {
		f->sw_args[n++] = "off";
	}
	if ((needs & CC_NEED_NOTICE) && link_bps) {
		f->sw_args[n++] = "--flow-idle";
		f->sw_args[n++] = qp_fmt_time(2 * qp_tx_time_ns(bdp_bytes, link_bps), f->idle,
					      sizeof(f->idle));
	}
	if (needs & CC_NEED_LEVEL) {
		char lo[24], mid[24], hi[24];

		snprintf(f->levels, sizeof(f->levels), "%s,%s,%s",
			 qp_fmt_bytes(fb->level_bytes[0], lo, sizeof(lo)),
			 qp_fmt_bytes(fb->level_bytes[1], mid, sizeof(mid)),
			 qp_fmt_bytes(fb->level_bytes[2], hi, sizeof(hi)));
		f->sw_args[n++] = "--levels";
		f->sw_args[n++] = f->levels;
	}
	f->cnp_from_notice = (needs & CC_NEED_CNP) && !ecn;
	f->ecn_echo = ecn && (needs & CC_NEED_ECN);
	f->hpcc_settings = true;
	for (size_t i = 0; i < sizeof(hpcc_params) / sizeof(hpcc_params[0]); i++)
		if (!cc_param_find(ops, hpcc_params[i]))
			f->hpcc_settings = false;
	f->params = fb->params;
}

void incast_feedback_int(struct incast_feedback *f, unsigned int_mode)
{
	if (int_mode == BENCH_INT_DIRECT && strcmp(f->sw_args[1], "off"))
		f->sw_args[1] = "direct";
}
