#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Run each libFuzzer binary for a bounded time, its working corpus (build/fuzz/corpus-NAME)
# seeded with the checked-in one (tests/fuzz/corpus/NAME/); any crash fails the run.
#   tests/fuzz/run.sh SECONDS BIN...
# FUZZ_RUNS=N stops a target after N executions as well (make fuzz-long). FUZZ_JOBS=J runs
# J targets at a time (default 1; `make test` runs 2, one per core: each target is one
# single-threaded process), each target's report printed whole, in the order given. Each
# target's line gives its executions and executions per second; its dictionary is
# tests/fuzz/NAME.dict, else the one of its first word (ctl_stream: ctl.dict).
secs=$1
shift
jobs=${FUZZ_JOBS:-1}
case $jobs in ''|*[!0-9]*|0) echo "tests/fuzz/run.sh: FUZZ_JOBS '$jobs': not a count >= 1" >&2; exit 2;; esac

# one BIN: its report into BIN.report, exit 0 or 1
one() {
	bin=$1
	name=$(basename "$bin" | sed 's/^fuzz_//')
	corpus="$(dirname "$bin")/corpus-$name"
	mkdir -p "$corpus"
	if [ -d "tests/fuzz/corpus/$name" ]; then
		cp -n tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null
	fi
	dict="tests/fuzz/$name.dict"
	[ -f "$dict" ] || dict="tests/fuzz/${name%%_*}.dict"
	dictarg=""
	[ -f "$dict" ] && dictarg="-dict=$dict"
	runs=""
	[ -n "${FUZZ_RUNS:-}" ] && runs="-runs=$FUZZ_RUNS"
	{
		echo "=== $bin ($secs s${FUZZ_RUNS:+ or $FUZZ_RUNS runs})"
		# shellcheck disable=SC2086
		if "$bin" -max_total_time="$secs" $runs -max_len=4096 $dictarg -print_final_stats=1 \
			-artifact_prefix="$(dirname "$bin")/crash-$name-" "$corpus" 2> "$bin.log"; then
			execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$bin.log")
			rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$bin.log")
			echo "$name: $execs executions, $rate/s, $(ls "$corpus" | wc -l) corpus inputs"
		else
			echo "FAIL: $bin (see $bin.log)"
			tail -30 "$bin.log"
			exit 1
		fi
	} > "$bin.report" 2>&1
}

rc=0
failed=""
# batches of $jobs (the targets run equally long): start them, then report in order
while [ $# -gt 0 ]; do
	batch=""
	n=0
	while [ $# -gt 0 ] && [ $n -lt "$jobs" ]; do
		one "$1" &
		batch="$batch $1:$!"
		n=$((n + 1))
		shift
	done
	for e in $batch; do
		bin=${e%:*}
		wait "${e##*:}" || { rc=1; failed="$failed $bin"; }
		cat "$bin.report"
		rm -f "$bin.report"
	done
done
[ -z "$failed" ] || echo "FAILED fuzz targets:$failed"
exit $rc
