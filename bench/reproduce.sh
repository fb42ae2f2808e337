#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make reproduce: every reproduction at full size (qpace-bench reproduce NAME), a progress
# line per experiment, results in results/reproduce/NAME/ (its log beside), then the
# tables pasted into docs/reproductions.md (scripts/repro_docs.sh).
#   sh bench/reproduce.sh [BUILD] [NAME...]
# Environment: R (results folder, default results/reproduce), ARGS (more options for
# each run, e.g. --quick), DOC (the page to paste into; "none": no pasting).
# Without names, two lanes run side by side (one core each, about equal CPU time:
# docs/reproductions.md "Time"): ia-tcp then idcc, and ffdtcp, hpcc, acc.
set -u
BUILD=${1:-build}
[ $# -gt 0 ] && shift
B=$BUILD/bin/qpace-bench
R=${R:-results/reproduce}
ARGS=${ARGS:-}
DOC=${DOC:-docs/reproductions.md}
mkdir -p "$R"
t_all=$(date +%s)

one() {   # one NAME: run it, say how it went; non-zero when it failed
	t0=$(date +%s)
	echo "reproduce: $1 started (log: $R/$1.log)"
	# shellcheck disable=SC2086 # ARGS: words
	if "$B" reproduce "$1" $ARGS -o "$R/$1" >"$R/$1.log" 2>&1; then
		t=$R/$1/table.txt
		echo "reproduce: $1 done in $(( $(date +%s) - t0 )) s: $(grep -c '^  yes' "$t") agree," \
		     "$(grep -c '^  partly' "$t") partly, $(grep -c '^  no' "$t") disagree," \
		     "$(grep -c '^  not run' "$t") not run"
	else
		echo "reproduce: $1 FAILED after $(( $(date +%s) - t0 )) s:" >&2
		tail -5 "$R/$1.log" >&2
		return 1
	fi
}
lane() {  # lane NAME...: one after the other
	rc=0
	for n in "$@"; do one "$n" || rc=1; done
	return $rc
}

fail=0
if [ $# -gt 0 ]; then
	lane "$@" || fail=1
else
	lane ia-tcp idcc & p1=$!
	lane ffdtcp hpcc acc & p2=$!
	wait $p1 || fail=1
	wait $p2 || fail=1
fi
echo "reproduce: done in $(( $(date +%s) - t_all )) s; tables in $R/NAME/table.md"
[ $fail = 0 ] && [ "$DOC" != none ] && sh scripts/repro_docs.sh "$R" "$DOC"
exit $fail
