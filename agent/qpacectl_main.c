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
};

static const struct command *commands(void);

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--socket PATH] COMMAND [ARGS]\n\n"
		   "Look at and steer the qpace agent (qpaced). The socket defaults to $%s,\n"
		   "else %s.\n\ncommands:\n", prog, CTL_SOCKET_ENV, CTL_DEFAULT_SOCKET);
	for (const struct command *c = commands(); c->name; c++)
		fprintf(f, "  %-6s %-28s %s\n", c->name, c->args, c->description);
	cc_help_algorithms(f, "qpaced");
}

static int fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
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
		return fail("\"%s\" is not a QPN (0..0xffffff, decimal or 0x hex)", s);
	*qpn = (uint32_t)v;
	return 0;
}

static bool want_json(int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "-j") == 0 || strcmp(argv[i], "--json") == 0) {
			memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof(*argv));
			(*argc)--;
			return true;
		}
	}
	return false;
}

/* ---- list, show, status ---- */

static int cmd_list(int argc, char **argv)
{
	bool json = want_json(&argc, argv);
	struct ctl_msg req = { .type = CTL_T_LIST };
	struct views vs = { 0 };
	struct ctl_client *c;
	int rc;

	if (argc != 1)
		return fail("list takes no arguments besides -j (got \"%s\")", argv[1]);
	if (!(c = connect_agent()))
		return 1;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	if (!rc && json) {
		struct qp_out o;

		qp_out_init(&o, stdout, QP_OUT_JSON);
		qp_out_arr(&o, NULL);
		for (size_t i = 0; i < vs.n; i++)
			qp_print_view(&o, &vs.v[i]);
		qp_out_end(&o);
	} else if (!rc) {
		qp_view_table_header(stdout, NULL, false);
		for (size_t i = 0; i < vs.n; i++)
			qp_view_table_row(stdout, &vs.v[i]);
	}
	free(vs.v);
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	bool json = want_json(&argc, argv);
	struct ctl_msg req = { .type = CTL_T_SHOW };
	struct views vs = { 0 };
	struct ctl_client *c;
	struct qp_out o;
	int rc;

	if (argc != 2)
		return fail("usage: show QPN [-j]%s", "");
	if (parse_qpn(argv[1], &req.u.qpn) || !(c = connect_agent()))
		return 1;
	rc = call(c, &req, &vs);
	ctl_client_close(c);
	if (!rc && vs.n == 1) {
		qp_out_init(&o, stdout, json ? QP_OUT_JSON : QP_OUT_TEXT);
		qp_print_view(&o, &vs.v[0]);
	}
	free(vs.v);
	return rc;
}

static int cmd_status(int argc, char **argv)
{
	bool json = want_json(&argc, argv);
	struct ctl_msg req = { .type = CTL_T_STATUS };
	struct views vs = { 0 };
	struct ctl_client *c;
	struct qp_out o;
	int rc;

	(void)argv;
	if (argc != 1)
		return fail("status takes no arguments besides -j%s", "");
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

	if (argc < 4 || parse_qpn(argv[1], &s->qpn))
		return argc < 4 ? fail("usage: set QPN rate R|auto, or set QPN algo A [PARAMS]%s",
				       "") : 1;
	if (strcmp(argv[2], "rate") == 0 && argc == 4) {
		s->what = CTL_SET_RATE;
		if (strcmp(argv[3], "auto") != 0 && (qp_parse_rate(argv[3], &s->rate_bps) ||
						      !s->rate_bps))
			return fail("\"%s\" is not a rate (e.g. 2.5G, 800M) or auto", argv[3]);
	} else if (strcmp(argv[2], "algo") == 0 && argc <= 5) {
		s->what = CTL_SET_ALGO;
		if (snprintf(s->algo, sizeof(s->algo), "%s", argv[3]) >= (int)sizeof(s->algo) ||
		    (argc == 5 && snprintf(s->params, sizeof(s->params), "%s", argv[4]) >=
					  (int)sizeof(s->params)))
			return fail("algorithm name or parameters too long: \"%s\"", argv[3]);
	} else {
		return fail("set: \"%s\" is neither rate R|auto nor algo A [PARAMS]", argv[2]);
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

static void top_draw(const struct views *vs, bool tty, double interval)
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
		qp_view_table_row(stdout, &vs->v[i]);
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
	double interval = 1.0;
	long iterations = -1;
	struct termios saved, t;
	int rc = 0;

	sort_field = qp_view_field_find("rate");
	sort_desc = true;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "-o") == 0 && v) {
			const char *key = v[0] == '-' || v[0] == '+' ? v + 1 : v;

			sort_field = qp_view_field_find(key);
			if (!sort_field || !sort_field->head)
				return fail("top: \"%s\" is not a column (qpn, peer, algo, rate, target, "
					    "credits, util, queue, rtt, bytes, retx)", key);
			sort_desc = v[0] != '+';
		} else if (strcmp(argv[i], "-d") == 0 && v) {
			interval = atof(v);
			if (!(interval >= 0.1 && interval <= 3600))
				return fail("top: -d \"%s\": seconds in 0.1..3600", v);
		} else if (strcmp(argv[i], "-n") == 0 && v) {
			iterations = atol(v);
			if (iterations < 1)
				return fail("top: -n \"%s\": a count of 1 or more", v);
		} else {
			return fail("top: unknown option \"%s\" (-o [+|-]KEY, -d SECONDS, -n COUNT)",
				    argv[i]);
		}
		i++;
	}
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
		top_draw(&vs, tty, interval);
		free(vs.v);
		if (iterations >= 0 && k + 1 >= iterations)
			break;
		if (raw ? poll(&p, 1, (int)(interval * 1000)) >= 0 && !top_keys()
			: usleep((useconds_t)(interval * 1e6)) != 0)
			break;
	}
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
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
	{ "top", cmd_top, "[-o [+|-]KEY] [-d S] [-n N]",
	  "live per-QP table, sorted by a column (a snapshot when not a terminal)" },
	{ "list", cmd_list, "[-j]", "every QP: table, or JSON with -j" },
	{ "show", cmd_show, "QPN [-j]", "one QP, every field" },
	{ "set", cmd_set, "QPN rate R|auto", "manual rate (auto: back to the algorithm)" },
	{ "", cmd_set, "QPN algo A [PARAMS]", "switch the QP's algorithm" },
	{ "status", cmd_status, "[-j]", "agent counters and feedback delay" },
	{ "help", cmd_help, "", "this text" },
	{ .name = NULL },
};

static const struct command *commands(void)
{
	return command_table;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > 2 && (strcmp(argv[1], "--socket") == 0 || strcmp(argv[1], "-s") == 0)) {
		sock_path = argv[2];
		i = 3;
	}
	if (i >= argc) {
		usage(stderr);
		return 1;
	}
	for (const struct command *c = commands(); c->name; c++)
		if (c->name[0] && strcmp(c->name, argv[i]) == 0)
			return c->fn(argc - i, argv + i);
	fprintf(stderr, "%s: unknown command \"%s\"\n", prog, argv[i]);
	usage(stderr);
	return 1;
}
