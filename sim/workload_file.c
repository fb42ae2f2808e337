/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Workload files and the CDF files they name, read from disk: the I/O around the pure
 * parser (workload.c) and generator (workload_gen.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qpace/errmsg.h"
#include "qpace/workload.h"
#include "textfile.h"

static int text_step(void *s, const char *text, size_t len, const char *file, char *err,
		     size_t errlen)
{
	return wl_parse(s, text, len, file, err, errlen);
}

int wl_load(struct wl_spec *s, const char *path, char *err, size_t errlen)
{
	return sim_load_file(path, text_step, s, err, errlen);
}

struct cdf_dirs {
	const char *base;             /* the workload file's path */
	const char *const *dirs;
	size_t ndirs;
};

static size_t len_of_folder(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) + 1 : 0;
}

static bool is_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') || (n > 4 && !strcmp(name + n - 4, ".cdf"));
}

/* A CDF file: out->file is left naming @name (which lives in the spec), not the path
 * buffer here. */
static int load_path(struct cdf *out, const char *path, const char *name, char *err,
		     size_t errlen)
{
	int rc = cdf_load(out, path, err, errlen);

	out->file = name;
	return rc;
}

static int load_named(void *ctx, const char *name, struct cdf *out, char *err, size_t errlen)
{
	const struct cdf_dirs *d = ctx;
	char path[4096], tried[1024] = "";
	size_t nt = 0;

	if (is_path(name)) {
		if (name[0] == '/')
			snprintf(path, sizeof(path), "%s", name);
		else
			snprintf(path, sizeof(path), "%.*s%s", (int)len_of_folder(d->base), d->base,
				 name);
		return load_path(out, path, name, err, errlen);
	}
	for (size_t i = 0; i < d->ndirs; i++) {
		snprintf(path, sizeof(path), "%s/%s.cdf", d->dirs[i], name);
		if (access(path, R_OK) == 0)
			return load_path(out, path, name, err, errlen);
		if (nt < sizeof(tried))
			nt += (size_t)snprintf(tried + nt, sizeof(tried) - nt, "%s%s", nt ? ", " : "",
					       d->dirs[i]);
	}
	return qp_errmsg(-ENOENT, err, errlen, "no file %s.cdf in %s", name,
			 d->ndirs ? tried : "(no CDF folder given)");
}

int wl_load_cdfs(struct wl_spec *s, struct cdf *store, size_t nstore, const char *const *dirs,
		 size_t ndirs, char *err, size_t errlen)
{
	struct cdf_dirs d = { s->file, dirs, ndirs };

	return wl_resolve_cdfs(s, store, nstore, load_named, &d, err, errlen);
}
