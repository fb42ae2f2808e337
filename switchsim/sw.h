/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The switch fabric: switches, their ports and the links between them, in one process.
 *
 * Data path, per frame (pipeline.c):
 *   ingress  parse (malformed: counted, dropped), check the IPv4 header checksum (wrong:
 *            counted, dropped) and the RoCEv2 ICRC of every N-th frame (wrong: counted,
 *            forwarded as a real switch does), learn MAC->port and IP->MAC, take what
 *            is addressed to the switch (ARP for its IP, level acks), forward by
 *            destination MAC (static, learned; broadcast and unknown flooded)
 *   enqueue  each egress queue model (queue.h); RED marks CE; early notices and level
 *            changes for RoCEv2 data frames go back to the sender (telem.h); PFC
 *            accounts the bytes per ingress port and pauses upstream (pfc.h)
 *   leave    at departure + propagation delay: onto a link (the next switch's ingress,
 *            with the INT hops so far in the frame's metadata) or out of an I/O port
 *            (udp, vxlan, packet), where the INT report is made for RoCEv2 data frames;
 *            then the link's impairments (impair.h): lost, corrupted, duplicated, or
 *            held in a delay line and handed on later.
 * Telemetry frames are ordinary Ethernet/IPv4/UDP frames to the host's MAC and IP. They
 * travel in a priority band per port: ahead of the data queue and not charged to its
 * model, but delayed by each link's propagation delay. The INT reports of one pass over
 * the ports that go to the same host share a datagram (messages back to back, up to
 * SW_PACK_MAX bytes), so INT on every frame does not double the datagrams sent.
 */
#ifndef SW_SW_H
#define SW_SW_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/uio.h>
#include "qpace/frame.h"
#include "qpace/int.h"
#include "auth.h"
#include "conf.h"
#include "fwd.h"
#include "impair.h"
#include "int_want.h"
#include "pfc.h"
#include "queue.h"
#include "telem.h"

#define SW_FRAME_MAX 9216          /* largest frame a port accepts */
#define SW_BATCH 32                /* frames per recvmmsg/sendmmsg */
#define SW_CTRL_SLOTS 512          /* priority-band frames per port, at most */
#define SW_CTRL_SLOTS0 8           /* ... in the ring a port starts with (it doubles) */
#define SW_CTRL_FRAME 1472         /* a telemetry frame: Ethernet/IPv4/UDP + SW_PACK_MAX */
#define SW_PACK_MAX 1400           /* telemetry messages packed into one UDP payload */

/* Carried with each queued frame (queue metadata) and across links in the process. */
/* SW_M_READ_RESP: a READ response (or atomic ACK): its receiver, the requester, paces it,
 * so what the switch says about it goes there (FB_F_TO_RECEIVER), its CNP too. */
/* SW_M_IPV6: an IPv6 frame; the key's addresses are folded (sw_flow_fold6), the full ones
 * are in the frame. */
enum { SW_M_ROCE_DATA = 1u << 0, SW_M_CTRL = 1u << 1, SW_M_READ_RESP = 1u << 2,
       SW_M_IPV6 = 1u << 3 };
struct sw_meta {
	uint8_t flags;
	uint8_t nhops;
	uint16_t pad;
	uint32_t psn;
	struct sw_flow_key key;
	struct qp_int_hop hops[QP_INT_MAX_HOPS];
};
#define SW_META_LEN(n) (offsetof(struct sw_meta, hops) + (size_t)(n) * sizeof(struct qp_int_hop))

/* One counter per outcome, per port. */
struct sw_port_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t malformed;          /* dropped at ingress: truncated or impossible headers */
	uint64_t ip_csum_drops;      /* dropped at ingress: wrong IPv4 header checksum */
	uint64_t icrc_checked;       /* RoCEv2 frames whose ICRC was checked (--icrc-check) */
	uint64_t icrc_bad;           /* of those, the ones that did not verify (forwarded) */
	uint64_t filtered;           /* forwarded back to where it came from: dropped */
	uint64_t to_switch;          /* addressed to the switch itself */
	uint64_t int_reports;        /* INT reports made for frames leaving here */
	uint64_t int_hops_full;      /* hop records beyond QP_INT_MAX_HOPS, not added */
	uint64_t int_unwanted;       /* data frames of flows that asked for no INT: no report */
	uint64_t int_wants;          /* INT wishes (and withdrawals) taken (int_want.h) */
	uint64_t int_wants_refused;  /* wishes refused: the switch's table was full */
	uint64_t notices;            /* early notices caused by this queue */
	uint64_t cnps;               /* RoCEv2 CNPs sent with them (--cnp on) */
	uint64_t levels;             /* level messages caused by this queue */
	uint64_t level_acks;         /* acks that stopped repeats */
	uint64_t ctrl_frames;        /* telemetry frames sent out of this port */
	uint64_t ctrl_drops;         /* priority band full */
	uint64_t tx_errors;          /* the OS refused a frame */
	uint64_t rx_errors;          /* the OS reported a receive error */
	uint64_t rx_skipped;         /* not for this port: wrong VNI or VTEP, own output, GSO */
	uint64_t rx_kernel_drops;    /* the socket overflowed before we read (SO_MEMINFO) */
	uint64_t rx_batches;         /* receive calls that returned frames */
	uint64_t tx_batches;         /* send calls */
};

struct sw_ctrl_slot {
	qp_time_ns leave_ns;
	uint16_t len;
	uint8_t meta_flags;
	uint8_t frame[SW_CTRL_FRAME];
};

/* The @i-th frame of @p's priority band (a ring of ctrl_cap slots). */
#define sw_ctrl_at(p, i) (&(p)->ctrl[(i) & ((p)->ctrl_cap - 1)])

struct sw_io;
struct sw_switch;
struct sw_fabric;

/* INT reports made in one pass over the ports, packed per host into one datagram. */
struct sw_pack {
	bool open;
	bool listed;               /* in sw_fabric.packl */
	uint32_t dst_ip;
	uint8_t dst_mac[6];
	uint16_t len;
	qp_time_ns t;              /* the first report's time: the datagram leaves then */
	uint8_t payload[SW_PACK_MAX];
};

struct sw_port {
	/* What every departure and every touch reads, together at the front (the struct is
	 * 2.8 KB: these were spread over five cache lines of it), from a line's start */
	_Alignas(64) struct sw_switch *sw;
	int index;
	int gidx;                      /* in sw_fabric.all and .next */
	struct sw_queue *q;
	qp_time_ns q_delay_ns;         /* propagation delay of the link out of this port */
	struct sw_port *peer;          /* link: the far end */
	struct sw_impair *imp;         /* impairments of the link out, NULL when none */
	struct sw_io *io;              /* I/O port: its socket */
	/* priority band */
	struct sw_ctrl_slot *ctrl;     /* NULL until the first frame */
	uint32_t ctrl_head, ctrl_tail, ctrl_cap;
	/* frames in the current tx batch (tx_iov below): from the queue, then from the band */
	uint32_t tx_n, tx_from_queue, tx_from_ctrl;
	bool capture;
	bool tx_listed;                /* in sw_fabric.txp until the end of this emit */
	bool pfc_on;                   /* conf->pfc.on, read on every frame in */
	uint32_t icrc_skip;            /* RoCEv2 frames to let by before the next ICRC check */
	const struct sw_port_conf *conf;
	struct sw_telem_params telem;  /* early threshold resolved */
	struct sw_red_avg level_avg;   /* the levels' RED average queue (telem.h) */
	struct sw_port_stats st;
	struct sw_pack pack;           /* reports on their way to the host behind this port */
	struct sw_pfc_port pfc;        /* PFC: ingress accounting, PAUSEs received */
	struct iovec tx_iov[SW_BATCH];
	qp_time_ns tx_leave[SW_BATCH]; /* each batched frame's leave time (the sim backend's) */
	/* outgrown band rings, freed once no frame of a batch or a link's hand-on can point
	 * into them (sw_port_ctrl_release) */
	struct sw_ctrl_slot *ctrl_old[8];
	unsigned nctrl_old;
};

struct sw_switch {
	struct sw_fabric *fab;
	const struct sw_switch_conf *conf;
	uint32_t id;
	int nports;
	struct sw_port *ports;         /* [nports], each on a cache line */
	struct sw_fwd fwd;
	uint16_t ip_id;
	int pfc_xoff;                  /* ports whose upstream is paused */
	struct sw_auth auth;           /* with a key: signs telemetry, checks level acks */
	struct sw_wants wants;         /* flows that want INT reports (int_want.h) */
};

struct sw_capture;

/* Lateness the loop adds up (tx_late_total_ns): a wake-up's ~40-80 us is not counted. */
#define SW_LATE_COUNTED_NS (100 * QP_NS_PER_US)

struct sw_fabric {
	const struct sw_conf *conf;
	int nswitches;
	struct sw_switch **sw;         /* [nswitches] */
	struct sw_port **all;          /* [nports], switch by switch */
	int nports;
	/* Each port's next leave time (the oldest frame of either band not yet in its tx
	 * batch), PFC's next time on it, and whether it is an I/O port, kept by every change
	 * of what they are made of (sw_port_touch, sched.c). */
	struct sw_next {
		qp_time_ns t;
		qp_time_ns pfc;
		bool io;
	} *next;                       /* [nports] */
	/* A tournament tree over the ports' keys (sched.c): each node the index of the earlier
	 * of its two children in the emit's order, win[1] the earliest of all, kept by
	 * sw_port_touch in log2(ports) steps, so an emit finds each departure, and PFC's work,
	 * without scanning the ports. */
	uint32_t *win;
	qp_time_ns *wkey;              /* each node's winner's key */
	int tsize;                     /* leaves, a power of two; 0 until the fabric is built */
	struct sw_port **io_ports;     /* [nio] */
	int nio;
	struct sw_capture *cap;
	uint64_t ctrl_unroutable;      /* telemetry for a host we cannot place */
	qp_time_ns tx_late_max_ns;     /* real time: the most the loop came back late for a
					* departure it knew of (loop.c); 0 in virtual time */
	qp_time_ns tx_late_total_ns;   /* the sum of those beyond SW_LATE_COUNTED_NS */
	int pfc_xoff;                  /* ports anywhere whose upstream is paused */
	/* The earliest key (leave time, less tx_early_ns on I/O ports: the emit's order) of
	 * the frames queued since a driver last reset it to QP_TIME_NEVER: with it the
	 * virtual-time driver (sim/) learns after an ingress whether the fabric's next
	 * work moved, without sw_fabric_next_key_ns's scan. */
	qp_time_ns next_hint;
	/* What an emit must finish: the open packs of reports (the ports that opened one
	 * since the last close, each once), and the I/O ports whose tx batch has frames (so
	 * it visits those, not every port). */
	int packs_open;
	int npackl;
	struct sw_port **packl;        /* [nports] */
	int ntxp;
	struct sw_port **txp;          /* [nports] */
};

/* The slots of each switch's learned tables for @c (fabric.c). */
uint32_t sw_fabric_fwd_slots(const struct sw_conf *c);
/* Build every switch, queue and port (sockets opened). NULL with a message. */
struct sw_fabric *sw_fabric_create(const struct sw_conf *c, char *err, size_t errlen);
void sw_fabric_destroy(struct sw_fabric *f);

/* A frame arrived on @port at @now (@meta: from a link, else NULL). */
void sw_ingress(struct sw_port *port, const uint8_t *frame, size_t len,
		const struct sw_meta *meta, qp_time_ns now);
/* Hand on every frame whose leave time is at or before @now; flush I/O batches. */
void sw_fabric_emit(struct sw_fabric *f, qp_time_ns now);
/* Earliest leave time over all ports, QP_TIME_NEVER when nothing waits. */
qp_time_ns sw_fabric_next_ns(const struct sw_fabric *f);
/* The earliest time at which sw_fabric_emit has work: a leave time, less tx_early_ns on
 * I/O ports, or PFC's own (a PAUSE repeat); QP_TIME_NEVER when none. Exact, no hint. */
qp_time_ns sw_fabric_next_key_ns(const struct sw_fabric *f);
/* Build the tree over next[] once every port is (sw_fabric_create): 0, or -1 when out of
 * memory. */
#define SW_TREE_NONE UINT32_MAX
int sw_fabric_tree_build(struct sw_fabric *f);
/* The port whose work comes first (sched.c): false when none has any; else @best, its key
 * @due, the time of the work @t (PFC's, or the frame's leave time) and whether it is
 * PFC's. */
bool sw_fabric_first(const struct sw_fabric *f, struct sw_port **best, qp_time_ns *due,
		     qp_time_ns *t, bool *pfc);
/* Send the current tx batch of an I/O port and release what it held. */
void sw_port_flush(struct sw_port *p);
/* Room for one more frame in @p's band, which starts with no ring and doubles up to
 * SW_CTRL_SLOTS (most ports hold a few frames at most; a full ring is 750 KB): 0, or
 * -ENOMEM (the frame is dropped and counted). An outgrown ring stays until
 * sw_port_ctrl_release: a frame of the batch may point into it. */
int sw_port_ctrl_room(struct sw_port *p);
void sw_port_ctrl_release(struct sw_port *p);
/* A frame of the switch's own (telemetry, PAUSE) out of @p in its priority band at @now. */
void sw_port_send_ctrl(struct sw_port *p, const uint8_t *frame, size_t len, qp_time_ns now);
/* After a change of @p's bands or of its queue's departure times (PFC's hold): its entry
 * in the fabric's next leave times (sw_fabric.next) and the driver's hint. */
void sw_port_touch(struct sw_port *p);

/* The I/O shell (loop.c): libev around the fabric until a signal or --duration. */
int sw_loop_run(struct sw_fabric *f, const struct sw_conf *c, char *err, size_t len);

/* Stats (stats.c). */
void sw_stats_json(const struct sw_fabric *f, FILE *out, qp_time_ns now);
void sw_stats_csv_header(FILE *out);
void sw_stats_csv_row(struct sw_fabric *f, FILE *out, qp_time_ns now, qp_time_ns start);

#endif
