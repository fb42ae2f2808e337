/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpace-bench topo KIND [options] [-o FILE]: write a generated topology file
 * (qpace/topogen.h) that qpace-switch -c loads as it is, and say what is in it. Its own
 * option table, one row set per kind (the kind is the subcommand bit of the rows), so
 * --help shows each kind's options with that kind's defaults. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/out.h"
#include "qpace/topogen.h"
#include "qpace/units.h"
#include "bench.h"

#define K(kind) (1u << (kind))
#define STAR K(TOPOGEN_STAR)
#define DUMBBELL K(TOPOGEN_DUMBBELL)
#define LEAF_SPINE K(TOPOGEN_LEAF_SPINE)
#define FAT_TREE K(TOPOGEN_FAT_TREE)
#define TWO_SITE K(TOPOGEN_TWO_SITE)
#define LS_SITES (K(TOPOGEN_LEAF_SPINE) | K(TOPOGEN_TWO_SITE))
#define LINKED (DUMBBELL | LEAF_SPINE | FAT_TREE | TWO_SITE)   /* two-site: leaf-spine sites */

struct topo_cli {
	struct topogen_params p;
	const char *out;
	bool json;
	bool help;
};

static int opt_oversub(const struct qp_opt *o, void *conf, const char *v, char *err,
		       size_t errlen)
{
	struct topo_cli *c = conf;
	double r;

	(void)o;
	if (qp_parse_double(v, &r) || !(r > 0 && r <= 1000))
		return qp_errmsg(-EINVAL, err, errlen, "not a ratio in (0, 1000] (1: non-blocking, "
				 "3: 3:1)");
	c->p.oversub = r;
	return 0;
}

#define AT(field) QP_OPT_AT(struct topo_cli, field)
#define NUM(lo, hi) .min = (lo), .max = (hi)

static const struct qp_opt topo_opts[] = {
	{ "hosts", 0, QP_OPT_UINT, "N", AT(p.hosts), NUM(1, TOPOGEN_MAX_PORTS), .cmds = STAR,
	  .old_short = 'n', .help = "star: hosts on the switch", .def = "8" },
	{ "hosts", 0, QP_OPT_UINT, "N", AT(p.hosts), NUM(1, TOPOGEN_MAX_PORTS - 1),
	  .cmds = DUMBBELL, .old_short = 'n',
	  .help = "dumbbell: hosts on each side", .def = "4" },
	{ "hosts", 0, QP_OPT_UINT, "N", AT(p.hosts), NUM(1, TOPOGEN_MAX_PORTS - 1),
	  .cmds = TWO_SITE, .old_short = 'n',
	  .help = "two-site: hosts at each site", .def = "2" },
	{ "leaves", 0, QP_OPT_UINT, "N", AT(p.leaves), NUM(1, TOPOGEN_MAX_PORTS), .cmds = LS_SITES,
	  .help = "leaf switches (two-site: a site's, with --leaf-spine-sites)", .def = "2" },
	{ "spines", 0, QP_OPT_UINT, "N", AT(p.spines), NUM(1, TOPOGEN_MAX_PORTS), .cmds = LS_SITES,
	  .help = "spine switches, each linked to every leaf", .def = "2" },
	{ "hosts-per-leaf", 0, QP_OPT_UINT, "N", AT(p.hosts_per_leaf), NUM(1, TOPOGEN_MAX_PORTS),
	  .cmds = LS_SITES, .help = "hosts on each leaf", .def = "2" },
	{ "leaf-spine-sites", 0, QP_OPT_FLAG, NULL, AT(p.site_leaf_spine), .cmds = TWO_SITE,
	  .help = "two-site: each site a leaf-spine (--leaves, --spines,\n"
		  "--hosts-per-leaf), the WAN between the first spines" },
	{ "oversub", 0, QP_OPT_FN, "RATIO", .fn = opt_oversub, .cmds = LS_SITES,
	  .help = "a leaf's host capacity over its uplinks' (1: non-blocking,\n"
		  "3: 3:1); sets the leaf-spine links' rate unless --fabric-rate",
	  .def = "1" },
	{ "k", 0, QP_OPT_UINT, "K", AT(p.k), NUM(2, 8), .cmds = FAT_TREE,
	  .old_short = 'k',
	  .help = "even: k pods, k^3/4 hosts, 5k^2/4 switches of k ports", .def = "4" },
	{ "rate", 0, QP_OPT_RATE, "RATE", AT(p.host_bps), NUM(QP_KBPS, 10000 * QP_GBPS),
	  .help = "host links", .def = "10G" },
	{ "fabric-rate", 0, QP_OPT_RATE, "RATE", AT(p.fabric_bps), NUM(QP_KBPS, 10000 * QP_GBPS),
	  .cmds = LINKED, .help = "links between switches (default: --rate; leaf-spine:\n"
				  "hosts-per-leaf x rate / (spines x oversub))" },
	{ "wan-rate", 0, QP_OPT_RATE, "RATE", AT(p.wan_bps), NUM(QP_KBPS, 10000 * QP_GBPS),
	  .cmds = TWO_SITE, .help = "the WAN link between the sites", .def = "1G" },
	{ "wan-delay", 0, QP_OPT_TIME, "TIME", AT(p.wan_delay_ns), NUM(0, 10 * QP_NS_PER_S),
	  .cmds = TWO_SITE, .help = "its propagation delay, each way", .def = "10ms" },
	{ "wan-buffer", 0, QP_OPT_BYTES, "BYTES", AT(p.wan_buffer_bytes), NUM(1514, 1ULL << 30),
	  .cmds = TWO_SITE, .help = "its egress buffer at each end", .def = "16M" },
	{ "delay", 0, QP_OPT_TIME, "TIME", AT(p.delay_ns), NUM(0, 10 * QP_NS_PER_S),
	  .help = "propagation delay of every other link", .def = "1us" },
	{ "buffer", 0, QP_OPT_BYTES, "BYTES", AT(p.buffer_bytes), NUM(1514, 1ULL << 30),
	  .help = "egress buffer of every other port", .def = "1M" },
	{ "base-port", 0, QP_OPT_UINT, "P", AT(p.base_port), NUM(1, 65534),
	  .help = "host i's udp port: the switch on P+2i, the host on P+2i+1", .def = "7000" },
	{ "settings", 0, QP_OPT_STR, "'K=V ...'", AT(p.settings),
	  .help = "more port settings on every switch line, as qpace-switch\n"
		  "takes them (e.g. 'ecn=20K,80K,0.2 int=direct'); it checks them\n"
		  "when it loads the file" },
	{ "out", 'o', QP_OPT_STR, "FILE", AT(out),
	  .help = "write the topology to FILE and a summary to standard output\n"
		  "(default: the topology to standard output)" },
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .help = "the summary as JSON" },
	{ "help", 'h', QP_OPT_HELP, NULL, AT(help), .help = "this text" },
};
#define NOPTS (sizeof(topo_opts) / sizeof(topo_opts[0]))
_Static_assert(NOPTS <= QP_OPT_MAX, "option table fits the seen mask");

static const char *const kind_help[TOPOGEN_NKINDS] = {
	[TOPOGEN_STAR] = "one switch, N hosts",
	[TOPOGEN_DUMBBELL] = "N hosts on each of two switches, one bottleneck link",
	[TOPOGEN_LEAF_SPINE] = "leaves x spines, hosts on each leaf, an oversubscription",
	[TOPOGEN_FAT_TREE] = "k-ary fat-tree: k^3/4 hosts, 5k^2/4 switches",
	[TOPOGEN_TWO_SITE] = "two sites of N hosts joined by a long WAN link",
};

static void usage(FILE *f, const char *prog, int kind)
{
	fprintf(f, "usage: %s topo KIND [options] [-o FILE]\n"
		"A topology file for qpace-switch -c FILE (and for virtual time): switches,\n"
		"host ports, links and static forwarding with no flooding loops.\n\n", prog);
	for (int k = 0; k < TOPOGEN_NKINDS; k++)
		if (kind < 0 || kind == k)
			fprintf(f, "  %-11s %s\n", topogen_kind_name((enum topogen_kind)k),
				kind_help[k]);
	fprintf(f, "\n%s:\n", kind < 0 ? "options (each kind takes its own; KIND --help lists "
				       "them)" : "options");
	qp_opt_usage(f, topo_opts, NOPTS, kind < 0 ? 0 : K(kind));
	fprintf(f, "\nExample: a 128-host fat-tree at 100 Gb/s, then the switch on it:\n"
		"  %s topo fat-tree --k 8 --rate 100G -o ft8.topo\n"
		"  qpace-switch -c ft8.topo\n", prog);
}

static void summary(const struct topogen *g, const char *file, bool json)
{
	struct qp_out o;

	qp_out_init(&o, stdout, json ? QP_OUT_JSON : QP_OUT_TEXT);
	qp_out_obj(&o, NULL);
	qp_out_str(&o, "kind", topogen_kind_name(g->p.kind));
	qp_out_str(&o, "file", file);
	qp_out_u64(&o, "switches", g->nswitches);
	qp_out_u64(&o, "ports", g->nports);
	qp_out_u64(&o, "links", g->nlinks);
	qp_out_u64(&o, "hosts", g->nhosts);
	qp_out_rate(&o, "host_rate", g->p.host_bps);
	if (g->nlinks)
		qp_out_rate(&o, "fabric_rate", g->p.kind == TOPOGEN_TWO_SITE ? g->p.wan_bps :
			    g->p.fabric_bps);
	qp_out_end(&o);
}

static int write_out(const struct topogen *g, const char *path, char *err, size_t errlen)
{
	struct qp_strbuf text = { 0 };
	FILE *f = path ? fopen(path, "w") : stdout;
	int rc = 0;

	if (!f)
		return qp_errmsg(-errno, err, errlen, "-o '%s': %s", path, strerror(errno));
	if (!topogen_write(g, &text))
		rc = qp_errmsg(-ENOMEM, err, errlen, "out of memory");
	else if (fwrite(text.p, 1, text.len, f) != text.len || fflush(f))
		rc = qp_errmsg(-EIO, err, errlen, "-o '%s': %s", path ? path : "-", strerror(errno));
	if (path && fclose(f) && !rc)
		rc = qp_errmsg(-EIO, err, errlen, "-o '%s': %s", path, strerror(errno));
	qp_strbuf_free(&text);
	return rc;
}

int bench_topo(const char *prog, int argc, char **argv)
{
	char where[64], err[600];
	struct topo_cli c;
	struct topogen g;
	int kind, first, rc;

	snprintf(where, sizeof(where), "%s topo", prog);
	if (argc < 2 || argv[1][0] == '-') {
		bool help = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"));
		usage(help ? stdout : stderr, prog, -1);
		return help ? QP_EXIT_OK : QP_EXIT_USAGE;
	}
	kind = topogen_kind_find(argv[1]);
	if (kind < 0) {
		snprintf(err, sizeof(err), "KIND '%s': accepted star, dumbbell, leaf-spine, "
			 "fat-tree, two-site", argv[1]);
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	}
	memset(&c, 0, sizeof(c));
	topogen_defaults(&c.p, (enum topogen_kind)kind);
	if (qp_opt_defaults(topo_opts, NOPTS, K(kind), &c, err, sizeof(err)))
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	const struct qp_opt_spec spec = { topo_opts, NOPTS, K(kind), false };
	first = qp_opt_parse(&spec, argc - 1, argv + 1, &c, NULL, err, sizeof(err));
	if (first < 0)
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	if (c.help) {
		usage(stdout, prog, kind);
		return QP_EXIT_OK;
	}
	if (first < argc - 1) {
		snprintf(err, sizeof(err), "unexpected argument '%s' after KIND", argv[1 + first]);
		return qp_opt_fail(where, err), QP_EXIT_USAGE;
	}
	if ((rc = topogen_build(&g, &c.p, err, sizeof(err))))
		return qp_opt_fail(where, err), QP_EXIT_USAGE;   /* values that do not go together */
	rc = write_out(&g, c.out, err, sizeof(err));
	if (!rc && c.out)
		summary(&g, c.out, c.json);
	topogen_free(&g);
	return rc ? (qp_opt_fail(where, err), QP_EXIT_FAIL) : QP_EXIT_OK;
}

size_t bench_topo_man_cmds(struct qp_opt_cmd *out, size_t max)
{
	static char names[TOPOGEN_NKINDS][32];
	size_t n = 0;

	for (int k = 0; k < TOPOGEN_NKINDS && n < max; k++) {
		snprintf(names[k], sizeof(names[k]), "topo %s",
			 topogen_kind_name((enum topogen_kind)k));
		out[n++] = (struct qp_opt_cmd){ .name = names[k], .args = "[options] [-o FILE]",
						.summary = kind_help[k], .t = topo_opts,
						.n = NOPTS, .bit = K(k) };
	}
	return n;
}

/* --gen KIND:KEY=VALUE,...: the same rows as `topo KIND --KEY VALUE` (a value with commas,
 * as settings' ecn=20K,80K,0.2, continues until the next KEY=). */
int bench_topo_gen_parse(const char *spec, struct topogen_params *p, char *buf, size_t buflen,
			 char *err, size_t errlen)
{
	struct topo_cli c;
	char e[400], *kv, *key = NULL;
	int kind;

	if (strlen(spec) >= buflen)
		return qp_errmsg(-EINVAL, err, errlen, "longer than %zu characters", buflen - 1);
	snprintf(buf, buflen, "%s", spec);
	kv = strchr(buf, ':');
	if (kv)
		*kv++ = '\0';
	kind = topogen_kind_find(buf);
	if (kind < 0)
		return qp_errmsg(-EINVAL, err, errlen, "KIND '%s': accepted star, dumbbell, "
				 "leaf-spine, fat-tree, two-site (then :KEY=VALUE,...)", buf);
	memset(&c, 0, sizeof(c));
	topogen_defaults(&c.p, (enum topogen_kind)kind);
	if (qp_opt_defaults(topo_opts, NOPTS, K(kind), &c, e, sizeof(e)))
		return qp_errmsg(-EINVAL, err, errlen, "%s", e);
	/* KEY=VALUE items; a piece whose text before '=' is no option joins the value before */
	char *items[NOPTS * 4];
	size_t n = 0;
	char *save = NULL;
	for (char *t = kv ? strtok_r(kv, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		bool is_key = false;
		for (size_t i = 0; eq && i < NOPTS; i++)
			is_key |= strlen(topo_opts[i].name) == (size_t)(eq - t) &&
				  !strncmp(topo_opts[i].name, t, (size_t)(eq - t));
		if (!is_key && n) {
			t[-1] = ',';        /* rejoin: strtok cut it there */
			continue;
		}
		if (n == sizeof(items) / sizeof(items[0]))
			return qp_errmsg(-EINVAL, err, errlen, "too many items");
		items[n++] = t;
	}
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(items[i], '=');
		key = items[i];
		if (!eq || !strncmp(key, "out=", 4) || !strncmp(key, "json=", 5) ||
		    !strncmp(key, "help=", 5))
			return qp_errmsg(-EINVAL, err, errlen, "'%s': not KEY=VALUE of `topo %s "
					 "--help`", key, buf);
		*eq = '\0';
		if (qp_opt_set(topo_opts, NOPTS, K(kind), &c, key, eq + 1, e, sizeof(e)))
			return qp_errmsg(-EINVAL, err, errlen, "%s", e);
	}
	*p = c.p;
	return 0;
}
