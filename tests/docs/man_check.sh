#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The manual pages against --help (make docs-check): each program writes its page from the
# option table that prints its --help (--help-man; qpaced --help-man-conf for
# qpaced.conf(5)). For every program, and every command of one that has commands, the
# options --help lists and the options the page lists must be the same set; each page must
# render with groff -man -ww (and man -l, where man-db is installed) without a warning.
#   BUILD=build tests/docs/man_check.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${BUILD:-build}/bin
tmp=$(mktemp -d /tmp/qpace-man.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

command -v groff >/dev/null || { echo "man_check: groff is missing (scripts/deps.sh installs groff-base)" >&2; exit 1; }

# --help's option rows ("  -s, --size SIZE", "      --cc ALGO"), one long name a line
help_rows() {
	sed -nE 's/^  (-[A-Za-z0-9], |    )--([A-Za-z0-9_-]+).*/\2/p' | sort -u
}
# the page's option rows: the tag line after each .TP ("\fB\-s\fR, \fB\-\-size\fR ...")
page_rows() {
	awk 'tp { print; tp = 0 } /^\.TP$/ { tp = 1 }' |
		sed -nE 's/.*\\fB\\-\\-([A-Za-z0-9_\\-]+)\\fR.*/\1/p' | sed 's/\\-/-/g' | sort -u
}
# the page's keys (section 5): "\fBname\fR = ..."
page_keys() {
	awk 'tp { print; tp = 0 } /^\.TP$/ { tp = 1 }' |
		sed -nE 's/^\\fB([A-Za-z0-9_\\-]+)\\fR = .*/\1/p' | sed 's/\\-/-/g' | sort -u
}
# a part of a page: the global part (up to COMMANDS), or command NAME's section
page_part() {  # page_part FILE [NAME]
	if [ $# = 1 ]; then
		sed '/^\.SH COMMANDS$/,$d' "$1"
	else
		awk -v want=".SS \"$2\"" '/^\.S[SH] / { on = ($0 == want) } on' "$1"
	fi
}
same() {  # same WHAT A B: the two sorted lists are equal, else say what differs
	if ! cmp -s "$2" "$3"; then
		fail "$1: --help and the page differ (< only in --help, > only on the page):"
		diff "$2" "$3" | grep '^[<>]' | sed 's/^/    /' >&2
		return 1
	fi
}
render() {  # render PAGE: no groff warning, and man -l takes it
	warn=$(groff -man -Tutf8 -ww -z "$1" 2>&1)
	[ -z "$warn" ] || fail "$(basename "$1"): groff warns: $warn"
	if command -v man >/dev/null; then
		warn=$(MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)
		[ -z "$warn" ] || fail "$(basename "$1"): man -l warns: $warn"
	fi
}

for p in qpace-switch qpaced qpacectl qpace-bench; do
	page=$tmp/$p.1
	"$BIN/$p" --help-man >"$page" || { fail "$p --help-man: exit $?"; continue; }
	render "$page"
	"$BIN/$p" --help | help_rows >"$tmp/help"
	page_part "$page" | page_rows >"$tmp/rows"
	same "$p" "$tmp/help" "$tmp/rows" && n=$(wc -l <"$tmp/rows") &&
		echo "ok: $p: the same $n options in --help and $p.1"
	# each command with options on the page: as its --help lists them
	sed -n 's/^\.SS "\(.*\)"$/\1/p' "$page" | sort -u >"$tmp/cmds"
	while read -r c; do
		page_part "$page" "$c" | page_rows >"$tmp/rows"
		[ -s "$tmp/rows" ] || continue
		words=$(echo "$c" | sed 's/\\-/-/g')   # the page writes - as \-
		# shellcheck disable=SC2086
		"$BIN/$p" $words --help >"$tmp/out" 2>&1 ||
			{ fail "$p $words --help: exit $?"; continue; }
		help_rows <"$tmp/out" >"$tmp/help"
		same "$p $words" "$tmp/help" "$tmp/rows" &&
			echo "ok: $p $words: the same $(wc -l <"$tmp/rows") options in --help and the page"
	done <"$tmp/cmds"
done

# qpaced.conf(5): every option of qpaced but -c, --check, --help and its kin is a key of the
# file
page=$tmp/qpaced.conf.5
"$BIN/qpaced" --help-man-conf >"$page" || fail "qpaced --help-man-conf: exit $?"
render "$page"
"$BIN/qpaced" --help | help_rows | grep -vxE 'config|check|help|version|help-params' >"$tmp/help"
page_keys <"$page" >"$tmp/keys"
same "qpaced.conf.5" "$tmp/help" "$tmp/keys" &&
	echo "ok: qpaced.conf.5: a key for each of qpaced's $(wc -l <"$tmp/keys") settings"

[ "$fails" = 0 ] && echo "man_check: ok" || echo "man_check: $fails failed"
[ "$fails" = 0 ]
