/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The engine's state, shared by sim.c (building, figures) and run.c (the event loop). */
#ifndef SIM_PRIV_H
#define SIM_PRIV_H

#include "qpace/sim.h"
#include "qpace/soft_host.h"
#include "evq.h"
#include "pool.h"
#include "sw.h"
#include "wakeq.h"

/* Events in the queue; the hosts' and the fabric's wake-ups are in the wakeq beside it.
 * DELIVER only in a split run: a frame from the switches reaches a host. */
enum sim_ev_type { SIM_EV_NIC = 0, SIM_EV_ARRIVE, SIM_EV_TIMER, SIM_EV_DELIVER };

struct sim_host {
	struct host h;
	struct sim *s;
	uint32_t idx;
	struct sw_port *port;          /* the switch port it attaches to */
	struct soft_host *soft;        /* its soft host (frames in and out) */
	/* NIC and uplink */
	qp_rate_bps nic_bps;
	qp_time_ns delay_ns;
	uint64_t window_pkts;          /* its RC window (sim_host_conf.window_pkts, 0 = 128) */
	bool nic_busy;
	qp_time_ns nic_free_ns;        /* when the frame on the wire is out */
	uint64_t nic_rem;              /* bits*1e9 not yet whole ns, this busy period */
	struct sim_pkt *fly_head, *fly_tail;   /* on the link, oldest first */
	struct sim_pkt *rx_head, *rx_tail;     /* split: from the switch, not yet in */
	uint64_t tx_frames;
};

struct sim_timer {
	sim_timer_fn fn;
	void *arg;
	uint32_t next_free;
};

/* Split: what one lane hands the other in a window, in the order it was made. */
struct sim_msg {
	qp_time_ns t;                  /* when it happens there (not before the window's end) */
	uint32_t type;                 /* SIM_EV_ARRIVE (to the switches) or _DELIVER (a host) */
	uint32_t id;                   /* the host */
	struct sim_pkt *k;
};

/* A lane: an event queue, its actors' wake-ups and its clock. One run has one lane with
 * everything in it, or (split) two: lane 0 the hosts (NICs, timers, frames in), lane 1
 * the switches (frames arriving at their ports, the fabric's departures). Two lanes meet
 * every window: each runs its events before the window's end, on its own thread or one
 * after the other, and then takes what the other made (sim_msg); a window is the
 * lookahead long — the smallest host-link delay — so nothing made in a window is due in
 * it. Each lane's order is its events' (time, sequence), the messages queued in the
 * order they were made: the outputs are the same for one thread or two. */
struct sim_lane {
	struct sim *s;
	struct sim_evq q;
	struct sim_wakeq wq;           /* actors 0..nhosts-1 the hosts, nhosts the fabric */
	qp_time_ns now;
	qp_time_ns cur_t;              /* the key of the event being run */
	uint64_t cur_seq;
	uint64_t max_pending;          /* events and wake-ups pending, at the peak */
	uint64_t events;
	struct sim_pool pool;
	bool stop, nomem;
	qp_time_ns end;                /* split: this window runs events before it */
	struct sim_msg *out;           /* split: made this window, for the other lane */
	size_t nout, capout;
	struct sim_ev *in;             /* split: the other's, in key order, [in_head, in_n) */
	size_t in_head, in_n, capin;
	double busy_s;                 /* split: wall seconds in its windows (a machine figure) */
};

struct sim_sync {                      /* a timer that reads both lanes (sim_at_sync) */
	qp_time_ns t;
	sim_timer_fn fn;
	void *arg;
};

struct sim_threads;

struct sim {
	struct sw_conf *conf;          /* owned copy: the fabric points into it */
	struct sw_fabric *fab;
	struct sim_host *hosts;
	size_t nhosts;
	struct sim_lane lane[2];       /* [0] the hosts (and, unsplit, the switches) */
	struct sim_lane *fl;           /* the switches' lane */
	unsigned nlanes;               /* 1, or 2 (split) */
	unsigned threads;              /* split: 1 or 2 */
	qp_time_ns lookahead;          /* split: the window */
	struct sim_sync *sync;         /* split: pending sync timers, sorted by time */
	size_t nsync, capsync;
	uint64_t windows;              /* split: run so far */
	struct sim_threads *th;        /* split, two threads: the second lane's */
	sim_app_fn app;
	void *app_arg;
	struct sim_timer *timers;
	uint32_t ntimers, free_timer;  /* free list head; UINT32_MAX = none */
	bool progress;
	const volatile sig_atomic_t *interrupt;
	double wall_s;
};

/* Queue an event in @l (run.c); a failure sets l->nomem and stops the run. */
void sim_push(struct sim_lane *l, qp_time_ns t, enum sim_ev_type type, uint32_t id);
/* The hooks sim.c installs (run.c): the hosts' clock (@arg the hosts' lane), their NIC's
 * "frames wait", and a sim port's frames out (to the host behind it). */
qp_time_ns sim_clock(void *arg);
void sim_nic_ready(void *arg);
void sim_deliver(void *arg, const uint8_t *frame, size_t len, qp_time_ns leave);
/* The split run's threads (threads.c): start the second lane's, run one window on both,
 * stop it. 0 or -errno. */
int sim_threads_start(struct sim *s);
void sim_threads_window(struct sim *s, qp_time_ns until);
void sim_threads_stop(struct sim *s);
/* One lane's events before l->end (run.c), the worker's body. */
void sim_lane_window(struct sim_lane *l, qp_time_ns until);

#endif
