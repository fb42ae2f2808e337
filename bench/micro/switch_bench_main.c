/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* switch-bench: forwarding rate of qpace-switch against a plain UDP forwarder.
 *
 *   switch-bench [--seconds S] [--rounds N] [--switch PATH] [--base-port P]
 *
 * The same load, in the same run (N interleaved rounds of S seconds, default 5 of 1;
 * medians; each ratio is the median of the rounds' own ratios, a run and the forwarder
 * seconds apart, with their range: the machine moves both from one minute to the next),
 * through:
 *   1. a plain recvmmsg/sendmmsg forwarder (bench/micro/udp_forwarder.c), the ceiling;
 *   2. qpace-switch --star 2 at 100 Gb/s (the model never queues) with INT on every
 *      RoCEv2 data frame, and again with INT on every 16th frame of a QP (both with the
 *      switch's default ICRC check of every 16th frame);
 *   3. INT on every frame and the ICRC of every frame checked (--icrc-check 1);
 *   4. INT on every frame with --gso on (udp ports send runs with UDP GSO);
 *   5. INT on every frame and --key (every report signed: qpace/fb_auth.h).
 * The signed run's switch says how many reports it signed, from its --stats-json.
 * It also times one ICRC check of the load's frame in this process (frame_icrc_ok, ISA-L's
 * CRC-32), next to the time per frame of the switch's default run.
 * Load: 1022-byte RoCEv2 frames (RC SEND_MIDDLE) sent as fast as one thread can with
 * sendmmsg, and counted by the same thread with recvmmsg at the far side; the forwarder
 * is the bottleneck. Prints frames/s of each and the ratio to the plain forwarder.
 */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "qpace/addr.h"
#include "qpace/frame.h"
#include "qpace/opt.h"
#include "qpace/units.h"
#include "udp_forwarder.h"

#define BATCH 32
#define ROUNDS_MAX 15
#define FRAME_LEN 1022   /* 1 KB: 58 B of headers and ICRC + 964 B, a multiple of 4 */

static int udp_at(unsigned port, int rcvbuf)
{
	struct sockaddr_in a = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 16 << 20;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "switch-bench: bind 127.0.0.1:%u: %s\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}


static int drain(int fd)
{
	static unsigned char buf[BATCH][2048];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	int total = 0, n;

	do {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
		total += n > 0 ? n : 0;
	} while (n == BATCH);
	return total;
}

/* Blast frames into @to for @secs after a 0.3 s warm-up; frames/s counted at @rx. The
 * telemetry the switch sends back to the sender's socket is not read: the kernel drops
 * it once that socket is full, so the load generator does the same work in every run and
 * the switch still pays for building and sending every report. */
/* CPU seconds (user + system) @pid has used so far. */
static double cpu_s(pid_t pid)
{
	char path[64];
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

struct result {
	double fps;       /* frames/s received, wall clock */
	double per_cpu;   /* frames per CPU-second of the forwarding process */
};

static struct result measure(int tx, const struct sockaddr_in *to, int rx, double secs,
			     pid_t pid)
{
	struct result res;
	double cpu0 = -1;
	static uint8_t frame[FRAME_LEN];
	struct frame_roce_spec s = {
		.src = { .mac = { 2, 0, 0, 0, 0, 0xa }, .ip = 0x0a000001, .port = 0xc003 },
		.dst = { .mac = { 2, 0, 0, 0, 0, 0xb }, .ip = 0x0a000002 },
		.bth = { .opcode = FRAME_OP_RC_SEND_MIDDLE, .dest_qp = 0x33 },
		.payload_len = FRAME_LEN - 58,
	};
	struct mmsghdr m[BATCH];
	struct iovec iov = { frame, 0 };
	qp_time_ns start = qp_now_ns(), warm = start + 300 * QP_NS_PER_MS;
	qp_time_ns end = warm + (qp_time_ns)(secs * 1e9);
	uint64_t counted = 0;

	iov.iov_len = (size_t)frame_build_roce(frame, sizeof(frame), &s);
	for (int i = 0; i < BATCH; i++)
		m[i].msg_hdr = (struct msghdr){ .msg_name = (void *)to, .msg_namelen = sizeof(*to),
						.msg_iov = &iov, .msg_iovlen = 1 };
	for (qp_time_ns now = start; now < end; now = qp_now_ns()) {
		sendmmsg(tx, m, BATCH, MSG_DONTWAIT);
		int got = drain(rx);
		if (now >= warm) {
			if (cpu0 < 0)
				cpu0 = cpu_s(pid);
			counted += (uint64_t)got;
		}
	}
	res.fps = (double)counted / secs;
	res.per_cpu = cpu_s(pid) - cpu0 > 0 ? (double)counted / (cpu_s(pid) - cpu0) : 0;
	return res;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nanoseconds per ICRC check (parse included, as the switch does it) of a 1 KB frame:
 * the median of 5 runs of 20,000. */
static double icrc_ns(void)
{
	static uint8_t frame[FRAME_LEN];
	struct frame_roce_spec s = {
		.src = { .ip = 0x0a000001 }, .dst = { .ip = 0x0a000002 },
		.bth = { .opcode = FRAME_OP_RC_SEND_MIDDLE, .dest_qp = 0x33 },
		.payload_len = FRAME_LEN - 58,
	};
	int len = frame_build_roce(frame, sizeof(frame), &s);
	double t[5];
	struct frame_parsed p;
	volatile unsigned ok = 0;

	for (int r = 0; r < 5; r++) {
		qp_time_ns t0 = qp_now_ns();
		for (int i = 0; i < 20000; i++)
			ok += frame_parse(&p, frame, (size_t)len) == 0 && frame_icrc_ok(frame, &p);
		t[r] = (double)(qp_now_ns() - t0) / 20000;
	}
	qsort(t, 5, sizeof(t[0]), cmp_double);
	return ok == 5 * 20000 ? t[2] : -1;
}

/* The switch runs measured: INT on every @sample-th frame, the ICRC of every @icrc-th,
 * reports signed when @sign. */
struct sw_run {
	const char *sample, *icrc;
	bool sign, gso;
};
static const struct sw_run sw_runs[] = {   /* the signed run last: its counts are read */
	{ "1", "16", false, false }, { "16", "16", false, false }, { "1", "1", false, false },
	{ "1", "16", false, true }, { "1", "16", true, false },
};
#define NRUNS (1 + (int)(sizeof(sw_runs) / sizeof(sw_runs[0])))

/* The switch of run @w; signing with @key when @w->sign. */
static pid_t run_switch(const char *path, unsigned base, const struct sw_run *w, const char *key,
			const char *json)
{
	char bp[16];
	pid_t pid = fork();

	snprintf(bp, sizeof(bp), "%u", base);
	if (pid == 0) {
		execl(path, path, "--star", "2", "--base-port", bp, "--rate", "100G", "--buffer",
		      "16M", "--int", "direct", "--int-flows", "all", "--int-sample", w->sample,
		      "--early", "off",
		      "--icrc-check", w->icrc, "--quiet", "--key", w->sign ? key : "none",
		      "--gso", w->gso ? "on" : "off",
		      "--stats-json", json, (char *)NULL);
		fprintf(stderr, "switch-bench: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* "signed_messages N, int_reports M" from the switch's --stats-json at @path. */
static const char *signed_count(const char *path)
{
	static char out[128];
	char line[256];
	unsigned long long sig = 0, ints = 0, v;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " \"signed_messages\": %llu", &v) == 1)
			sig += v;
		else if (sscanf(line, " \"int_reports\": %llu", &v) == 1)
			ints += v;
	}
	if (f)
		fclose(f);
	snprintf(out, sizeof(out), "%llu INT reports made, %llu messages signed", ints, sig);
	return out;
}

static void stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

struct opts {
	qp_time_ns duration_ns;
	const char *swpath;
	uint64_t base;
	uint64_t rounds;
};

#define AT(field) QP_OPT_AT(struct opts, field)

static const struct qp_opt opts[] = {
	{ "seconds", 0, QP_OPT_TIME, "S", AT(duration_ns), .min = QP_NS_PER_MS,
	  .max = 60 * QP_NS_PER_S, .unit_ns = QP_NS_PER_S,
	  .help = "length of each round (a bare number is seconds)", .def = "1" },
	{ "rounds", 0, QP_OPT_UINT, "N", AT(rounds), .min = 1, .max = ROUNDS_MAX,
	  .help = "interleaved rounds; medians and the ratios' range over them", .def = "5" },
	{ "switch", 0, QP_OPT_STR, "PATH", AT(swpath),
	  .help = "qpace-switch to measure (default: beside this program)" },
	{ "base-port", 0, QP_OPT_UINT, "P", AT(base), .min = 1024, .max = 60000,
	  .help = "UDP ports P..P+3", .def = "18000" },
	QP_OPT_STD_ROWS,
};

static const struct qp_opt_prog prog = {
	.name = "switch-bench",
	.head = "usage: switch-bench [--seconds S] [--rounds N] [--switch PATH] [--base-port P]\n"
		"Forwarding rate of qpace-switch against a plain UDP forwarder: 1 KB RoCEv2\n"
		"frames through one port pair, interleaved rounds, medians and ranges.\n\n",
	.t = opts,
	.n = sizeof(opts) / sizeof(opts[0]),
	.max_args = 0,
};

int main(int argc, char **argv)
{
	double secs;
	unsigned base, rounds;
	char self[4096], sw[4200];
	const char *swpath;
	struct timespec settle = { 0, 300 * 1000 * 1000 };
	struct opts o = { 0 };
	int rc = qp_opt_main(&prog, argc, argv, &o, NULL);

	if (rc)
		return rc > 0 ? QP_EXIT_OK : QP_EXIT_USAGE;
	secs = (double)o.duration_ns / 1e9;
	base = (unsigned)o.base;
	rounds = (unsigned)o.rounds;
	swpath = o.swpath;
	if (!swpath) {   /* beside this program: build/bin/qpace-switch */
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		snprintf(sw, sizeof(sw), "%s/qpace-switch", dirname(self));
		swpath = sw;
	}

	/* The sender's socket only collects telemetry nobody reads: keep it small. */
	int tx = udp_at(base + 1, 64 << 10), rx = udp_at(base + 3, 16 << 20);
	struct sockaddr_in in = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)base),
			   out = qp_sockaddr_in(INADDR_LOOPBACK, (uint16_t)(base + 3));
	double r[NRUNS][ROUNDS_MAX], e[NRUNS][ROUNDS_MAX], q[NRUNS][ROUNDS_MAX],
	       qe[NRUNS][ROUNDS_MAX];
	char key[64], json[64];
	FILE *kf;

	snprintf(key, sizeof(key), "/tmp/switch-bench-%d.key", (int)getpid());
	snprintf(json, sizeof(json), "/tmp/switch-bench-%d.json", (int)getpid());
	kf = fopen(key, "w");
	if (!kf || fputs("00112233445566778899aabbccddeeff\n", kf) < 0 || fclose(kf)) {
		fprintf(stderr, "switch-bench: %s: %s\n", key, strerror(errno));
		return 1;
	}
	chmod(key, 0600);

	/* Rounds of the runs, interleaved, so that what else the machine does falls on all of
	 * them alike; the median of each is reported. */
	for (unsigned round = 0; round < rounds; round++) {
		pid_t pid = fork();
		if (pid == 0) {   /* 1. the plain forwarder: in at base, out to base + 3 */
			int fd = udp_at(base, 16 << 20);
			bench_udp_forward(fd, &out);
		}
		nanosleep(&settle, NULL);
		struct result m = measure(tx, &in, rx, secs, pid);
		r[0][round] = m.fps;
		e[0][round] = m.per_cpu;
		stop(pid);
		for (int k = 1; k < NRUNS; k++) {   /* 2, 3, 4. the switch */
			pid = run_switch(swpath, base, &sw_runs[k - 1], key, json);
			nanosleep(&settle, NULL);
			m = measure(tx, &in, rx, secs, pid);
			r[k][round] = m.fps;
			e[k][round] = m.per_cpu;
			stop(pid);
			drain(rx);
		}
	}
	unlink(key);
	/* Each round's ratios first (its run against its own forwarder), then every column
	 * sorted for its median. */
	for (int k = 0; k < NRUNS; k++)
		for (unsigned i = 0; i < rounds; i++) {
			q[k][i] = r[0][i] > 0 ? r[k][i] / r[0][i] : 0;
			qe[k][i] = e[0][i] > 0 ? e[k][i] / e[0][i] : 0;
		}
	for (int k = 0; k < NRUNS; k++) {
		qsort(r[k], rounds, sizeof(double), cmp_double);
		qsort(e[k], rounds, sizeof(double), cmp_double);
		qsort(q[k], rounds, sizeof(double), cmp_double);
		qsort(qe[k], rounds, sizeof(double), cmp_double);
	}

	static const char *const names[NRUNS] = { "plain recvmmsg/sendmmsg forwarder",
						  "qpace-switch, INT every frame",
						  "qpace-switch, INT every 16th frame",
						  "qpace-switch, INT + ICRC every frame",
						  "qpace-switch, INT every frame, GSO",
						  "qpace-switch, INT every frame, signed" };
	FILE *la = fopen("/proc/loadavg", "r");
	double load = -1;
	if (la) {
		if (fscanf(la, "%lf", &load) != 1)
			load = -1;
		fclose(la);
	}
	printf("load average at the end: %.2f (other work on the machine moves frames/s)\n",
	       load);
	unsigned mid = rounds / 2;
	printf("1 KB RoCEv2 frames through one port pair, median of %u rounds of %.1f s\n"
	       "(frames/s at the receiver; frames per CPU-second of the forwarding process,\n"
	       "which a busy machine's scheduling does not change; each ratio is the median of\n"
	       "the rounds' own, against the forwarder of the same round, and their range):\n",
	       rounds, secs);
	for (int k = 0; k < NRUNS; k++)
		printf("  %-38s %8.0f frames/s  ratio %.2f (%.2f-%.2f)   %8.0f frames/CPU-s  "
		       "ratio %.2f (%.2f-%.2f)\n", names[k], r[k][mid], q[k][mid], q[k][0],
		       q[k][rounds - 1], e[k][mid], qe[k][mid], qe[k][0], qe[k][rounds - 1]);
	double icrc = icrc_ns(), per_frame = e[1][mid] > 0 ? 1e9 / e[1][mid] : 0;
	printf("one ICRC check of this frame here: %.0f ns; the switch's CPU time per frame in "
	       "its default run: %.0f ns\n(every frame checked would add %.0f%%, every 16th "
	       "(the default) %.1f%%)\n", icrc, per_frame,
	       per_frame > 0 ? 100 * icrc / per_frame : 0,
	       per_frame > 0 ? 100 * icrc / 16 / per_frame : 0);
	printf("the signed run's switch, last round: %s\n", signed_count(json));
	unlink(json);
	return 0;
}
