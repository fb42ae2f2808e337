/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* INT only for the flows that want it.
 *
 * A sender's agent whose algorithm takes INT reports asks for them per flow with a WANT
 * message (qpace/feedback.h) addressed to the flow's receiver at UDP 4792; every switch on
 * the data path takes it on the way (and forwards it). The switch keeps the wish, keyed
 * by (src IP, dst IP, dest QP), for SW_WANT_HOLD_NS after it last heard it (agents repeat
 * it every second), and with `--int-flows wanted` (the default) makes INT reports only for
 * the data of flows that asked; frames of other flows leave without one and are counted
 * (int_unwanted). `--int-flows all` reports every flow as before the wish existed (a
 * sender that cannot ask: a raw frame generator, an agent of an older qpace).
 *
 * Sampling per flow: the flow asks for one report per int_every data frames and per
 * int_interval_ns; the port's --int-sample is the floor, so the sparser of the two rules.
 *
 * The table starts small and doubles up to SW_WANT_MAX entries; beyond, a new wish is
 * refused (int_wants_refused) after the expired ones are swept out.
 */
#ifndef SW_INT_WANT_H
#define SW_INT_WANT_H

#include <stdbool.h>
#include <stdint.h>
#include "qpace/feedback.h"
#include "qpace/time.h"

#define SW_WANT_HOLD_NS (5 * QP_NS_PER_S)
#define SW_WANT_MIN 64u
#define SW_WANT_MAX 65536u

struct sw_want {
	uint32_t src_ip, dst_ip, qp;   /* qp: the data's dest QP; 0 = empty slot (with used) */
	bool used;
	uint32_t every;                /* >= 1 */
	qp_time_ns interval_ns;
	qp_time_ns seen_ns;            /* last time the wish was heard */
};

struct sw_wants {
	struct sw_want *slots;         /* cap slots, linear probing; NULL until the first */
	uint32_t cap, n;
};

/* Take a wish (int_every 0: withdraw it) heard at @now. 0; -ENOSPC when the table is full,
 * -ENOMEM. */
int sw_wants_take(struct sw_wants *t, const struct fb_want *w, qp_time_ns now);
/* The wish for (src, dst, qp) still held at @now, or NULL (an expired one is dropped). */
const struct sw_want *sw_wants_find(struct sw_wants *t, uint32_t src_ip, uint32_t dst_ip,
				    uint32_t qp, qp_time_ns now);
void sw_wants_free(struct sw_wants *t);

struct sw_port;
struct sw_switch;
struct sw_flow;
struct sw_flow_key;
struct frame_parsed;

/* A UDP 4792 frame through switch @sw from @in: when its payload holds a WANT (signed and
 * new when the switch has a key), the wish is taken and counted on @in. */
void sw_want_ingress(struct sw_port *in, const uint8_t *f, const struct frame_parsed *p,
		     qp_time_ns now);
/* Is an INT report due for a data frame of flow @k (@fl its slot, NULL when untracked)
 * leaving port @p at @now? Counts the frames of flows that asked for none. */
bool sw_int_report_due(struct sw_port *p, struct sw_flow *fl, const struct sw_flow_key *k,
		       qp_time_ns now);

#endif
