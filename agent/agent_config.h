/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpaced's configuration: one option table (qpace/opt.h) drives the command line, the
 * config file and --help, so a flag and its config key cannot drift apart.
 *
 * Config file (-c FILE): one "key = value" per line; '#' starts a comment; blank lines are
 * skipped; keys are the long flag names without "--"; each key at most once per file. The
 * command line overrides the file. Example:
 *
 *     # /etc/qpace/qpaced.conf
 *     feedback = 0.0.0.0:4792
 *     allow = 10.0.0.254, 10.0.0.0/24
 *     cc = hpcc
 *     cc-params = eta=0.95,max_stage=5
 *     credits = ia
 *
 * The parser opens no file: it is fed lines from outside (qp_opt_line) and reports
 * "FILE:LINE: key: message" for each error, so it can be fuzzed on its own
 * (tests/fuzz/fuzz_config.c).
 */
#ifndef QPACE_AGENT_CONFIG_H
#define QPACE_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cnp.h"
#include "qpace/agent.h"
#include "qpace/opt.h"

#define QPACED_PATH_MAX 108          /* sun_path */
#define QPACED_LINE_MAX QP_OPT_LINE_MAX

struct qpaced_config {
	uint32_t fb_ip;                  /* feedback socket, host order */
	uint16_t fb_port;
	uint32_t metrics_ip;
	uint16_t metrics_port;           /* 0 = no metrics endpoint */
	char socket[QPACED_PATH_MAX];
	char rate_table[128];
	char key_file[256];              /* "" = no authentication */
	char cc[AGENT_ALGO_MAX];
	char cc_params[AGENT_PARAMS_MAX];
	qp_time_ns heartbeat_ns;
	qp_time_ns busy_poll_ns;         /* keep polling feedback this long after traffic */
	qp_time_ns fb_hold_ns;           /* the gates' fallback policy, published in the rate */
	uint64_t fb_safe_permille;       /* table: hold this long, then this share of line */
	/* pacing unmodified programs in the kernel's egress path (docs/enforce.md) */
	unsigned enforce;                /* enum qpaced_enforce */
	char dev[16];                    /* IFNAMSIZ; "" = the netdev of the first RDMA device */
	qp_time_ns wire_rtt_ns;          /* QPs found on the wire: base RTT (0: auto), */
	uint64_t wire_mtu;               /* payload bytes per packet, */
	qp_rate_bps wire_rate_bps;       /* line rate (0 = the device's speed) */
	qp_rate_bps wire_start_bps;      /* first rate (0 = the safe rate below) */
	qp_rate_bps wire_fq_maxrate_bps; /* fq's per-flow maxrate (0 = none) */
	uint64_t wire_catchup_pct;       /* fq's maxrate follows this % of the top rate (0 off) */
	unsigned wire_qdisc;             /* enum qd_policy: the operator's classless root */
	uint32_t wire_fq_parent;         /* fq as this class's leaf (0: none) */
	uint64_t wire_used_pct;          /* a rate at most this % of the flow's measured (0 off) */
	uint64_t wire_timeout;           /* their ACK timeout exponent (0 = none: no floor) */
	unsigned ecn_mark;               /* 1: the egress program makes Not-ECT RoCEv2 ECT(0) */
	unsigned cnp;                    /* 1: tc ingress: CE -> CNPs sent, CNPs -> cc events */
	struct cnp_pair cnp_pairs[CNP_MAX_PAIRS];   /* --cnp-peer: local QPN -> peer QPN */
	unsigned n_cnp_pairs;
	qp_time_ns ia_idle_ns;           /* --credits ia: a receiving flow from the wire with no
					  * frame this long leaves the credit pacer */
	qp_time_ns wire_hold_ns;         /* if qpaced dies, the program holds rates this long, */
	qp_rate_bps wire_safe_bps;       /* then paces every flow at most at this (0: the
					  * fallback-safe share of the line rate) */
	char bpf_pin[128];               /* bpffs directory of the pinned maps; "none" */
	struct agent_params agent;       /* cc, cc_params point into the strings above */
};

enum qpaced_enforce {
	QPACED_ENFORCE_OFF = 0,          /* no BPF program */
	QPACED_ENFORCE_OBSERVE,          /* the program counts; QPs are created and shown */
	QPACED_ENFORCE_TC,               /* ... and gives frames departure times (with fq) */
};

/* The table (qpace/opt.h), ending with { .name = NULL }: every row takes a value and has
 * its default as text (.def; "" = none). */
const struct qp_opt *qpaced_options(void);

/* Defaults (the "def" column). */
void qpaced_config_init(struct qpaced_config *c);
/* Set one option by name: 0, or -ENOENT (unknown key, known ones listed) / -EINVAL with
 * "KEY: \"VALUE\": why" in @err. */
int qpaced_config_set(struct qpaced_config *c, const char *key, const char *value,
		      char *err, size_t errlen);

/* A config file is fed line by line to qp_opt_line (qpace/opt.h) through a reader bound to
 * this table: 0 or an error with "FILE:LINE: KEY: message" in its buffer. */
void qpaced_config_reader_init(struct qp_opt_reader *r, struct qpaced_config *c,
			       const char *file);

/* After the file and the command line: cross-field checks (the cc parameters against the
 * algorithm). 0 or -EINVAL with the message in @err. */
int qpaced_config_finish(struct qpaced_config *c, char *err, size_t errlen);

/* Write --help's option list into @buf. */
int qpaced_config_help(char *buf, size_t len);

#endif
