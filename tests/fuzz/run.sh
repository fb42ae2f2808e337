#!/bin/sh
# Run each libFuzzer binary for a bounded time; any crash fails the run.
#   tests/fuzz/run.sh SECONDS BIN...
# A target's working corpus is build/fuzz/corpus-NAME (it grows there); the inputs checked
# in under tests/fuzz/corpus/NAME/, when there are any, seed it (read, never written).
secs=$1
shift
rc=0
for bin in "$@"; do
	name=$(basename "$bin" | sed 's/^fuzz_//')
	corpus="$(dirname "$bin")/corpus-$name"
	mkdir -p "$corpus"
	dict="tests/fuzz/$name.dict"
	dictarg=""
	[ -f "$dict" ] && dictarg="-dict=$dict"
	seeds=""
	[ -d "tests/fuzz/corpus/$name" ] && seeds="tests/fuzz/corpus/$name"
	echo "=== $bin ($secs s)"
	# shellcheck disable=SC2086
	if "$bin" -max_total_time="$secs" -max_len=2048 $dictarg \
		-artifact_prefix="$(dirname "$bin")/crash-$name-" "$corpus" $seeds 2> "$bin.log"; then
		echo "$(grep -c . "$corpus"/* 2>/dev/null | wc -l) corpus inputs; $(tail -1 "$bin.log")"
	else
		echo "FAIL: $bin (see $bin.log)"
		tail -30 "$bin.log"
		rc=1
	fi
done
exit $rc
