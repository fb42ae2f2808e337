#!/bin/sh
# Run tests/integration/*.sh. They need root (network namespaces); without root they are
# skipped with a message, never silently.
#   tests/run-integration.sh BUILD_DIR
# On a sanitizer build (make integration-san) the programs' ASan/UBSan reports go to files
# of their own, one per process, so a report from a daemon that the test kills at the end is
# not lost in its log: any report fails the test that produced it, and is printed.
build=${1:-build}
passed=0
failed=0
skipped=0
san=$(mktemp -d /tmp/qpace-san.XXXXXX)
trap 'rm -rf "$san"' EXIT
export ASAN_OPTIONS="log_path=$san/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for t in tests/integration/*.sh; do
	[ -e "$t" ] || continue
	if [ "$(id -u)" != 0 ]; then
		echo "skip $t (needs root)"
		skipped=$((skipped + 1))
		continue
	fi
	echo "=== $t"
	BUILD="$build" sh "$t"
	rc=$?
	for r in "$san"/*; do
		[ -e "$r" ] || continue
		echo "FAIL: $t: sanitizer report $(basename "$r"):"
		sed 's/^/  /' "$r"
		rm -f "$r"
		rc=1
	done
	if [ $rc = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
