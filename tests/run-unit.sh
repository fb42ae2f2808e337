#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Run cmocka test binaries; print each one's output, then one summary line.
#   tests/run-unit.sh BIN...
# A binary that fails is run once more (QPACE_TEST_RETRY=0: never): a few of them run real
# processes against real clocks (the soft hosts through a real qpace-switch, the timers),
# where a stall of a shared 2-core machine can push one figure past its margin. A pass on
# the second run counts but is named at the end ("flaky"), with the first run's output
# above it. A sanitizer report (ASan, LSan, UBSan) is never retried; nor is a binary that
# failed twice.
retry=${QPACE_TEST_RETRY:-1}
passed=0
failed=0
failed_names=""
flaky_names=""
out=$(mktemp /tmp/qpace-unit.XXXXXX)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
	echo "=== $t"
	"$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	if [ $rc != 0 ] && [ "$retry" != 0 ] &&
	   ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$out"; then
		echo "=== $t failed: running it once more (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
		"$t"
		rc=$?
		[ $rc = 0 ] && flaky_names="$flaky_names $(basename "$t")"
	fi
	if [ $rc = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $(basename "$t")"
	fi
done
echo "unit: $passed passed, $failed failed"
[ -z "$flaky_names" ] || echo "unit: flaky (failed, then passed):$flaky_names"
[ "$failed" -eq 0 ] || { echo "unit: FAILED:$failed_names" >&2; exit 1; }
