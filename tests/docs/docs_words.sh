#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The docs narrate no history (scripts/docs-words.sh): README.md and docs/*.md pass, and
# the check can fail: on copies, each kind of history word is found with its line, and
# what only looks like one (an anchor, a key in hex, a version) is not.
#   tests/docs/docs_words.sh
cd "$(dirname "$0")/../.." || exit 1
script=scripts/docs-words.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-words-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The check itself.
if out=$(sh "$script" 2>&1); then echo "ok: $out"; else
	echo "$out"
	fail "README.md or docs/ narrate history"
fi

mkdir -p "$tmp/docs"
# found: WHAT LINE: the line is refused, and the report names line 2
found() {
	printf 'A line of reference.\n%s\n' "$2" >"$tmp/docs/p.md"
	if out=$(sh "$script" -C "$tmp" docs/p.md 2>&1); then
		fail "$1 passed: $2"
	elif echo "$out" | grep -q '^docs/p.md:2: '; then
		echo "ok: $1: $(echo "$out" | grep "^docs/p.md:2:" | cut -c1-90)"
	else
		fail "$1: not reported on line 2: $out"
	fi
}
# passes: WHAT LINE: the line is not refused
passes() {
	printf 'A line of reference.\n%s\n' "$2" >"$tmp/docs/p.md"
	if out=$(sh "$script" -C "$tmp" docs/p.md 2>&1); then echo "ok: $1 passes"; else
		fail "$1 refused: $out"
	fi
}
found "session" "Measured in the fifth session, at load 2."
found "sitting" "Two sittings agree."
found "merge" "After vt4's merge the loop keeps 2 ms."
found "branch" "The same on this branch."
found "no longer" "An empty poll no longer receives."
found "now" "The default is now 20us."
found "was tried" "A calendar queue was tried."
found "the issue's" "The issue's target is met."
found "an issue number" "It fixes #16."
found "issue N" "As issue 12 asked."
found "a commit hash" "Built at e448992 and run twice."
found "a full hash" "commit 0123456789abcdef0123456789abcdef01234567 had it"
found "a date" "Four runs on 2026-12-03, idle."
found "today" "The machine was idle today."
passes "an anchor" "See [the table](performance.md#16-senders) and (#12-rounds)."
passes "a 32-digit key" "openssl rand -hex 16 gives 00112233445566778899aabbccddeeff."
passes "a plain number" "10000000 frames, 2500000 bytes."
passes "a hex word" "The deadbeef pattern and 0x000011 QPN."
passes "knowledge" "Nowhere, snowy, sessionless-free words: known, merger-free."
passes "a code span" "The program stamps t = max(\`now\`, tstamp)."
printf 'Text.\n\n    qp 0x1: the gate enforces its rate from now on\n\n```\nnow merged\n```\n' >"$tmp/docs/p.md"
if sh "$script" -C "$tmp" docs/p.md >/dev/null 2>&1; then echo "ok: words in code blocks pass"; else
	fail "a word in a code block was refused"
fi
printf 'Text.\n\n```\nRESULT 2026-12-03 run\n```\n' >"$tmp/docs/p.md"
if sh "$script" -C "$tmp" docs/p.md >/dev/null 2>&1; then fail "a date in a code block passed"; else
	echo "ok: a date in a code block is found"
fi

# the allowlist is per file
mkdir -p "$tmp/docs"
printf 'Work on a branch of your own (git switch -c NAME).\n' >"$tmp/docs/contributing.md"
if sh "$script" -C "$tmp" docs/contributing.md >/dev/null 2>&1; then
	echo "ok: contributing.md may say git branch"
else
	fail "the allowlist did not let contributing.md's git branch through"
fi
cp "$tmp/docs/contributing.md" "$tmp/docs/other.md"
if sh "$script" -C "$tmp" docs/other.md >/dev/null 2>&1; then
	fail "another page may say branch"
else
	echo "ok: another page may not"
fi

# The code's comments narrate no history either: no issue numbers, no sittings or
# sessions by their order, no run dates, in the sources, scripts and Makefile (the
# checks' own word lists excepted).
src_history='issues? #?[0-9]+|(^|[ (])#[0-9]{1,2}([^0-9a-zA-Z_]|$)|[^a-z]sittings?[^a-z]|(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) session|20[0-9][0-9]-[01][0-9]-[0-3][0-9]'
hits=$(grep -rnIiE "$src_history" agent verbs switchsim include bench tests lib host sim scripts dist \
	Makefile 2>/dev/null | grep -vE '^(scripts/(docs-words|help-check)\.sh|tests/docs/docs_words\.sh):' |
	grep -vE '^tests/fuzz/corpus/|^tests/.*/testdata/')
if [ -n "$hits" ]; then
	echo "$hits"
	fail "comments in the code narrate history (docs/contributing.md, \"Docs\")"
else
	echo "ok: no issue numbers, sittings or run dates in the code's comments"
fi

[ "$fails" = 0 ] && echo "docs_words: ok"
[ "$fails" = 0 ]
