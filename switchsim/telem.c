/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Telemetry decisions (see telem.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "qpace/errmsg.h"
#include "telem.h"

int sw_telem_check(const struct sw_telem_params *p, char *err, size_t len)
{
	const uint64_t *l = p->level_bytes;

	if (l[2] && !(l[0] <= l[1] && l[1] <= l[2] && l[0] > 0))
		return qp_errmsg(-EINVAL, err, len, "levels: %" PRIu64 ",%" PRIu64 ",%" PRIu64
				 " must satisfy 0 < MIN <= MID <= MAX (bytes)",
				 l[0], l[1], l[2]);
	if (p->int_every < 1 || p->int_every > 1000000)
		return qp_errmsg(-EINVAL, err, len, "int-sample every=%" PRIu32
				 " outside 1..1000000", p->int_every);
	if (l[2] && !(p->level_weight > 0 && p->level_weight <= 1))
		return qp_errmsg(-EINVAL, err, len, "level-weight %g outside (0, 1]",
				 p->level_weight);
	if (p->int_mode > SW_INT_ECHO)
		return qp_errmsg(-EINVAL, err, len, "int mode %d unknown", (int)p->int_mode);
	return 0;
}

uint8_t sw_level_of(const struct sw_telem_params *p, uint64_t qbytes)
{
	uint8_t level = 0;

	if (!p->level_bytes[2])
		return 0;
	for (int i = 0; i < 3; i++)
		if (qbytes >= p->level_bytes[i])
			level = (uint8_t)(i + 1);
	return level;
}

static bool interval_passed(qp_time_ns last, qp_time_ns now, qp_time_ns interval)
{
	return last == QP_TIME_NEVER || now >= last + interval;
}

unsigned sw_telem_enqueue(const struct sw_telem_params *p, struct sw_flow *f,
			  uint64_t qbytes, uint64_t level_q, uint16_t flows, qp_time_ns now)
{
	unsigned out = 0;
	bool fell = f->notice_flows && flows && flows < f->notice_flows;

	if (p->early_bytes && (qbytes >= p->early_bytes || fell) &&
	    interval_passed(f->notice_ns, now, p->notice_interval_ns)) {
		f->notice_ns = now;
		f->notice_flows = flows ? flows : 1;
		out |= SW_T_NOTICE;
	}
	if (p->level_bytes[2]) {
		uint8_t level = sw_level_of(p, level_q);
		if (level != f->level_sent) {
			f->level_sent = level;
			f->level_acked = false;
			f->level_seq++;
			f->level_ns = now;
			out |= SW_T_LEVEL;
		} else if (!f->level_acked && now >= f->level_ns + p->level_repeat_ns) {
			f->level_ns = now;
			out |= SW_T_LEVEL;
		}
	}
	return out;
}

bool sw_telem_int_due(const struct sw_telem_params *p, struct sw_flow *f, qp_time_ns now)
{
	if (p->int_mode == SW_INT_OFF)
		return false;
	if (!f)
		return p->int_every == 1 && !p->int_interval_ns;
	return sw_telem_int_sample(f, p->int_every, p->int_interval_ns, now);
}

bool sw_telem_int_sample(struct sw_flow *f, uint32_t every, qp_time_ns interval_ns,
			 qp_time_ns now)
{
	if (++f->int_skipped < every)
		return false;
	if (interval_ns && !interval_passed(f->int_ns, now, interval_ns))
		return false;
	f->int_skipped = 0;
	f->int_ns = now;
	return true;
}

bool sw_telem_level_ack(struct sw_flow *f, uint8_t level)
{
	if (f->level_acked || level != f->level_sent)
		return false;
	f->level_acked = true;
	return true;
}
