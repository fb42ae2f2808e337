/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The manual page of a program from its option table (qpace/opt.h, qp_opt_man): the rows
 * that print --help write the page's OPTIONS, so the two cannot disagree. The output is
 * man(7) roff as groff -man -ww takes it without a warning: every '-' written \-, every
 * '\' \e, a line that would start with '.' or '\'' guarded with \&. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "qpace/opt.h"
#include "qpace/version.h"

/* One line of text, escaped for roff (no newline). */
static void esc(FILE *out, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else
			fputc(s[i], out);
	}
}

static void esc_str(FILE *out, const char *s)
{
	esc(out, s, strlen(s));
}

/* Text as --help prints it, as roff: a blank line starts a paragraph, a line indented two
 * spaces or more is kept as it is (examples, lists), the others are filled. */
static void text(FILE *out, const char *s)
{
	bool verbatim = false, para = true;

	while (*s) {
		size_t n = strcspn(s, "\n");
		bool indented = n >= 2 && s[0] == ' ' && s[1] == ' ';
		size_t lead = strspn(s, " ");

		if (lead == n) {                   /* blank */
			if (verbatim)
				fputs(".fi\n.RE\n", out);
			verbatim = false;
			para = true;
		} else {
			if (para && !verbatim)
				fputs(".PP\n", out);
			para = false;
			if (indented && !verbatim)
				fputs(".RS 4\n.nf\n", out);
			else if (!indented && verbatim)
				fputs(".fi\n.RE\n", out);
			verbatim = indented;
			if (indented) {
				esc(out, s + 2, n - 2);
			} else {
				esc(out, s + lead, n - lead);
			}
			fputc('\n', out);
		}
		s += n;
		if (*s)
			s++;
	}
	if (verbatim)
		fputs(".fi\n.RE\n", out);
}

/* A row's tag line: "-s, --size SIZE" (keys: "size = SIZE"). */
static void row_tag(FILE *out, const struct qp_opt *o, bool keys)
{
	const char *arg = o->arg;

	fputs(".TP\n", out);
	if (keys) {
		fputs("\\fB", out);
		esc_str(out, o->name);
		fputs("\\fR = ", out);
		if (o->type == QP_OPT_FLAG)
			arg = "on|off";
	} else {
		if (o->short_name)
			fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", out);
		esc_str(out, o->name);
		fputs("\\fR", out);
		if (arg)
			fputc(' ', out);
	}
	if (arg) {
		fputs("\\fI", out);
		esc_str(out, arg);
		fputs("\\fR", out);
	}
	fputc('\n', out);
}

/* Help text inside a .TP: its lines filled, one roff line each. */
static void row_help(FILE *out, const char *h)
{
	while (h && *h) {
		size_t n = strcspn(h, "\n");
		size_t lead = strspn(h, " ");

		if (lead < n) {
			esc(out, h + lead, n - lead);
			fputc('\n', out);
		}
		h += n;
		if (*h)
			h++;
	}
}

static void rows(FILE *out, const struct qp_opt *t, size_t n, unsigned cmd, bool keys)
{
	for (size_t i = 0; i < n; i++) {
		const struct qp_opt *o = &t[i];
		char range[240];

		/* the rows --help prints for @cmd (qp_opt_usage) */
		if ((o->cmds && !(o->cmds & cmd)) || (o->flags & QP_OPT_F_HIDDEN))
			continue;
		if (keys && (o->type == QP_OPT_HELP || o->type == QP_OPT_VERSION ||
			     o->type == QP_OPT_MAN))
			continue;
		row_tag(out, o, keys);
		row_help(out, o->help);
		qp_opt_range(o, range, sizeof(range));
		if (range[0] && o->type != QP_OPT_FLAG) {
			fputs(".br\nAccepted: ", out);
			esc_str(out, range);
			fputs(".\n", out);
		}
		if (o->def && *o->def) {
			fputs(".br\nDefault: ", out);
			esc_str(out, o->def);
			fputs(".\n", out);
		}
	}
}

/* "usage: PROG ARGS" and its continuation lines (to the first blank line) as SYNOPSIS;
 * returns where the description starts. */
static const char *synopsis(FILE *out, const struct qp_opt_prog *p)
{
	const char *s = p->head ? p->head : "";
	size_t plen = strlen(p->name);

	fputs(".SH SYNOPSIS\n.nf\n", out);
	if (strncmp(s, "usage: ", 7)) {
		fputs("\\fB", out);
		esc_str(out, p->name);
		fputs("\\fR [\\fIOPTIONS\\fR]\n", out);
	}
	while (!strncmp(s, "usage: ", 7) || (s[0] == ' ' && strspn(s, " ") < strcspn(s, "\n"))) {
		size_t n = strcspn(s, "\n");
		const char *l = s + strspn(s, " ");

		if (!strncmp(s, "usage: ", 7))
			l = s + 7;
		if (!strncmp(l, p->name, plen)) {
			fputs("\\fB", out);
			esc(out, l, plen);
			fputs("\\fR", out);
			l += plen;
		}
		esc(out, l, (size_t)(s + n - l));
		fputc('\n', out);
		s += n;
		if (*s)
			s++;
	}
	fputs(".fi\n", out);
	return s;
}

/* The head's text after the synopsis, less a last line that only introduces the options
 * ("Options:"), which the page has a section for. */
static void description(FILE *out, const char *s)
{
	size_t n = strlen(s);
	char *d;

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	if (n && s[n - 1] == ':') {
		size_t start = n;

		while (start && s[start - 1] != '\n')
			start--;
		if (!start || s[start - 1] == '\n')
			n = start;
	}
	d = strndup(s, n);
	if (!d)
		return;
	text(out, d);
	free(d);
}

static void upper(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(toupper((unsigned char)*s), out);
}

void qp_opt_man(FILE *out, const struct qp_opt_prog *p)
{
	int section = p->section ? p->section : 1;
	bool keys = section == 5;
	const char *rest;

	fprintf(out, ".\\\" Written by %s --help-man from its option table: edit the table.\n",
		p->name);
	fputs(".TH \"", out);
	upper(out, p->name);
	fprintf(out, "\" \"%d\" \"\" \"qpace %s\" \"qpace\"\n.SH NAME\n", section, qp_version());
	esc_str(out, p->name);
	fputs(" \\- ", out);
	esc_str(out, p->purpose ? p->purpose : "");
	fputc('\n', out);
	rest = keys ? p->head : synopsis(out, p);
	fputs(".SH DESCRIPTION\n", out);
	description(out, rest ? rest : "");
	if (p->n) {
		fprintf(out, ".SH %s\n", keys ? "KEYS" : "OPTIONS");
		rows(out, p->t, p->n, 0, keys);
	}
	if (p->ncmds) {
		fputs(".SH COMMANDS\n", out);
		for (size_t i = 0; i < p->ncmds; i++) {
			const struct qp_opt_cmd *c = &p->cmds[i];

			fputs(".SS \"", out);
			esc_str(out, c->name);
			fputs("\"\n.nf\n\\fB", out);
			esc_str(out, p->name);
			fputc(' ', out);
			esc_str(out, c->name);
			fputs("\\fR ", out);
			esc_str(out, c->args ? c->args : "");
			fputs("\n.fi\n", out);
			text(out, c->summary);
			if (c->t)
				rows(out, c->t, c->n, c->bit, false);
		}
	}
	if (p->tail || p->more) {
		char *more = NULL;
		size_t len = 0;
		FILE *m = p->more ? open_memstream(&more, &len) : NULL;

		if (m) {
			p->more(m, p->name);
			fclose(m);
		}
		fputs(".SH NOTES\n", out);
		text(out, p->tail ? p->tail : "");
		text(out, more ? more : "");
		free(more);
	}
	if (!keys)
		fputs(".SH EXIT STATUS\n.TP\n0\nsuccess (also after \\-\\-help and \\-\\-version)\n"
		      ".TP\n1\nthe run failed: a file, a device, a peer or a check said no\n"
		      ".TP\n2\na usage error: an unknown option, a value out of its range, options "
		      "that do not go together; nothing was started\n", out);
	if (p->files) {
		const char *s = p->files;

		fputs(".SH FILES\n", out);
		while (*s) {
			size_t n = strcspn(s, "\n"), tab = strcspn(s, "\t");

			if (tab > n)
				tab = n;
			fputs(".TP\n.I ", out);
			esc(out, s, tab);
			fputc('\n', out);
			if (tab < n) {
				esc(out, s + tab + 1, n - tab - 1);
				fputc('\n', out);
			}
			s += n;
			if (*s)
				s++;
		}
	}
	if (p->see_also) {
		fputs(".SH SEE ALSO\n", out);
		esc_str(out, p->see_also);
		fputc('\n', out);
	}
}
