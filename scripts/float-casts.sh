#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every floating -> integer conversion (explicit casts and implicit ones) in C files, from
# clang's AST: FILE:LINE: the source line. The audit of input-derived conversions
# (docs/testing.md) starts from this list; a conversion of a value from outside must go
# through qp_u64_round_sat (qpace/units.h) or be bounded before it.
#
#   scripts/float-casts.sh [FILE...]   default: agent/ agent/cc/ agent/credit/ switchsim/
#                                      verbs/ lib/ host/
set -eu
[ $# -gt 0 ] || set -- agent/*.c agent/cc/*.c agent/credit/*.c switchsim/*.c verbs/*.c \
	lib/*.c host/*.c
for f in "$@"; do
	clang -std=c11 -D_GNU_SOURCE -Iinclude -Iagent -Iagent/cc -Iverbs -Iswitchsim \
		-fsyntax-only -fno-color-diagnostics -Xclang -ast-dump "$f" 2>/dev/null |
	awk '
	# A node line names its range first: <FILE:L:C, ...>, <line:L:C, ...> or <col:C>;
	# the file is said only when it changes. System headers (macros such as "true" are
	# spelled there) do not move the position in our own files.
	{
		if (match($0, /<[^<>]*>/)) {
			r = substr($0, RSTART + 1, RLENGTH - 2)
			sub(/,.*/, "", r)
			if (r ~ /^line:[0-9]+:/) { split(r, a, ":"); line = a[2] }
			else if (r ~ /^[^<\/][^:]*:[0-9]+:[0-9]+$/) {
				n = split(r, a, ":"); file = a[1]; line = a[2]
			}
		}
	}
	/FloatingToIntegral/ && file != "" { print file ":" line }' | sort -u
done | sort -u -t: -k1,1 -k2,2n | while IFS=: read -r file line; do
	printf '%s:%s: %s\n' "$file" "$line" "$(sed -n "${line}p" "$file" | sed 's/^[[:space:]]*//')"
done
