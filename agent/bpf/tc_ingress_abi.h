/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What the tc ingress program (tc_ingress.bpf.c) and its loader (tc_ingress.c) share.
 * Included by both the BPF object and user space, so only fixed-width kernel types.
 *
 *   qpi_qps      LRU hash, the program writes: local QPN (the BTH destination QPN of an
 *                arriving frame) -> CE and CNP counts, when CE was last reported.
 *   qpi_counters per-CPU array, one u64 per enum qp_tci_counter.
 *   qpi_reports  ring buffer of struct qp_tci_report:
 *                CE   a RoCEv2 data frame arrived with ECN = CE (11): the receiver's side
 *                     of DCQCN (the notification point) owes the sender a CNP; at most one
 *                     report per local QP per conf.ce_gap_ns (50 us, DCQCN's CNP interval)
 *                CNP  a CNP (BTH opcode 0x81) arrived: the sender's side (the reaction
 *                     point) cuts the rate of the flow to that QP; every one is reported
 *   qpi_flows    LRU hash, the program writes (conf.flows): (source address, local QPN)
 *                -> data frames and bytes arriving from that sender to that QP (not
 *                ACKs, atomic ACKs or CNPs), first and last seen: what qpaced's IA
 *                credit pacer reads on its timer (no per-packet report)
 *   qpi_rtt      (conf.rtt) the tc egress program's qp_rtt, shared by the loader
 *                (qp_tci_open_rtt): an arriving ACK (BTH opcode 0x11, AETH syndrome ACK)
 *                from peer X for PSN P takes the stamp (X, P) the egress program wrote
 *                when that AckReq frame left, and is reported as an RTT sample (kind RTT:
 *                the ACK's arrival minus the frame's departure, with the egress key's QPN);
 *                a NAK (PSN sequence error) is reported as kind NAK. Both at most one per
 *                conf.rtt_gap_ns over all QPs (each kind its own limit); a stamp of a
 *                frame sent twice gives no sample (Karn)
 * Addresses are 16 bytes as on the wire, IPv4 as ::ffff:a.b.c.d (as in tc_abi.h). */
#ifndef QPACE_TC_INGRESS_ABI_H
#define QPACE_TC_INGRESS_ABI_H

#include <linux/types.h>
#include "tc_abi.h"

#define QP_TCI_MAX_QPS 65536
#define QP_TCI_MAX_FLOWS 65536
#define QP_TCI_RING_BYTES (256 * 1024)

struct qp_tci_qp {
	__u64 ce;                    /* CE-marked data frames to this QP */
	__u64 ce_reported;           /* of which reported */
	__u64 cnp;                   /* CNPs to this QP */
	__u64 ce_reported_ns;        /* last CE report (0 = never) */
};

enum qp_tci_counter {
	QP_TCI_C_ROCE,               /* a RoCEv2 frame (tc_abi.h's parse rules) */
	QP_TCI_C_PASS,               /* anything else */
	QP_TCI_C_CE,                 /* a data frame with CE */
	QP_TCI_C_CE_NOT_DATA,        /* CE on an ACK, atomic ACK or CNP: owes no CNP */
	QP_TCI_C_CE_REPORTS,
	QP_TCI_C_CE_LIMITED,         /* CE within conf.ce_gap_ns of the QP's last report */
	QP_TCI_C_CNP,                /* a CNP arrived */
	QP_TCI_C_CNP_REPORTS,
	QP_TCI_C_RING_FULL,          /* a report lost: the ring buffer was full */
	QP_TCI_C_STATE_FULL,         /* could not create the QP's entry */
	QP_TCI_C_FLOW_DATA,          /* conf.flows: a data frame counted in its flow */
	QP_TCI_C_FLOW_FULL,          /* conf.flows: could not create the flow's entry */
	QP_TCI_C_ACK,                /* conf.rtt: an ACK (syndrome ACK) arrived */
	QP_TCI_C_RTT_SAMPLE,         /* ... matched a stamp: an RTT sample */
	QP_TCI_C_RTT_NO_STAMP,       /* ... matched none (not AckReq'd, or LRU-evicted) */
	QP_TCI_C_RTT_KARN,           /* ... matched a frame sent twice: no sample */
	QP_TCI_C_RTT_REPORTS,
	QP_TCI_C_RTT_LIMITED,        /* a sample within conf.rtt_gap_ns of the last report */
	QP_TCI_C_NAK,                /* conf.rtt: a NAK, PSN sequence error */
	QP_TCI_C_NAK_REPORTS,
	QP_TCI_C_NAK_LIMITED,
	QP_TCI_C_COUNT
};

/* A receiving flow: the sender's address (16 bytes as in tc_abi.h) and the local QPN. */
struct qp_tci_flow_key {
	__u8 saddr[16];
	__u32 dqpn;
};

struct qp_tci_flow {
	__u64 frames;                /* data frames */
	__u64 bytes;                 /* their skb->len */
	__u64 first_ns, last_ns;     /* bpf_ktime_get_ns() */
	__u8 daddr[16];              /* this host's address the data came to */
	__u16 sport;                 /* UDP source port of the first frame, host order */
	__u8 ipv6;
	__u8 pad[5];
};

/* The program's settings, a global (.bss) the loader writes through the skeleton. */
struct qp_tci_conf {
	__u64 ce_gap_ns;             /* at least this long between two CE reports of a QP */
	__u32 no_reports;            /* 1: count CE and CNPs, report neither (no --cnp) */
	__u32 flows;                 /* 1: count data per receiving flow in qpi_flows */
	__u32 rtt;                   /* 1: match ACKs with qpi_rtt, report RTT samples, NAKs */
	__u32 pad;
	__u64 rtt_gap_ns;            /* at least this long between two RTT (two NAK) reports */
};

enum qp_tci_kind { QP_TCI_K_CE = 1, QP_TCI_K_CNP = 2, QP_TCI_K_RTT = 3, QP_TCI_K_NAK = 4 };

struct qp_tci_report {
	__u8 saddr[16];              /* the frame's source: the peer */
	__u8 daddr[16];              /* its destination: this host */
	__u32 dqpn;                  /* the local QP */
	__u8 kind;                   /* enum qp_tci_kind */
	__u8 opcode;
	__u8 ipv6;
	__u8 ecn;
	__u16 sport;                 /* UDP source port, host order */
	__u16 pad;
	__u32 len;                   /* skb->len */
	__u64 ts_ns;                 /* bpf_ktime_get_ns() */
	/* RTT and NAK */
	__u32 psn;                   /* the ACK's (the acknowledged frame's) or NAK's PSN */
	__u32 peer_qpn;              /* RTT: the stamped frame's destination QPN (the egress
				      * key with saddr); NAK: 0 (not known) */
	__u64 rtt_ns;                /* RTT: the ACK's arrival minus the frame's departure */
};

#endif
