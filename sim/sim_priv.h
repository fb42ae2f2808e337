/* The engine's state, shared by sim.c (building, figures) and run.c (the event loop). */
#ifndef SIM_PRIV_H
#define SIM_PRIV_H

#include "qpace/sim.h"
#include "qpace/soft_host.h"
#include "evq.h"
#include "pool.h"
#include "sw.h"
#include "wakeq.h"

/* Events in the queue; the hosts' and the fabric's wake-ups are in the wakeq beside it. */
enum sim_ev_type { SIM_EV_NIC = 0, SIM_EV_ARRIVE, SIM_EV_TIMER };

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
	uint64_t tx_frames;
	uint8_t buf[SOFT_FRAME_MAX];
};

struct sim_timer {
	sim_timer_fn fn;
	void *arg;
	uint32_t next_free;
};

struct sim {
	struct sw_conf *conf;          /* owned copy: the fabric points into it */
	struct sw_fabric *fab;
	struct sim_host *hosts;
	size_t nhosts;
	struct sim_evq q;
	struct sim_wakeq wq;           /* actors 0..nhosts-1 the hosts, nhosts the fabric */
	qp_time_ns cur_t;              /* the key of the event being run */
	uint64_t cur_seq;
	uint64_t max_pending;          /* events and wake-ups pending, at the peak */
	struct sim_pool pool;
	qp_time_ns now;
	sim_app_fn app;
	void *app_arg;
	struct sim_timer *timers;
	uint32_t ntimers, free_timer;  /* free list head; UINT32_MAX = none */
	bool stop, nomem, progress;
	const volatile sig_atomic_t *interrupt;
	uint64_t events;
	double wall_s;
};

/* Queue an event (run.c); a failure sets s->nomem and stops the run. */
void sim_push(struct sim *s, qp_time_ns t, enum sim_ev_type type, uint32_t id);
/* The hooks sim.c installs (run.c): the hosts' clock, their NIC's "frames wait", and a
 * sim port's frames out (to the host behind it). */
qp_time_ns sim_clock(void *arg);
void sim_nic_ready(void *arg);
void sim_deliver(void *arg, const uint8_t *frame, size_t len);

#endif
