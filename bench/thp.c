/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* `qpace-bench run --huge-pages on`: glibc's heap on transparent huge pages (bench.h).
 *
 * A topology run touches its state at random on every packet-hop: the 128-host leaf-spine
 * keeps ~320 MB in hundreds of thousands of small allocations (queues, flow tables, QPs,
 * rings), and with 4 KiB pages most of those touches miss the TLB. glibc (2.35 and later)
 * backs malloc's heap with transparent huge pages when the tunable glibc.malloc.hugetlb=1
 * is set; with the kernel's THP in "madvise" mode (Debian's default) nothing else does.
 * Tunables are read only at start-up, from the environment, so the process sets it and
 * executes itself again, once (the variable then names it). It is a trade, so an option:
 * large fabrics with many small allocations take less CPU for more memory, small or mostly
 * idle ones gain nothing and pay memory and system time for 2 MB pages zeroed for a few
 * bytes each; docs/bench.md gives the figures (bench/vt_speed.sh with VT_SPEED_HUGE).
 *
 * Not done (and said why) where it cannot work: the kernel's THP is "never", a sanitizer's
 * allocator is in, or valgrind runs the process (an exec would leave it behind, and with
 * it the measurement); with THP "always" the heap has them already, and nothing is done.
 * GLIBC_TUNABLES naming the tunable already is left as it is (the user's value, or the
 * first pass). If the exec fails, the run goes on as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define THP_TUNABLE "glibc.malloc.hugetlb"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* gcc says so with a macro, clang (SAN=1 builds with it) with __has_feature */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define THP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define THP_SANITIZER 1
#endif
#endif
#ifndef THP_SANITIZER
#define THP_SANITIZER 0
#endif

enum thp_mode { THP_MISSING, THP_NEVER, THP_MADVISE, THP_ALWAYS };

static enum thp_mode thp_mode(void)
{
	char line[128] = "";
	FILE *f = fopen(THP_ENABLED, "r");

	if (!f)
		return THP_MISSING;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strstr(line, "[always]") ? THP_ALWAYS : strstr(line, "[madvise]") ? THP_MADVISE
										   : THP_NEVER;
}

const char *bench_thp_reexec(const char *argv0, int argc, char **argv)
{
	const char *tun = getenv("GLIBC_TUNABLES"), *pre = getenv("LD_PRELOAD");
	enum thp_mode mode;
	char val[1024], was[1024];
	char **av;

	if (tun && strstr(tun, THP_TUNABLE))
		return NULL;   /* set: by the first pass, or by the user (their value stands) */
	if (THP_SANITIZER)
		return "a sanitizer's allocator is in this build";
	if (pre && strstr(pre, "vgpreload"))
		return "valgrind runs this process";
	mode = thp_mode();   /* read only now: the second pass returned above */
	if (mode == THP_MISSING || mode == THP_NEVER)
		return mode == THP_NEVER ? "the kernel's transparent huge pages are 'never'"
					 : "no " THP_ENABLED " in this kernel";
	if (mode == THP_ALWAYS)
		return NULL;   /* the kernel gives them to the heap already */
	if (snprintf(was, sizeof(was), "%s", tun ? tun : "") >= (int)sizeof(was) ||
	    snprintf(val, sizeof(val), "%s%s" THP_TUNABLE "=1", was, *was ? ":" : "") >=
		    (int)sizeof(val))
		return "GLIBC_TUNABLES is too long to add to";
	if (!(av = calloc((size_t)argc + 2, sizeof(*av))))
		return "out of memory";
	av[0] = (char *)argv0;
	memcpy(av + 1, argv, (size_t)argc * sizeof(*av));
	if (setenv("GLIBC_TUNABLES", val, 1)) {
		free(av);
		return "setenv failed";
	}
	fflush(NULL);
	execv("/proc/self/exe", av);
	/* still here: the environment as it was, and the run without them */
	free(av);
	if (tun)
		setenv("GLIBC_TUNABLES", was, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	return "executing /proc/self/exe failed";
}
