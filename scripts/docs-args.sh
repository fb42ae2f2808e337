# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the docs' checks that take [-C DIR] [FILE...] (tests/docs/check-links.sh,
# scripts/docs-words.sh): with $root set to the tree's default, it takes -C DIR, changes
# to the tree, and leaves the FILEs in "$@" (default: README.md and docs/*.md). A usage
# error exits 2.
docs_usage() { echo "usage: $0 [-C DIR] [FILE...]" >&2; exit 2; }
if [ "${1:-}" = -C ]; then
	[ $# -ge 2 ] || docs_usage
	root=$2
	shift 2
fi
case ${1:-} in -*) docs_usage ;; esac
cd "$root" || exit 2
if [ $# -eq 0 ]; then
	set -- README.md
	for f in docs/*.md; do
		[ -e "$f" ] && set -- "$@" "$f"
	done
fi
