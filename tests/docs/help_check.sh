#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Help texts carry no run results (scripts/help-check.sh): every program's --help in BUILD
# passes, and the check can fail: the texts it exists for are refused, and defaults,
# ranges and bounds are not.
#   BUILD=build tests/docs/help_check.sh
cd "$(dirname "$0")/../.." || exit 1
script=scripts/help-check.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/help-check-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if out=$(sh "$script" "${BUILD:-build}" 2>&1); then echo "ok: $out"; else
	echo "$out"
	fail "a help text carries run results"
fi

found() {   # found WHAT LINE
	printf '  --x N     %s\n' "$2" >"$tmp/h"
	if sh "$script" --text "$tmp/h" >"$tmp/out" 2>&1; then fail "$1 passed: $2"; else
		echo "ok: $1: $(cut -c1-80 "$tmp/out")"
	fi
}
passes() {   # passes WHAT LINE
	printf '  --x N     %s\n' "$2" >"$tmp/h"
	if sh "$script" --text "$tmp/h" >"$tmp/out" 2>&1; then echo "ok: $1 passes"; else
		fail "$1 refused: $(cat "$tmp/out")"
	fi
}
found "runs of" "with yes the incast overflowed the buffer in 4 runs of 4"
found "of N runs" "it held in 6 of 6 runs"
found "a ratio" "1.13-1.16x less CPU on the 128-host leaf-spine"
found "x faster" "each lane on a thread: 2x faster on 2 cores"
found "a range of ratios" "where no is 0.73-0.75 of it"
found "about half" "in about half the wall time of one lane"
found "measured" "it measured no better, so it is off"
passes "a range" "1..100 (default 5)"
passes "a bound" "at most 2x the line rate, 0 = off"
passes "units" "4.096us x 2^EXP (perftest -u; default 14)"
passes "a count" "repeat a run the machine stalled up to N times (default 1)"

[ "$fails" = 0 ] && echo "help_check: ok"
[ "$fails" = 0 ]
