/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* qpacectl: look at and steer a running qpaced through its control socket (qpace/ctl.h).
 * A {name, function, description} table generates the usage (wireguard-tools' wg.c). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "qpace/cc_help.h"
#include "qpace/ctl_client.h"
#include "qpace/errmsg.h"
#include "qpace/opt.h"
#include "qpace/rdma_nl.h"
#include "qp_print.h"
#include "qpace/units.h"

#define CALL_TIMEOUT_NS (5 * QP_NS_PER_S)

static const char *prog = "qpacectl";
static const char *sock_path;

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *description;
	unsigned bit;                /* its rows of cmd_opts (0: it takes none) */
};

enum { C_TOP = 1, C_LIST = 2, C_SHOW = 4, C_STATUS = 8 };

static const struct command *commands(void);

#define HEAD "usage: qpacectl [--socket PATH] COMMAND [ARGS]\n\n"                            \
	"Look at and steer the qpace agent (qpaced) through its control socket. The socket\n" \
	"defaults to $" CTL_SOCKET_ENV ", else " CTL_DEFAULT_SOCKET ".\n\n"

static const struct qp_opt global_opts[] = {
	{ "socket", 0, QP_OPT_STR, "PATH", .off = 0, .size = sizeof(const char *),
	  .old_short = 's', .help = "the agent's control socket" },
	QP_OPT_STD_ROWS,
};
#define NGLOBAL (sizeof(global_opts) / sizeof(global_opts[0]))

static void algorithms(FILE *f, const char *name)
{
	(void)name;
	cc_help_algorithms(f, "qpaced");
}

static void usage(FILE *f)
{
	fputs(HEAD "options:\n", f);
	qp_opt_usage(f, global_opts, NGLOBAL, 0);
	fputs("\ncommands:\n", f);
	for (const struct command *c = commands(); c->name; c++)
		fprintf(f, "  %-6s %-28s %s\n", c->name, c->args, c->description);
	fputc('\n', f);
	algorithms(f, prog);
}

static int fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return QP_EXIT_FAIL;
}

/* A command given wrong: the message, and the usage status. */
static int usage_fail(const char *fmt, const char *arg)
{
	fail(fmt, arg);
	return QP_EXIT_USAGE;
}

/* ---- talking to the agent ---- */

struct views {
	struct agent_qp_view *v;
	size_t n, cap;
	struct ctl_agent agent;
	bool have_agent;
};

static void collect(void *arg, const struct ctl_msg *m)
{
	struct views *vs = arg;

	if (m->type == CTL_T_AGENT) {
		vs->agent = m->u.agent;
		vs->have_agent = true;
		return;
	}
	if (m->type != CTL_T_QP)
		return;
	if (vs->n == vs->cap) {
		size_t cap = vs->cap ? 2 * vs->cap : 64;
		struct agent_qp_view *v = realloc(vs->v, cap * sizeof(*v));

		if (!v)
			return;
		vs->v = v;
		vs->cap = cap;
	}
	vs->v[vs->n++] = m->u.qp;
}

/* One request; its QP / AGENT messages land in @vs. 0 or 1 (message printed). */
static int call(struct ctl_client *c, struct ctl_msg *req, struct views *vs)
{
	char err[300];
	int rc = ctl_client_call(c, req, collect, vs, CALL_TIMEOUT_NS, NULL, err, sizeof(err));

	return rc ? fail("%s", err) : 0;
}

static struct ctl_client *connect_agent(void)
{
	struct ctl_client *c;
	char err[300];

	if (ctl_client_open(sock_path, &c, err, sizeof(err))) {
		fail("%s", err);
		return NULL;
	}
	return c;
}

static int parse_qpn(const char *s, uint32_t *qpn)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (!*s || *end || errno || v > QP_RATE_QPN_MAX)
		return usage_fail("\"%s\" is not a QPN (0..0xffffff, decimal or 0x hex)", s);
	*qpn = (uint32_t)v;
	return 0;
}

/* ---- each command's options: one table, a row per option with the commands it belongs to
 * (qpace/opt.h) ---- */

struct cmd_opts {
	bool json, help;
	const struct qp_view_field *sort;
	bool desc;
	qp_time_ns interval_ns;
	uint64_t iterations;         /* 0 = until quit (one snapshot when not a terminal) */
};

static int opt_sort(const struct qp_opt *opt, void *conf, const char *v, char *err, size_t len)
{
	struct cmd_opts *o = conf;
	const char *key = v[0] == '-' || v[0] == '+' ? v + 1 : v;

	(void)opt;
	o->sort = qp_view_field_find(key);
	if (!o->sort || !o->sort->head)
		return qp_errmsg(-EINVAL, err, len, "not a column (qpn, peer, algo, rate, target, "
				 "credits, util, queue, rtt, bytes, retx)");
	o->desc = v[0] != '+';
	return 0;
}

#define AT(field) QP_OPT_AT(struct cmd_opts, field)

static const struct qp_opt cmd_opts[] = {
	{ "json", 'j', QP_OPT_FLAG, NULL, AT(json), .cmds = C_LIST | C_SHOW | C_STATUS,
	  .help = "JSON instead of text" },
	{ "sort", 0, QP_OPT_FN, "[+|-]KEY", .fn = opt_sort, .cmds = C_TOP,
	  .old_short = 'o',
	  .help = "sort by this column, descending (+KEY: ascending)", .def = "rate" },
	{ "delay", 0, QP_OPT_TIME, "S", AT(interval_ns), .min = 100 * QP_NS_PER_MS,
	  .max = 3600 * QP_NS_PER_S, .unit_ns = QP_NS_PER_S, .cmds = C_TOP,
	  .old_short = 'd', .help = "seconds between refreshes", .def = "1" },
	{ "iterations", 'n', QP_OPT_UINT, "N", AT(iterations), .min = 1, .max = 1000000000,
	  .cmds = C_TOP, .help = "refresh N times, then exit (default: until q; one snapshot\n"
				 "when not a terminal)" },
	{ "help", 'h', QP_OPT_HELP, NULL, AT(help), .help = "this text" },
};
#define NCMD_OPTS (sizeof(cmd_opts) / sizeof(cmd_opts[0]))

/* The options of command @cmd (argv[0]) into @o: the index of its first positional
 * argument, 0 when --help was printed, -1 when an error was. */
static int cmd_args(unsigned cmd, int argc, char **argv, struct cmd_opts *o)
{
	const struct qp_opt_spec spec = { cmd_opts, NCMD_OPTS, cmd, false };
	char err[400], where[64];
	int i;

	*o = (struct cmd_opts){ 0 };
	snprintf(where, sizeof(where), "%s %s", prog, argv[0]);
	i = qp_opt_defaults(cmd_opts, NCMD_OPTS, cmd, o, err, sizeof(err));
	if (!i)
		i = qp_opt_parse(&spec, argc, argv, o, NULL, err, sizeof(err));
	if (i < 0)
		return qp_opt_fail(where, err), -1;
	if (o->help) {
		for (const struct command *c = commands(); c->name; c++)
			if (!strcmp(c->name, argv[0]))
				printf("usage: %s %s\n%s.\n\n", where, c->args, c->description);
		qp_opt_usage(stdout, cmd_opts, NCMD_OPTS, cmd);
		return 0;
	}
	return i;
}

/* ---- QP owners: the kernel's rdma netlink QP dump ---- */

struct owners {
	struct rdma_nl_qp *q;
	size_t n;
};

/* Load the dump; when it cannot be had, say why in one line (once: @said). */
static void owners_load(struct owners *ow, bool *said)
{
	char err[300];
	size_t ndevs;

	free(ow->q);
	ow->q = NULL;
	ow->n = 0;
	if (rdma_nl_dump_qps(&ow->q, &ow->n, &ndevs, err, sizeof(err)) && !*said) {
		fprintf(stderr, "%s: OWNER unknown: %s\n", prog, err);
		*said = true;
	}
}

static const struct rdma_nl_qp *owner_of(const struct owners *ow, const struct agent_qp_view *v)
{
	return qp_view_owner(v, ow->q, ow->n);
}

/* ---- list, show, status ---- */

static int cmd_list(int argc, char **argv)
{
	struct cmd_opts opts;
	int first = cmd_args(C_LIST, argc, argv, &opts);
	bool json = opts.json;
	struct ctl_msg req = { .type = CTL_T_LIST };
	struct views vs = { 0 };
	struct owners ow = { 0 };
	bool said = false;
	struct ctl_client *c;
	int rc;

	if (first <= 0)
		return first < 0 ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (first != argc)
		return usage_fail("list takes no arguments besides -j (got \"%s\")", argv[first]);
	if (!(c = connect_agent()))
		return 1;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	if (!rc && vs.n)
		owners_load(&ow, &said);
	if (!rc && json) {
		struct qp_out o;

		qp_out_init(&o, stdout, QP_OUT_JSON);
		qp_out_arr(&o, NULL);
		for (size_t i = 0; i < vs.n; i++)
			qp_print_view_owned(&o, &vs.v[i], owner_of(&ow, &vs.v[i]));
		qp_out_end(&o);
	} else if (!rc) {
		qp_view_table_header(stdout, NULL, false);
		for (size_t i = 0; i < vs.n; i++)
			qp_view_table_row(stdout, &vs.v[i], owner_of(&ow, &vs.v[i]));
	}
	free(ow.q);
	free(vs.v);
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	struct cmd_opts opts;
	int first = cmd_args(C_SHOW, argc, argv, &opts);
	bool json = opts.json;
	struct ctl_msg req = { .type = CTL_T_SHOW };
	struct views vs = { 0 };
	struct ctl_client *c;
	struct qp_out o;
	int rc;

	if (first <= 0)
		return first < 0 ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (argc - first != 1)
		return usage_fail("usage: show QPN [-j]%s", "");
	if ((rc = parse_qpn(argv[first], &req.u.qpn)))
		return rc;
	if (!(c = connect_agent()))
		return QP_EXIT_FAIL;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	if (!rc && vs.n == 1) {
		struct owners ow = { 0 };
		bool said = false;

		owners_load(&ow, &said);
		qp_out_init(&o, stdout, json ? QP_OUT_JSON : QP_OUT_TEXT);
		qp_print_view_owned(&o, &vs.v[0], owner_of(&ow, &vs.v[0]));
		free(ow.q);
	}
	free(vs.v);
	return rc;
}

static int cmd_status(int argc, char **argv)
{
	struct cmd_opts opts;
	int first = cmd_args(C_STATUS, argc, argv, &opts);
	bool json = opts.json;
	struct ctl_msg req = { .type = CTL_T_STATUS };
	struct views vs = { 0 };
	struct ctl_client *c;
	struct qp_out o;
	int rc;

	if (first <= 0)
		return first < 0 ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (first != argc)
		return usage_fail("status takes no arguments besides -j%s", "");
	if (!(c = connect_agent()))
		return 1;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	if (!rc && vs.have_agent) {
		qp_out_init(&o, stdout, json ? QP_OUT_JSON : QP_OUT_TEXT);
		qp_print_status(&o, &vs.agent);
	}
	free(vs.v);
	return rc;
}

/* ---- set ---- */

static int cmd_set(int argc, char **argv)
{
	struct ctl_msg req = { .type = CTL_T_SET };
	struct ctl_set *s = &req.u.set;
	struct views vs = { 0 };
	struct ctl_client *c;
	int rc;

	if (argc < 4)
		return usage_fail("usage: set QPN rate R|auto, or set QPN algo A [PARAMS]%s", "");
	if ((rc = parse_qpn(argv[1], &s->qpn)))
		return rc;
	if (strcmp(argv[2], "rate") == 0 && argc == 4) {
		s->what = CTL_SET_RATE;
		if (strcmp(argv[3], "auto") != 0 && (qp_parse_rate(argv[3], &s->rate_bps) ||
						      !s->rate_bps))
			return usage_fail("\"%s\" is not a rate (e.g. 2.5G, 800M) or auto", argv[3]);
	} else if (strcmp(argv[2], "algo") == 0 && argc <= 5) {
		s->what = CTL_SET_ALGO;
		if (snprintf(s->algo, sizeof(s->algo), "%s", argv[3]) >= (int)sizeof(s->algo) ||
		    (argc == 5 && snprintf(s->params, sizeof(s->params), "%s", argv[4]) >=
					  (int)sizeof(s->params)))
			return usage_fail("algorithm name or parameters too long: \"%s\"", argv[3]);
	} else {
		return usage_fail("set: \"%s\" is neither rate R|auto nor algo A [PARAMS]", argv[2]);
	}
	if (!(c = connect_agent()))
		return 1;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	free(vs.v);
	return rc;
}

/* ---- top ---- */

static volatile sig_atomic_t top_stop;

static void on_sigint(int sig)
{
	(void)sig;
	top_stop = 1;
}

static const struct qp_view_field *sort_field;
static bool sort_desc;

static int sort_cmp(const void *a, const void *b)
{
	int c = qp_view_cmp(sort_field, a, b);

	return sort_desc ? -c : c;
}

/* The column after / before @f that has a header. */
static const struct qp_view_field *next_column(const struct qp_view_field *f, int dir)
{
	const struct qp_view_field *all = qp_view_fields(), *g = f;
	size_t n = 0;

	while (all[n].key)
		n++;
	do {
		g = all + ((size_t)(g - all) + n + (size_t)(dir > 0 ? 1 : n - 1)) % n;
	} while (!g->head);
	return g;
}

static void top_draw(const struct views *vs, const struct owners *ow, bool tty,
		     double interval)
{
	const struct ctl_agent *a = &vs->agent;
	const uint64_t *c = a->counters;

	if (tty)
		fputs("\x1b[H\x1b[2J", stdout);
	printf("qpaced pid %u  up %.0fs  QPs %u/%u  feedback accepted %llu rejected %llu "
	       "malformed %llu  delay p99 %.1fus\n", a->pid, a->uptime_ns / 1e9, a->qps,
	       a->max_qps, (unsigned long long)c[AGENT_C_FB_ACCEPTED],
	       (unsigned long long)(c[AGENT_C_FB_REJ_SOURCE] + c[AGENT_C_FB_REJ_NOTAG] +
				    c[AGENT_C_FB_REJ_TAG]),
	       (unsigned long long)(c[AGENT_C_FB_MAL_PROTO] + c[AGENT_C_FB_MAL_TRUNC] +
				    c[AGENT_C_FB_MAL_FIELD] + c[AGENT_C_FB_MAL_TYPE] +
				    c[AGENT_C_FB_MAL_OVERSIZE]),
	       a->delay_p99_ns / 1e3);
	if (tty)
		printf("sort: %s%s   keys: < > column, r reverse, q quit   every %.1fs\n",
		       sort_field->key, sort_desc ? " (descending)" : "", interval);
	qp_view_table_header(stdout, sort_field, sort_desc);
	for (size_t i = 0; i < vs->n; i++) {
		struct winsize ws;

		/* a terminal shows what fits, like top */
		if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 5 &&
		    i + 4 >= ws.ws_row && i + 1 < vs->n) {
			printf("... %zu more\n", vs->n - i);
			break;
		}
		qp_view_table_row(stdout, &vs->v[i], owner_of(ow, &vs->v[i]));
	}
	fflush(stdout);
}

/* Keys typed since the last refresh; false to quit. */
static bool top_keys(void)
{
	char ch;

	while (read(STDIN_FILENO, &ch, 1) == 1) {
		if (ch == 'q')
			return false;
		if (ch == '<' || ch == '>')
			sort_field = next_column(sort_field, ch == '>' ? 1 : -1);
		if (ch == 'r')
			sort_desc = !sort_desc;
	}
	return true;
}

static int cmd_top(int argc, char **argv)
{
	bool tty = isatty(STDOUT_FILENO), raw = false;
	struct cmd_opts opts;
	int first = cmd_args(C_TOP, argc, argv, &opts);
	double interval = (double)opts.interval_ns / 1e9;
	long iterations = opts.iterations ? (long)opts.iterations : -1;
	struct termios saved, t;
	struct owners ow = { 0 };
	bool said = false;
	int rc = 0;

	if (first <= 0)
		return first < 0 ? QP_EXIT_USAGE : QP_EXIT_OK;
	if (first != argc)
		return usage_fail("top: unexpected argument \"%s\" (--sort [+|-]KEY, --delay "
				  "SECONDS, -n COUNT)", argv[first]);
	sort_field = opts.sort;
	sort_desc = opts.desc;
	if (!tty && iterations < 0)
		iterations = 1;   /* not a terminal: one snapshot */
	if (tty && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
		t = saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	for (long k = 0; !top_stop && (iterations < 0 || k < iterations); k++) {
		struct ctl_msg list = { .type = CTL_T_LIST }, status = { .type = CTL_T_STATUS };
		struct views vs = { 0 };
		struct ctl_client *c = connect_agent();
		struct pollfd p = { STDIN_FILENO, POLLIN, 0 };

		if (!c || call(c, &status, &vs) || call(c, &list, &vs)) {
			ctl_client_close(c);
			free(vs.v);
			rc = 1;
			break;
		}
		ctl_client_close(c);
		qsort(vs.v, vs.n, sizeof(vs.v[0]), sort_cmp);
		owners_load(&ow, &said);
		top_draw(&vs, &ow, tty, interval);
		free(vs.v);
		if (iterations >= 0 && k + 1 >= iterations)
			break;
		if (raw ? poll(&p, 1, (int)(interval * 1000)) >= 0 && !top_keys()
			: usleep((useconds_t)(interval * 1e6)) != 0)
			break;
	}
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	free(ow.q);
	return rc;
}

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct command command_table[] = {
	{ "top", cmd_top, "[--sort [+|-]KEY] [--delay S] [-n N]",
	  "live per-QP table, sorted by a column (a snapshot when not a terminal)", C_TOP },
	{ "list", cmd_list, "[-j]", "every QP: table, or JSON with -j", C_LIST },
	{ "show", cmd_show, "QPN [-j]", "one QP, every field", C_SHOW },
	{ "set", cmd_set, "QPN rate R|auto", "manual rate (auto: back to the algorithm)" },
	{ "", cmd_set, "QPN algo A [PARAMS]", "switch the QP's algorithm" },
	{ "status", cmd_status, "[-j]", "agent counters and feedback delay", C_STATUS },
	{ "help", cmd_help, "", "this text" },
	{ .name = NULL },
};

static const struct command *commands(void)
{
	return command_table;
}


/* The manual page: the global options, then each command with its own. */
static void man_page(void)
{
	struct qp_opt_cmd cmds[16];
	size_t n = 0;

	for (const struct command *c = commands(); c->name && n < 16; c++)
		cmds[n++] = (struct qp_opt_cmd){
			.name = c->name[0] ? c->name : "set", .args = c->args,
			.summary = c->description, .t = c->bit ? cmd_opts : NULL,
			.n = c->bit ? NCMD_OPTS : 0, .bit = c->bit };
	const struct qp_opt_prog p = {
		.name = prog, .purpose = "look at and steer the qpace agent", .head = HEAD,
		.t = global_opts, .n = NGLOBAL, .cmds = cmds, .ncmds = n, .more = algorithms,
		.files = CTL_DEFAULT_SOCKET "\tqpaced's control socket (qpaced --socket)",
		.see_also = "qpaced(1), qpace-bench(1)",
	};
	qp_opt_man(stdout, &p);
}

int main(int argc, char **argv)
{
	const struct qp_opt_spec spec = { global_opts, NGLOBAL, 0, true };
	char err[300];
	uint64_t seen;
	int i = qp_opt_parse(&spec, argc, argv, &sock_path, &seen, err, sizeof(err));

	if (i < 0) {
		qp_opt_fail(prog, err);
		return QP_EXIT_USAGE;
	}
	if (qp_opt_seen(global_opts, NGLOBAL, seen, "help")) {
		usage(stdout);
		return QP_EXIT_OK;
	}
	if (qp_opt_seen(global_opts, NGLOBAL, seen, "version")) {
		qp_opt_version(stdout, prog);
		return QP_EXIT_OK;
	}
	if (qp_opt_seen(global_opts, NGLOBAL, seen, "help-man")) {
		man_page();
		return QP_EXIT_OK;
	}
	if (i >= argc) {
		usage(stderr);
		return QP_EXIT_USAGE;
	}
	for (const struct command *c = commands(); c->name; c++)
		if (c->name[0] && strcmp(c->name, argv[i]) == 0)
			return c->fn(argc - i, argv + i);
	fprintf(stderr, "%s: unknown command \"%s\"\n", prog, argv[i]);
	usage(stderr);
	return QP_EXIT_USAGE;
}
