/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench: the configuration every subcommand reads, and the subcommands.
 *
 *   write_bw, send_bw, write_lat   perftest-compatible (perf.c)
 *   incast                         N senders -> 1 receiver on a switch (incast.c)
 *   compare                        the same incast once per algorithm (make demo)
 *   sweep                          incast over N and sizes per algorithm (compare.c)
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "qpace/siphash.h"
#include "qpace/rate.h"
#include "qpace/time.h"

enum bench_cmd {
	CMD_WRITE_BW = 1u << 0,
	CMD_SEND_BW = 1u << 1,
	CMD_WRITE_LAT = 1u << 2,
	CMD_INCAST = 1u << 3,
	CMD_COMPARE = 1u << 4,
	CMD_SWEEP = 1u << 5,
	CMD_TOPO = 1u << 6,          /* its own option table (topo_cmd.c) */
	CMD_NETRUN = 1u << 7,        /* `run`: its own option table (netrun_cmd.c) */
	CMD_REPRO = 1u << 8,         /* reproduce: its own option table (repro_cmd.c) */
};
#define CMD_BW (CMD_WRITE_BW | CMD_SEND_BW)
#define CMD_PERF (CMD_BW | CMD_WRITE_LAT)
#define CMD_RUNS (CMD_INCAST | CMD_COMPARE | CMD_SWEEP)
#define CMD_ALL (CMD_PERF | CMD_RUNS)

enum bench_backend { BACKEND_SOFT = 0, BACKEND_IBV };
enum bench_credits { CREDITS_OFF = 0, CREDITS_IA };
/* How INT reaches an INT algorithm's senders (qpace-switch --int). */
enum bench_int { BENCH_INT_ECHO = 0, BENCH_INT_DIRECT };
/* --clock: real time (sockets, a switch process, the machine's clock) or virtual time
 * (qpace/sim.h: one process, a discrete-event clock, deterministic). */
enum bench_clock { BENCH_CLOCK_REAL = 0, BENCH_CLOCK_VIRTUAL };
/* --rx-thread: the real-time incast's receiving host in its own thread (bench/incast_rx.h). */
enum bench_rx_thread { BENCH_RX_THREAD_ON = 0, BENCH_RX_THREAD_OFF };
/* --transport: how real-time soft hosts and their switch move frames: a UDP datagram each,
 * or a shared-memory port's rings (qpace/shm_ring.h). */
enum bench_transport { BENCH_TRANSPORT_UDP = 0, BENCH_TRANSPORT_SHM, BENCH_TRANSPORT_AUTO };

/* Limits (the option table quotes them in its messages). */
#define BENCH_MAX_SENDERS 63u        /* real time: one switch process, 64 ports; one receives */
#define BENCH_MAX_SENDERS_VT 127u    /* virtual time: a star of SW_MAX_PORTS (128) */
#define BENCH_MAX_RATE_REAL (10 * QP_GBPS)   /* real time: what the emulated hosts reach */
#define BENCH_MAX_ROUNDS 1000u
#define BENCH_MAX_ALGOS 16u
#define BENCH_PERF_MAX_SIZE 8388608u /* perftest MAX_SIZE */
#define BENCH_PERF_MIN_ITERS 5u      /* perftest MIN_ITER */
#define BENCH_DEF_SPIN_NS (20 * QP_NS_PER_US)   /* --spin: see endpoint.c */

struct bench_conf {
	unsigned cmd;                /* enum bench_cmd, one bit */
	const char *prog;
	/* perftest's */
	const char *ib_dev;
	uint64_t ib_port;
	uint64_t size_bytes;
	uint64_t iters;
	qp_time_ns duration_ns;      /* -D: 0 = iterations mode */
	qp_time_ns spin_ns;          /* --spin: soft hosts poll without blocking this close to
				      * their next due event (endpoint.c) */
	uint64_t qps;
	uint64_t tcp_port;
	uint64_t gid_index;
	bool gid_given;              /* -x given (else the backend's default GID) */
	bool cpu_freq;               /* -F: accepted, nothing to warn about */
	bool report_gbits;
	bool run_infinitely;
	bool out_json;
	const char *out_json_file;
	const char *server;          /* the positional argument: client mode */
	/* qpace's */
	unsigned backend;            /* enum bench_backend */
	const char *cc;              /* algorithm name */
	bool cc_given;               /* --cc given (else an agent's own default applies) */
	unsigned credits;            /* enum bench_credits */
	unsigned int_mode;           /* enum bench_int */
	const char *attach;          /* soft: HOST:P of the switch port */
	const char *ip;              /* soft: this host's address */
	/* incast / compare / sweep */
	uint64_t senders;
	uint64_t rounds;
	const char *switch_addr;     /* HOST:P of a running star; NULL = start one */
	qp_rate_bps link_bps;
	bool rate_given;             /* --rate given: networked QPs register it as line rate */
	uint64_t buffer_bytes;
	qp_time_ns delay_ns;
	uint64_t mtu_bytes;
	uint64_t window_pkts;         /* RC: unacknowledged packets per QP */
	uint64_t qp_timeout;          /* incast: the QPs' local ACK timeout, 4.096 us << this;
				       * 0 = the default (emulated: 14; ibv: from the buffer) */
	uint64_t fallback_safe_permille; /* the gates' safe rate, 1/1000 of line; 0 = policy */
	uint64_t base_port;
	qp_time_ns round_timeout_ns;
	qp_time_ns sample_ns;        /* virtual time: rates/queue sample period; 0 = 1 ms */
	bool model_rtt;              /* virtual time: register the links' RTT alone, without
				      * the real-time loopback allowance (reproduce) */
	uint64_t seed;
	unsigned clock;              /* enum bench_clock */
	unsigned rx_thread;          /* enum bench_rx_thread */
	unsigned transport;          /* enum bench_transport */
	const char *shm_path;        /* perf, --transport shm: the switch port's region */
	bool json;
	const char *out_dir;         /* CSVs and plots; NULL = none (incast) */
	const char *algos;           /* compare/sweep: "none,hpcc,hpcc+ia" */
	const char *senders_list;    /* sweep: "1,2,4,8" */
	const char *sizes;           /* sweep: "64K,128K,256K" */
	const char *switch_bin;      /* qpace-switch to start; NULL = beside this program */
	const char *key_file;        /* --key: the hosts and the switch started sign feedback */
	const char *pfc;             /* --pfc SPEC for the switch the run builds; NULL = off */
	const char *impair;          /* --impair SPEC for the switch the run builds; NULL = off */
	const char *pcap;            /* --pcap FILE: the frames that switch sends; NULL = none */
	bool have_key;
	uint8_t key[QP_SIPHASH_KEY_BYTES];
	const char *monitor;         /* unix socket qpacectl reads; NULL = the default */
	bool no_plots;
	bool verbose;
	bool help;
	uint64_t seen;               /* option rows given (opt.h) */
};

/* Fill defaults for @cmd (perftest's where they overlap). */
void bench_conf_defaults(struct bench_conf *c, unsigned cmd);
/* Parse a subcommand's argv (argv[0] = the subcommand). 0, or -EINVAL with a message. */
int bench_conf_parse(struct bench_conf *c, unsigned cmd, int argc, char **argv, char *err,
		     size_t errlen);
void bench_usage(FILE *out, const char *prog);
void bench_cmd_usage(FILE *out, const char *prog, unsigned cmd);
/* The options before a COMMAND: --help and its kin. */
struct qp_opt;
const struct qp_opt *bench_global_opts(size_t *n);
/* The manual page: the global options, then every command with its options (qpace/opt.h,
 * qp_opt_man). */
void bench_man(FILE *out, const char *prog);
/* The option tables of topo, run and reproduce (for the manual page); topo's as one
 * command a KIND ("topo star", ...) into @out, at most @max: how many. */
struct qp_opt_cmd;
size_t bench_topo_man_cmds(struct qp_opt_cmd *out, size_t max);
const struct qp_opt *bench_netrun_opts(size_t *n);
const struct qp_opt *bench_repro_opts(size_t *n);
const char *bench_cmd_name(unsigned cmd);
unsigned bench_cmd_find(const char *name);   /* 0 when unknown */

/* The subcommands: each prints its results, and its own errors to stderr (it is the top:
 * no caller holds a buffer), and returns 0 or -1 (exit status 1). */
int bench_perf(const struct bench_conf *c);      /* write_bw, send_bw, write_lat */
int bench_incast(const struct bench_conf *c);
int bench_compare(const struct bench_conf *c);
int bench_sweep(const struct bench_conf *c);
/* qpace-bench topo KIND [options]: @argv[0] is "topo". Returns the exit status
 * (QP_EXIT_USAGE for a bad option, QP_EXIT_FAIL when the file cannot be written). */
int bench_topo(const char *prog, int argc, char **argv);
/* A generator's parameters from "KIND:KEY=VALUE,..." (the keys and checks of `topo KIND`'s
 * options); @buf (copied into) holds the text string values point to. 0 or -EINVAL. */
struct topogen_params;
int bench_topo_gen_parse(const char *spec, struct topogen_params *p, char *buf, size_t buflen,
			 char *err, size_t errlen);
/* qpace-bench run [options]: a topology + workload in virtual time (netrun_cmd.c). Returns
 * the exit status (QP_EXIT_USAGE for a bad option). */
int bench_netrun(const char *prog, int argc, char **argv);
/* `run --huge-pages on` (thp.c): this process again, as @argv0 and @argv[0..@argc), with
 * glibc's heap on transparent huge pages. Returns only where it is not done: NULL when
 * the heap has them already, else why they cannot be had. */
const char *bench_thp_reexec(const char *argv0, int argc, char **argv);
/* qpace-bench reproduce NAME [options]: @argv[0] is "reproduce". Returns the exit status
 * (QP_EXIT_USAGE for a bad option or NAME). */
int bench_reproduce(const char *prog, int argc, char **argv);

#endif
