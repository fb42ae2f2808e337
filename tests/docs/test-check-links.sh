#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Tests tests/docs/check-links.sh on trees made here: one with good links of every kind and
# one dead link of every kind (the output must name exactly those, as FILE:LINE: target,
# with exit 1), the same tree with the dead links removed (silent, exit 0), and a missing
# file (exit 2).
#   tests/docs/test-check-links.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check-links.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-links-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$tmp/t/docs" "$tmp/t/img"
: >"$tmp/t/img/plot.png"
cat >"$tmp/t/README.md" <<'MD'
# Top

Good: [a file](docs/a.md), [an anchor](docs/a.md#a-heading--with-a-dash), [here](#top),
![a picture](img/plot.png), [a folder](docs/), [from the root](/docs/a.md#options),
[a titled one](docs/a.md "the doc"), <https://example.com/x> and
[the web](https://example.com/missing.md), [mail](mailto:a@example.com).
Dead: [a file](docs/missing.md) and [an anchor](docs/a.md#nope) on one line.
Not links: `[code](nowhere.md)` and ``[double](nowhere.md)``.

```sh
echo "[fenced](nowhere.md)"
```

    [indented](nowhere.md)

[ref]: docs/gone.md
[good ref]: docs/a.md
MD
cat >"$tmp/t/docs/a.md" <<'MD'
# A heading — with a dash

## Options

## Options

## The agent (`qpaced`): [a link](../README.md) in it

~~~
# not a heading
~~~

Back: [top](../README.md#top), [the second](a.md#options-1), [code](#the-agent-qpaced-a-link-in-it).
Dead: [a third](a.md#options-2), [fenced](#not-a-heading), [case](#Options).
MD

out=$(sh "$check" -C "$tmp/t" 2>"$tmp/err")
rc=$?
want="README.md:7: docs/missing.md
README.md:7: docs/a.md#nope
README.md:16: docs/gone.md
docs/a.md:14: a.md#options-2
docs/a.md:14: #not-a-heading
docs/a.md:14: #Options"
[ "$rc" = 1 ] || fail "dead links: exit $rc, want 1"
[ "$out" = "$want" ] || fail "dead links: got
$out
want
$want"
grep -q "6 dead link" "$tmp/err" || fail "no count on stderr: $(cat "$tmp/err")"

# The same tree without its dead links: silent, exit 0.
sed -i -e '/^Dead:/d' -e '/^\[ref\]:/d' "$tmp/t/README.md" "$tmp/t/docs/a.md"
out=$(sh "$check" -C "$tmp/t" 2>&1)
rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] || fail "good links: exit $rc, output: $out"

# Only the named files are checked; a missing one is an error of its own.
echo "[dead](nope.md)" >"$tmp/t/docs/b.md"
out=$(sh "$check" -C "$tmp/t" README.md 2>&1)
[ $? = 0 ] || fail "README.md alone: $out"
out=$(sh "$check" -C "$tmp/t" 2>/dev/null)
[ "$out" = "docs/b.md:1: nope.md" ] || fail "docs/*.md by default: $out"
sh "$check" -C "$tmp/t" missing.md 2>/dev/null
[ $? = 2 ] || fail "a missing file: want exit 2"

if [ "$fails" -eq 0 ]; then
	echo "test-check-links: ok"
else
	echo "test-check-links: $fails failure(s)"
	exit 1
fi
