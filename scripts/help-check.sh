#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Help texts say what an option does, never what a run gave (docs/contributing.md, "Docs"):
# every program's --help (each qpace-bench COMMAND's too, qpacectl help, qpaced
# --help-params all) is searched for run results. Prints each as PROGRAM: 'MATCH': the line,
# and exits 1 when there is one.
#
#   scripts/help-check.sh [BUILD]          (default build: BUILD/bin/*)
#   scripts/help-check.sh --text FILE...   check text files instead (for the tests)
#
# What is refused:
#   4 runs of 4, in 6 of 6 runs, 3 runs     counts of runs: a result
#   1.13-1.16x less, 2x faster, 0.73-0.75   a ratio or a range of ratios measured
#   faster, slower, about half|twice        a comparison measured
#   measured, sitting, session              a run's story
# Bounds and defaults are not results: "1..100", "(default 5)", "at most 2x the rate".
set -u
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/help-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# scan NAME FILE: the refused patterns, one report per line
scan() {
	awk -v name="$1" '
		function report(what) { printf "%s: %s: %s\n", name, what, $0; bad++ }
		{
			l = tolower($0)
			if (match(l, /[0-9]+ runs?( of [0-9]+)?|in [0-9]+ of [0-9]+|[0-9]+ of [0-9]+ runs/))
				report("\047" substr(l, RSTART, RLENGTH) "\047 (a count of runs)")
			else if (match(l, /[0-9.]+(-[0-9.]+)?(x|×) (less|more|faster|slower|the|as)/) &&
				 substr(l, 1, RSTART - 1) !~ /(at most|at least|up to|under|over|[<>]) ?$/)
				report("\047" substr(l, RSTART, RLENGTH) "\047 (a measured ratio)")
			else if (match(l, /[0-9]\.[0-9]+-[0-9]+\.[0-9]+/))
				report("\047" substr(l, RSTART, RLENGTH) "\047 (a measured range)")
			else if (match(l, /(^|[^a-z])(faster|slower|measured|sittings?|sessions?|(about|nearly|roughly) (half|twice|a third))([^a-z]|$)/))
				report("\047" substr(l, RSTART, RLENGTH) "\047 (a run\047s story)")
		}
		END { exit bad > 0 }' "$2"
}

if [ "${1:-}" = --text ]; then
	shift
	bad=0
	for f in "$@"; do scan "$f" "$f" || bad=1; done
	exit $bad
fi

BUILD=${1:-${BUILD:-build}}
[ -d "$BUILD/bin" ] || { echo "help-check: no $BUILD/bin (make first)" >&2; exit 2; }
n=0
bad=0
# one NAME COMMAND...: COMMAND's output (stdout and stderr) scanned as NAME
one() {
	name=$1
	shift
	"$@" >"$tmp/out" 2>&1
	n=$((n + 1))
	if [ ! -s "$tmp/out" ]; then
		echo "help-check: $name printed nothing" >&2
		bad=1
		return
	fi
	scan "$name" "$tmp/out" || bad=1
}
for p in "$BUILD"/bin/*; do
	[ -x "$p" ] || continue
	prog=${p##*/}
	case $prog in
	qpacectl) one "qpacectl help" "$p" help ;;
	ns3-incast) one "$prog --help" "$p" --help ;;
	*) one "$prog --help" "$p" --help ;;
	esac
	case $prog in
	qpace-bench)
		for c in $("$p" --help 2>&1 | sed -n 's/^  \([a-z_]*\)  .*/\1/p'); do
			one "qpace-bench $c --help" "$p" "$c" --help
		done ;;
	qpaced) one "qpaced --help-params all" "$p" --help-params all ;;
	esac
done
if [ "$bad" != 0 ]; then
	echo "help-check: help texts carry run results; say what the option does (the figures: docs/figures.md)" >&2
	exit 1
fi
echo "help-check: $n help texts, no run results"
