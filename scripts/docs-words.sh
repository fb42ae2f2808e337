#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The docs are reference, not a log: README.md and docs/*.md may not narrate how the code
# was developed (docs/contributing.md, "Docs"). Prints every line that does, as
# FILE:LINE: 'WORD': the line, and exits 1 when there is one.
#
#   scripts/docs-words.sh [-C DIR] [FILE...]     (default: README.md docs/*.md)
#
# What is refused (case-insensitive, whole words outside code blocks and `code spans`; the
# hashes and dates anywhere), and why:
#   session(s), sitting(s)           who worked when
#   merge(d|s), branch(es)           where the code went, not what it does
#   this turn, was/were tried, tried and, tried since, not kept
#                                    what was tried: a commit message's body
#   no longer, now, until then, the next day, yesterday, today, UTC, this build, main's
#   build|binary|HEAD, against main, the lead, the issue's
#                                    what changed, or when: a figure is true of the code
#                                    as it is, with the command that produces it
#   issue 12, issues #3, #12         issue numbers as history (anchors are '(#name)')
#   7-12 or 40 hex digits with a letter and a digit: a commit hash
#   2026-12-03                       a run's date
#
# ALLOW below lets a use through: FILE, a regular expression its line must match, and the
# reason. Keep it short: a rewrite is nearly always better.
set -u
LC_ALL=C
export LC_ALL

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/docs-args.sh"
for f in "$@"; do
	[ -f "$f" ] || { echo "docs-words: $f: no such file" >&2; exit 2; }
done

# The words (ERE, matched on the lowercased line between non-word characters).
WORDS='sessions?|sittings?|merge[ds]?|merging|branch(es)?|this turn|(was|were) tried|tried (and|since)|not kept|no longer|now|until then|the next day|yesterday|today|utc|this build|main.s (build|binar(y|ies)|head)|against main|the lead|the issue.s|issues? #?[0-9]+'

# FILE<TAB>ERE<TAB>reason
ALLOW='docs/contributing.md	git (switch|branch)|a branch of your own	contributing.md explains working with git
docs/performance.md	autogroup	a Unix session (setsid), whose autogroup the scheduler shares out
docs/testing.md	edge-minimal merge|-merge=1	libFuzzer merges corpora'

awk -v words="$WORDS" -v allow="$ALLOW" '
	BEGIN {
		n = split(allow, rows, "\n")
		for (i = 1; i <= n; i++) {
			split(rows[i], c, "\t")
			afile[i] = c[1]; are[i] = c[2]
		}
		nallow = n
		bad = 0
	}
	FNR == 1 { file = FILENAME; fence = ""; blank = 1; incode = 0 }
	function allowed(line,   i) {
		for (i = 1; i <= nallow; i++)
			if (afile[i] == file && line ~ are[i]) return 1
		return 0
	}
	function report(what) {
		if (allowed(tolower($0))) return
		printf "%s:%d: %s: %s\n", file, FNR, what, $0
		bad++
	}
	{
		l = " " tolower($0) " "
		# code: fenced blocks, and indented ones after a blank line (the output of a program,
		# a variable named now, the -merge=1 of libFuzzer) are not searched for words
		t = $0
		sub(/^ ? ? ?/, "", t)
		if (fence != "") {
			if (index(t, fence) == 1) fence = ""
			code = 1
		} else if (t ~ /^(```|~~~)/) {
			fence = substr(t, 1, 3)
			code = 1
		} else
			code = ($0 ~ /^(    |\t)/ && (blank || incode))
		incode = code
		blank = ($0 ~ /^[ \t]*$/)
		# the words, between non-word characters, outside code and `code spans`
		s = code ? "" : l
		gsub(/`[^`]*`/, "`", s)
		while (match(s, "[^a-z0-9_](" words ")[^a-z0-9_]")) {
			w = substr(s, RSTART + 1, RLENGTH - 2)
			report("\047" w "\047")
			s = substr(s, RSTART + RLENGTH - 1)
			break   # one report a line is enough
		}
		# #12: an issue number (not an anchor: those follow "(" or a file name)
		if (match(l, "(^|[ \t,;:(\\[])#[0-9]+([^0-9a-z_-]|$)") && substr(l, RSTART, 2) != "(#")
			report("an issue number")
		# commit hashes: 7-12 or 40 hex digits, at least one letter and one digit
		s = l
		while (match(s, "[^a-z0-9_][0-9a-f]+[^a-z0-9_]")) {
			h = substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH - 1)
			if ((length(h) >= 7 && length(h) <= 12 || length(h) == 40) &&
			    h ~ /[a-f]/ && h ~ /[0-9]/) {
				report("a commit hash \047" h "\047")
				break
			}
		}
		# a run date
		if (match(l, "[^0-9]20[0-9][0-9]-[01][0-9]-[0-3][0-9][^0-9]"))
			report("a date")
	}
	END {
		if (bad) {
			printf "docs-words: %d lines narrate history (docs/contributing.md, \"Docs\"); " \
			       "say what the code does, with the command behind each figure, or delete the line\n", bad > "/dev/stderr"
			exit 1
		}
	}
' "$@" || exit 1
echo "docs-words: $# files, no history words"
