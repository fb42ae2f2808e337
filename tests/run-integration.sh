#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Run tests/integration/*.sh. They need root (network namespaces); without root they are
# skipped with a message, never silently.
#   tests/run-integration.sh BUILD_DIR
# On a sanitizer build (make integration-san) the programs' ASan/UBSan reports go to files
# of their own, one per process, so a report from a daemon that the test kills at the end is
# not lost in its log: any report fails the test that produced it, and is printed.
# A script that fails is run once more (QPACE_TEST_RETRY=0: never): many of these run real
# processes against real clocks on a shared 2-core machine, where a stall of the machine
# can push one figure past its margin. A pass on the second run counts as passed but is
# named at the end ("flaky"), with the first run's output above it; a sanitizer report
# is never retried. The failed and flaky names are printed last, since a CI log is often
# read from its tail.
build=${1:-build}
retry=${QPACE_TEST_RETRY:-1}
passed=0
failed=0
skipped=0
failed_list=
flaky_list=
san=$(mktemp -d /tmp/qpace-san.XXXXXX)
trap 'rm -rf "$san"' EXIT
export ASAN_OPTIONS="log_path=$san/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# run_one SCRIPT: 0 passed, 1 failed, 2 failed with a sanitizer report.
run_one() {
	BUILD="$build" sh "$1"
	rc=$?
	[ $rc = 0 ] || rc=1
	for r in "$san"/*; do
		[ -e "$r" ] || continue
		echo "FAIL: $1: sanitizer report $(basename "$r"):"
		sed 's/^/  /' "$r"
		rm -f "$r"
		rc=2
	done
	return $rc
}

for t in tests/integration/*.sh; do
	[ -e "$t" ] || continue
	if [ "$(id -u)" != 0 ]; then
		echo "skip $t (needs root)"
		skipped=$((skipped + 1))
		continue
	fi
	echo "=== $t"
	run_one "$t"
	rc=$?
	if [ $rc = 1 ] && [ "$retry" != 0 ]; then
		echo "=== $t failed: running it once more (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
		run_one "$t"
		rc=$?
		[ $rc = 0 ] && flaky_list="$flaky_list $t"
	fi
	if [ $rc = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_list="$failed_list $t"
	fi
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
for t in $flaky_list; do echo "integration: flaky (failed, then passed) $t"; done
for t in $failed_list; do echo "integration: FAILED $t"; done
[ "$failed" -eq 0 ]
