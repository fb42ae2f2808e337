#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every tracked source file (C, C++, shell, Python, make) names its license on one of its
# first two lines (LICENSE). Prints each file that does not and exits 1; part of `make test`.
#   scripts/spdx-check.sh
set -eu
cd "$(dirname "$0")/.."
id='SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause'
bad=0
n=0
for f in $(git ls-files -- '*.c' '*.h' '*.cc' '*.sh' '*.py' '*.inc' 'Makefile' '*/Makefile' \
		'tests/vm/init' '.ci/run' | grep -v '^tests/fuzz/corpus/'); do
	[ -f "$f" ] || continue
	n=$((n + 1))
	if ! head -n 2 "$f" | grep -qF "$id"; then
		echo "$f: no '$id' on its first two lines" >&2
		bad=$((bad + 1))
	fi
done
if [ "$bad" != 0 ]; then
	echo "spdx-check: $bad of $n source files lack the license line (see LICENSE)" >&2
	exit 1
fi
echo "spdx-check: $n source files name their license"
