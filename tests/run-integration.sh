#!/bin/sh
# Run tests/integration/*.sh. They need root (network namespaces); without root they are
# skipped with a message, never silently.
#   tests/run-integration.sh BUILD_DIR
build=${1:-build}
passed=0
failed=0
skipped=0
for t in tests/integration/*.sh; do
	[ -e "$t" ] || continue
	if [ "$(id -u)" != 0 ]; then
		echo "skip $t (needs root)"
		skipped=$((skipped + 1))
		continue
	fi
	echo "=== $t"
	if BUILD="$build" sh "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
