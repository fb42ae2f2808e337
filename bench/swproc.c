/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A qpace-switch child process: see swproc.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/jsonr.h"
#include "qpace/time.h"
#include "swproc.h"

#define SWPROC_READY_NS (5 * QP_NS_PER_S)
#define SWPROC_STOP_NS (5 * QP_NS_PER_S)
#define SWPROC_PORTS 64

/* Pin the calling process to @cpu (< 0: leave it). Best effort: a machine with one CPU
 * or a cpuset that excludes it keeps the default. */
void swproc_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void sleep_ns(qp_time_ns ns)
{
	struct timespec ts = { (time_t)(ns / QP_NS_PER_S), (long)(ns % QP_NS_PER_S) };
	nanosleep(&ts, NULL);
}

int swproc_find_bin(const char *bin, const char *argv0, char *out, size_t len, char *err,
		    size_t errlen)
{
	char self[PATH_MAX];
	ssize_t n;

	if (bin) {
		if (access(bin, X_OK) != 0)
			return qp_errmsg(-errno, err, errlen, "--switch-bin %s: %s", bin,
					 strerror(errno));
		snprintf(out, len, "%s", bin);
		return 0;
	}
	/* Beside this program: build/bin/qpace-bench -> build/bin/qpace-switch. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 && argv0)
		n = (ssize_t)snprintf(self, sizeof(self), "%s", argv0);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			snprintf(out, len, "%.*s/qpace-switch", (int)(slash - self), self);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t dl = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(out, len, "%.*s/qpace-switch", (int)dl, p);
		if (dl && access(out, X_OK) == 0)
			return 0;
		p = colon ? colon + 1 : NULL;
	}
	return qp_errmsg(-ENOENT, err, errlen, "qpace-switch not found beside %s nor on PATH "
			 "(build it with `make`, or give --switch-bin)",
			 argv0 ? argv0 : "qpace-bench");
}

/* The CSV has a data row: header plus at least one newline after it. */
static bool csv_has_row(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, lines = 0;

	if (!f)
		return false;
	while ((c = fgetc(f)) != EOF && lines < 2)
		lines += c == '\n';
	fclose(f);
	return lines >= 2;
}

void swproc_star_args(const struct swproc_conf *c, struct swproc_argv *a)
{
	int n = 0;

	snprintf(a->ports, sizeof(a->ports), "%u", c->ports);
	snprintf(a->base, sizeof(a->base), "%u", (unsigned)c->base_port);
	snprintf(a->rate, sizeof(a->rate), "%" PRIu64, c->rate_bps);
	snprintf(a->buf, sizeof(a->buf), "%" PRIu64, c->buffer_bytes);
	snprintf(a->delay, sizeof(a->delay), "%" PRIu64 "ns", c->delay_ns);
	snprintf(a->seed, sizeof(a->seed), "%" PRIu64, c->seed);
	const char *fixed[] = { "qpace-switch", "--star", a->ports, "--base-port", a->base,
				"--rate", a->rate, "--buffer", a->buf, "--delay", a->delay,
				"--seed", a->seed };
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		a->argv[n++] = fixed[i];
	for (const char *const *e = c->extra; e && *e && n < SWPROC_MAX_ARGS - 10; e++)
		a->argv[n++] = *e;
	if (c->key_file) {
		a->argv[n++] = "--key";
		a->argv[n++] = c->key_file;
	}
	if (c->pfc) {
		a->argv[n++] = "--pfc";
		a->argv[n++] = c->pfc;
	}
	if (c->impair) {
		a->argv[n++] = "--impair";
		a->argv[n++] = c->impair;
	}
	if (c->pcap) {
		a->argv[n++] = "--pcap";
		a->argv[n++] = c->pcap;
	}
	a->argv[n] = NULL;
	a->argc = n;
}

int swproc_start(struct swproc *s, const struct swproc_conf *c, char *err, size_t errlen)
{
	char bin[PATH_MAX];
	struct swproc_argv a;
	const char *argv[SWPROC_MAX_ARGS + 12];   /* the star's, then the run's 10 and NULL */
	int n = 0, rc;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	if ((rc = swproc_find_bin(c->bin, c->argv0, bin, sizeof(bin), err, errlen)))
		return rc;
	if (c->dir) {
		snprintf(s->dir, sizeof(s->dir), "%s", c->dir);
	} else {
		snprintf(s->dir, sizeof(s->dir), "%s/qpace-bench.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(s->dir))
			return qp_errmsg(-errno, err, errlen, "temporary directory %s: %s", s->dir,
				      strerror(errno));
		s->own_dir = true;
	}
	snprintf(s->csv_path, sizeof(s->csv_path), "%s/switch.csv", s->dir);
	snprintf(s->json_path, sizeof(s->json_path), "%s/switch.json", s->dir);
	unlink(s->csv_path);
	unlink(s->json_path);
	swproc_star_args(c, &a);
	argv[n++] = bin;
	for (int i = 1; i < a.argc; i++)
		argv[n++] = a.argv[i];
	const char *run[] = { "--stats", s->csv_path, "--stats-interval", "1ms",
			      "--stats-json", s->json_path, "--quiet" };
	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
		argv[n++] = run[i];
	if (c->shm_prefix) {
		argv[n++] = "--shm";
		argv[n++] = c->shm_prefix;
	} else {   /* the hosts are given shm=off: nothing to offer them */
		argv[n++] = "--shm-offer";
		argv[n++] = "off";
	}
	argv[n] = NULL;

	pid_t parent = getpid();
	s->pid = fork();
	if (s->pid < 0)
		return qp_errmsg(-errno, err, errlen, "fork: %s", strerror(errno));
	if (s->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		/* The switch must not outlive the bench (killed, crashed). */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		swproc_pin(c->cpu);
		if (devnull >= 0)
			dup2(devnull, 0);
		execv(bin, (char *const *)argv);
		fprintf(stderr, "qpace-bench: exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	for (qp_time_ns t0 = qp_now_ns(); qp_now_ns() - t0 < SWPROC_READY_NS;) {
		int status;
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = -1;
			if (WIFSIGNALED(status))
				return qp_errmsg(-ECHILD, err, errlen,
						 "qpace-switch died at start (signal %d)",
						 WTERMSIG(status));
			return qp_errmsg(-ECHILD, err, errlen, "qpace-switch exited at start "
					 "(status %d); its message is above", WEXITSTATUS(status));
		}
		if (csv_has_row(s->csv_path))
			return 0;
		sleep_ns(2 * QP_NS_PER_MS);
	}
	swproc_stop(s, NULL, NULL, NULL, 0);
	return qp_errmsg(-ETIMEDOUT, err, errlen, "qpace-switch did not start within 5 s");
}

struct port_walk {
	struct swproc_port ports[SWPROC_PORTS];
	char names[SWPROC_PORTS][32];
	uint64_t time_ns, late_max_ns, late_total_ns;
};

static const struct {
	const char *key;
	size_t off;
} port_keys[] = {
	{ "drop_tail", offsetof(struct swproc_port, drops) },
	{ "drop_store", offsetof(struct swproc_port, drops) },     /* added to drop_tail */
	{ "ecn_marked", offsetof(struct swproc_port, ecn_marks) },
	{ "max_qbytes", offsetof(struct swproc_port, max_queue_bytes) },
	{ "rx_frames", offsetof(struct swproc_port, rx_frames) },
	{ "tx_frames", offsetof(struct swproc_port, tx_frames) },
	{ "int_reports", offsetof(struct swproc_port, int_reports) },
	{ "notices", offsetof(struct swproc_port, notices) },
	{ "levels", offsetof(struct swproc_port, levels) },
	{ "impair_loss", offsetof(struct swproc_port, impair_lost) },
	{ "impair_ge_loss", offsetof(struct swproc_port, impair_lost) },  /* added */
};

static void on_json(void *arg, const char *path, const struct jsonr_val *v)
{
	struct port_walk *w = arg;
	unsigned idx;
	int used = 0;

	if (strcmp(path, "time_ns") == 0 && v->is_u64) {
		w->time_ns = v->u64;
		return;
	}
	if (strcmp(path, "tx_late_max_ns") == 0 && v->is_u64) {
		w->late_max_ns = v->u64;
		return;
	}
	if (strcmp(path, "tx_late_total_ns") == 0 && v->is_u64) {
		w->late_total_ns = v->u64;
		return;
	}
	/* Only the first switch: a --star run has one. */
	if (sscanf(path, "switches.0.ports.%u.%n", &idx, &used) != 1 || !used ||
	    idx >= SWPROC_PORTS)
		return;
	const char *key = path + used;
	if (strcmp(key, "name") == 0 && v->type == JSONR_STR) {
		snprintf(w->names[idx], sizeof(w->names[idx]), "%s", v->str);
		return;
	}
	if (!v->is_u64)
		return;
	for (size_t k = 0; k < sizeof(port_keys) / sizeof(port_keys[0]); k++)
		if (strcmp(key, port_keys[k].key) == 0)
			*(uint64_t *)(void *)((char *)&w->ports[idx] + port_keys[k].off) += v->u64;
}

int swproc_stop(struct swproc *s, const char *port, struct swproc_port *out, char *err,
		size_t errlen)
{
	int status = 0;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		qp_time_ns t0 = qp_now_ns();
		while (waitpid(s->pid, &status, WNOHANG) == 0) {
			if (qp_now_ns() - t0 > SWPROC_STOP_NS) {
				kill(s->pid, SIGKILL);
				waitpid(s->pid, &status, 0);
				break;
			}
			sleep_ns(QP_NS_PER_MS);
		}
		s->pid = -1;
	}
	if (!port || !out)
		return 0;
	memset(out, 0, sizeof(*out));
	struct port_walk *w = calloc(1, sizeof(*w));
	char why[PATH_MAX + 160];
	int rc = w ? jsonr_walk_file(s->json_path, on_json, w, why, sizeof(why)) : -ENOMEM;

	if (rc)
		rc = qp_errmsg(rc, err, errlen, "switch stats %s", w ? why : "out of memory");
	if (rc == 0) {
		s->end_ns = w->time_ns;
		s->late_max_ns = w->late_max_ns;
		s->late_total_ns = w->late_total_ns;
		rc = -ENOENT;
		for (int i = 0; i < SWPROC_PORTS; i++) {
			if (strcmp(w->names[i], port) == 0) {
				*out = w->ports[i];
				out->found = true;
				rc = 0;
			}
		}
		if (rc)
			qp_errmsg(rc, err, errlen, "switch stats %s: no port %s", s->json_path,
				  port);
	}
	free(w);
	return rc;
}

int swproc_queue_mean(const struct swproc *s, const char *port, qp_time_ns from,
		      qp_time_ns to, double *mean, const char *series_path, char *err,
		      size_t errlen)
{
	FILE *f = fopen(s->csv_path, "r");
	FILE *series = NULL;
	char line[2048], name[64];
	double t_s, last_t_s = 0, sum = 0;
	uint64_t q;
	size_t n = 0;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "switch CSV %s: %s", s->csv_path,
				 strerror(errno));
	/* First pass: the last row's time, which the final JSON's time_ns stamps. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lf,", &t_s) == 1)
			last_t_s = t_s;
	if (!s->end_ns) {
		fclose(f);
		return qp_errmsg(-ENODATA, err, errlen,
				 "switch stats: no final time to anchor the CSV");
	}
	double start_ns = (double)s->end_ns - last_t_s * 1e9;
	if (series_path) {
		series = fopen(series_path, "w");
		if (series)
			fprintf(series, "time_s,port,queue_bytes\n");
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lf,%*[^,],%63[^,],%" SCNu64, &t_s, name, &q) != 3)
			continue;
		double at_ns = start_ns + t_s * 1e9;
		if (at_ns < (double)from || at_ns > (double)to)
			continue;
		if (series)      /* every port's queue; the mean is @port's */
			fprintf(series, "%.6f,%s,%" PRIu64 "\n", (at_ns - (double)from) / 1e9, name, q);
		if (strcmp(name, port) != 0)
			continue;
		sum += (double)q;
		n++;
	}
	fclose(f);
	if (series)
		fclose(series);
	if (n == 0)
		return qp_errmsg(-ENODATA, err, errlen, "switch CSV: no sample of %s in the run",
				 port);
	*mean = sum / (double)n;
	return 0;
}

void swproc_cleanup(struct swproc *s)
{
	if (!s->own_dir)
		return;
	unlink(s->csv_path);
	unlink(s->json_path);
	rmdir(s->dir);
	s->own_dir = false;
}
