/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* compare and sweep: see runs.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/units.h"
#include "plot.h"
#include "runs.h"

int runs_split(const char *list, char *buf, size_t buflen, const char **items, size_t max,
	       const char *what, char *err, size_t errlen)
{
	size_t n = 0;

	if (snprintf(buf, buflen, "%s", list) >= (int)buflen)
		return qp_errmsg(-EINVAL, err, errlen, "%s '%s': too long", what, list);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return qp_errmsg(-EINVAL, err, errlen, "%s '%s': more than %zu items",
					 what, list, max);
		items[n++] = tok;
	}
	if (n == 0 || strstr(list, ",,") || list[0] == ',' || list[strlen(list) - 1] == ',')
		return qp_errmsg(-EINVAL, err, errlen, "%s '%s': an empty item", what, list);
	return (int)n;
}

int runs_mkdirs(const char *dir, char *err, size_t errlen)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; ; p++) {
		bool end = *p == '\0';
		if (*p == '/' || end) {
			*p = '\0';
			if (mkdir(path, 0755) && errno != EEXIST)
				return qp_errmsg(-errno, err, errlen, "mkdir %s: %s",
						 path, strerror(errno));
			if (end)
				return 0;
			*p = '/';
		}
	}
}

/* What a child sends back: the result, or an error line. */
struct runs_msg {
	int rc;
	char err[400];
	struct incast_result res;
};

static int child_run(const struct bench_conf *c, const char *algo, uint64_t senders,
		     uint64_t bytes, const char *dir, int fd)
{
	struct runs_msg m = { 0 };
	struct incast_run run = { 0 };

	m.rc = incast_run(c, algo, senders, bytes, dir, &run, m.err, sizeof(m.err));
	m.res = run.res;
	incast_run_free(&run);
	ssize_t w = write(fd, &m, sizeof(m));
	return w == (ssize_t)sizeof(m) ? 0 : 1;
}

int runs_incast_isolated(const struct bench_conf *c, const char *algo, uint64_t senders,
			 uint64_t bytes, const char *dir, struct incast_result *out, char *err,
			 size_t errlen)
{
	struct runs_msg m;
	int fds[2], status;
	size_t got = 0;

	if (pipe(fds))
		return qp_errmsg(-errno, err, errlen, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return qp_errmsg(-e, err, errlen, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(fds[0]);
		_exit(child_run(c, algo, senders, bytes, dir, fds[1]));
	}
	close(fds[1]);
	while (got < sizeof(m)) {
		ssize_t r = read(fds[0], (char *)&m + got, sizeof(m) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (got != sizeof(m))
		return qp_errmsg(-EIO, err, errlen, "%s: the run's process died (%s %d)",
				 algo, WIFSIGNALED(status) ? "signal" : "status",
				 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (m.rc)
		return qp_errmsg(m.rc < 0 ? m.rc : -EIO, err, errlen, "%s", m.err);
	*out = m.res;
	return 0;
}
