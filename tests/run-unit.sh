#!/bin/sh
# Run cmocka test binaries; print each one's output, then one summary line.
#   tests/run-unit.sh BIN...
passed=0
failed=0
failed_names=""
for t in "$@"; do
	echo "=== $t"
	if "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $(basename "$t")"
	fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || { echo "failed:$failed_names" >&2; exit 1; }
