#!/bin/sh
# Run each libFuzzer binary for a bounded time, its working corpus (build/fuzz/corpus-NAME)
# seeded with the checked-in one (tests/fuzz/corpus/NAME/); any crash fails the run.
#   tests/fuzz/run.sh SECONDS BIN...
# FUZZ_RUNS=N stops a target after N executions as well (make fuzz-long). Each target's
# line gives its executions and executions per second; its dictionary is tests/fuzz/
# NAME.dict, else the one of its first word (ctl_stream: ctl.dict).
secs=$1
shift
rc=0
for bin in "$@"; do
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
		rc=1
	fi
done
exit $rc
