/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A qpace-switch child process for runs that start their own switch.
 *
 * Start: fork/exec `qpace-switch --star N ... --stats CSV --stats-interval 1ms
 * --stats-json JSON --quiet` (the binary beside qpace-bench, else PATH, or --switch-bin).
 * Ready when its stats CSV has a data row (its loop runs and its signal handlers are set);
 * a child that exits first (a port that cannot bind...) has already said why on stderr.
 * Stop: SIGTERM, wait, read the final JSON. The receiver's port (p0) figures come from it;
 * the mean queue from the CSV rows of p0 between two instants of CLOCK_MONOTONIC (the
 * switch's CSV times are relative to its start, which the final JSON's time_ns anchors).
 */
#ifndef BENCH_SWPROC_H
#define BENCH_SWPROC_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "qpace/rate.h"
#include "qpace/time.h"

#define SWPROC_MAX_ARGS 48

struct swproc {
	pid_t pid;
	char csv_path[PATH_MAX];
	char json_path[PATH_MAX];
	bool own_dir;                /* a temporary directory we remove */
	char dir[PATH_MAX - 64];
	uint64_t end_ns;             /* the final JSON's time_ns: anchors the CSV's times */
	uint64_t late_max_ns;        /* the final JSON's tx_late_max_ns and */
	uint64_t late_total_ns;      /* tx_late_total_ns (after swproc_stop) */
};

/* The figures of one switch port. */
struct swproc_port {
	bool found;
	uint64_t drops, ecn_marks, max_queue_bytes, rx_frames, tx_frames;
	uint64_t int_reports, notices, levels;
	uint64_t impair_lost;        /* impair_loss + impair_ge_loss */
};

struct swproc_conf {
	const char *bin;             /* NULL = find it */
	const char *argv0;           /* this program's argv[0], to look beside it */
	unsigned ports;
	uint16_t base_port;
	qp_rate_bps rate_bps;
	uint64_t buffer_bytes;
	qp_time_ns delay_ns;
	uint64_t seed;
	const char *const *extra;    /* more arguments (NULL-terminated), e.g. "--int", "off" */
	const char *key_file;        /* --key for the switch; NULL = none */
	const char *pfc;             /* --pfc SPEC for the switch; NULL = none */
	const char *impair;          /* --impair SPEC for the switch; NULL = none */
	const char *pcap;            /* --pcap FILE for the switch; NULL = none */
	const char *shm_prefix;      /* --shm PREFIX for the switch (real time); NULL = udp */
	const char *dir;             /* where the CSV and JSON go; NULL = a temporary dir */
	int cpu;                     /* pin the switch to this CPU; -1 = no pinning */
};

/* The star's own words, the same in both clocks: "--star N --base-port P --rate R --buffer B
 * --delay D --seed S" and c->extra (argv[0] a placeholder; the strings live in @a). */
struct swproc_argv {
	const char *argv[SWPROC_MAX_ARGS];
	int argc;
	char ports[16], base[16], rate[32], buf[32], delay[32], seed[32];
};
void swproc_star_args(const struct swproc_conf *c, struct swproc_argv *a);

int swproc_start(struct swproc *s, const struct swproc_conf *c, char *err, size_t errlen);
/* SIGTERM, wait (up to 5 s, then SIGKILL), read port @port's figures from the final JSON.
 * Idempotent. */
int swproc_stop(struct swproc *s, const char *port, struct swproc_port *out, char *err,
		size_t errlen);
/* Time-averaged queue of @port (bytes) over [from, to] (CLOCK_MONOTONIC ns), from the
 * CSV rows in that interval; -ENODATA with @err when none. Call after swproc_stop. Also writes
 * time_s,port,queue_bytes rows of every port (time from @from) to @series_path when not
 * NULL. */
int swproc_queue_mean(const struct swproc *s, const char *port, qp_time_ns from,
		      qp_time_ns to, double *mean, const char *series_path, char *err,
		      size_t errlen);
/* Pin the calling process to one CPU (best effort; < 0 = leave it). */
void swproc_pin(int cpu);
/* Remove the temporary directory (when one was made). */
void swproc_cleanup(struct swproc *s);

/* The path of the qpace-switch binary to run into @out: 0, or -errno with @err. */
int swproc_find_bin(const char *bin, const char *argv0, char *out, size_t len, char *err,
		    size_t errlen);

#endif
