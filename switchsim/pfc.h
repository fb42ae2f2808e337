/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* PFC (IEEE 802.1Qbb) in the switch: one lossless priority per port.
 *
 * Ingress accounting. A port counts the bytes its frames of the class (an IPv4 frame's
 * priority is DSCP >> 3, frame_tos_priority; other frames are priority 0) occupy in the
 * switch's egress queues: charged at enqueue, released as each frame leaves its queue
 * (the queue's departure hook, at the frame's departure time).
 *   count >= xoff           PAUSE upstream: a PFC frame enabling the class with time =
 *                           quanta, out of this port (to the link's far end, or to the
 *                           host behind an I/O port), in the priority band; repeated every
 *                           half pause time (at least 1 us apart) while the count stays
 *   count <= xon after it   XON (time 0), at the departure that brought it there
 *   lossless                the port's frames of the class pass a full egress buffer; one
 *                           is dropped (counted: headroom drops) only when the count would
 *                           exceed xoff + headroom
 * headroom=auto is the bytes a link can still deliver after the PAUSE is sent: its round
 * trip at its rate (rate x 2 x delay) plus two maximum frames (one finishing upstream,
 * one arriving here). That holds for upstreams that react at once (switches in one
 * process, hosts in virtual time), not for processes that read the PAUSE late.
 *
 * Egress. A port with PFC on obeys the PFC frames it receives for its class (qpace/pause.h
 * timers at the port's rate): its queue holds (sw_queue_hold) until the pause runs out or
 * an XON comes. The queue is one FIFO, so a hold stops every frame of that egress; the
 * priority band (telemetry, PAUSE frames) is never held. MAC control frames (EtherType
 * 0x8808) are never forwarded; those that change nothing (another opcode, such as
 * 802.3x PAUSE, a class not enabled, a port without PFC) are counted as ignored.
 *
 * Pure: frames and time in; frames out through the port's priority band.
 */
#ifndef SW_PFC_H
#define SW_PFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qpace/frame.h"
#include "qpace/pause.h"
#include "qpace/rate.h"
#include "qpace/time.h"

#define SW_PFC_HEADROOM_AUTO UINT64_MAX
#define SW_PFC_REFRESH_MIN_NS 1000

struct sw_pfc_params {
	bool on;
	bool lossless;
	uint8_t prio;                 /* 0..7, default 3 */
	uint16_t quanta;              /* in each PAUSE, 1..65535, default 65535 */
	uint64_t xoff_bytes;          /* 1..1G */
	uint64_t xon_bytes;           /* < xoff, default xoff / 2 */
	uint64_t headroom_bytes;      /* 0..1G or SW_PFC_HEADROOM_AUTO (resolved at finish) */
};

/* One counter per outcome, per port. */
struct sw_pfc_stats {
	uint64_t pause_tx, xon_tx;    /* PFC frames sent upstream out of this port */
	uint64_t pause_rx, xon_rx;    /* PFC frames for the class obeyed here */
	uint64_t ignored_rx;          /* MAC control frames that changed nothing */
	uint64_t headroom_drops, headroom_drop_bytes;   /* lossless: beyond xoff + headroom */
	uint64_t ingress_max_bytes;   /* the largest count reached */
};

/* Per port, as an ingress and as an egress. */
struct sw_pfc_port {
	uint64_t in_bytes;            /* this port's class bytes in egress queues */
	bool xoff;                    /* upstream asked to pause */
	qp_time_ns refresh_ns;        /* next PAUSE repeat while xoff */
	qp_time_ns xoff_since, xoff_closed_ns;   /* time spent in xoff */
	struct qp_pause rx;           /* PAUSEs received: this egress's timer */
	struct sw_pfc_stats st;
};

struct sw_port;
struct sw_enq;
struct sw_qent;

/* Bytes a link of @bps and one-way @delay_ns delivers after a PAUSE is sent (above). */
uint64_t sw_pfc_auto_headroom(qp_rate_bps bps, qp_time_ns delay_ns);

/* A MAC control frame arrived on @in (always consumed). */
void sw_pfc_input(struct sw_port *in, const struct frame_parsed *p, qp_time_ns now);
/* Before @in's frame @p is enqueued as @e: marks it lossless and tagged when it is of
 * the class; false (counted) when it must be dropped for the headroom. */
bool sw_pfc_admit(struct sw_port *in, const struct frame_parsed *p, struct sw_enq *e);
/* A tagged frame of @in was admitted as @len bytes at @now. */
void sw_pfc_charge(struct sw_port *in, uint32_t len, qp_time_ns now);
/* The queue departure hook; @arg is the switch. */
void sw_pfc_depart(void *arg, const struct sw_qent *e);
/* The next time sw_pfc_run has work on @p: a PAUSE repeat, or, while any ingress of its
 * switch is paused, its queue's next departure (the one that may bring an XON). The
 * fabric's schedule keeps it (sched.c): whatever moves it touches the port. */
qp_time_ns sw_pfc_next_ns(const struct sw_port *p);
void sw_pfc_run(struct sw_port *p, qp_time_ns now);
/* Time @p's egress has been paused, and time its ingress has held upstream in xoff. */
qp_time_ns sw_pfc_paused_ns(const struct sw_port *p, qp_time_ns now);
qp_time_ns sw_pfc_xoff_ns(const struct sw_port *p, qp_time_ns now);

#endif
