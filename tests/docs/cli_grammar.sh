#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# One command-line grammar for every program in BUILD/bin (make docs-check):
#   - PROG --version prints "PROG VERSION" (the VERSION file) and exits 0;
#   - an unknown option is a usage error: exit 2;
#   - no option's value is spelled yes|no, true|false or skip (on|off for a switch);
#   - a short flag means one thing: across every program and command, a letter stands for
#     one long option (perftest's -n is a count of iterations wherever it appears: iters,
#     iterations, events, frames; -q the QPs: qp, qps).
#   BUILD=build tests/docs/cli_grammar.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
BIN=${BUILD:-build}/bin
version=$(cat VERSION)
tmp=$(mktemp -d /tmp/qpace-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
n=0

for b in "$BIN"/*; do
	[ -x "$b" ] || continue
	p=$(basename "$b")
	n=$((n + 1))
	out=$("$b" --version 2>&1)
	rc=$?
	[ "$rc" = 0 ] && [ "$out" = "$p $version" ] || fail "$p --version: exit $rc, '$out'"
	"$b" --no-such-option >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "$p --no-such-option: exit $rc, not 2"
	"$b" --help >"$tmp/$p.help" 2>&1 || true
done
[ "$n" -gt 0 ] || { echo "cli_grammar: no programs in $BIN (make first)" >&2; exit 1; }
echo "ok: $n programs: --version prints '<name> $version', an unknown option exits 2"

# every command's --help too
Q=$BIN/qpace-bench
for c in write_bw send_bw write_lat incast compare sweep run reproduce; do
	"$Q" $c --help >"$tmp/qpace-bench.$c.help" 2>&1
done
for k in star dumbbell leaf-spine fat-tree two-site; do
	"$Q" topo $k --help >"$tmp/qpace-bench.topo.$k.help" 2>&1
done
for c in top list show status; do
	"$BIN/qpacectl" $c --help >"$tmp/qpacectl.$c.help" 2>&1
done

# the rows: "FILE -X --name METAVAR"
for f in "$tmp"/*.help; do
	sed -nE 's/^  (-[A-Za-z0-9], |    )--([A-Za-z0-9_-]+)( ([^ ]+))?.*/\1 \2 \4/p' "$f" |
		sed "s|^|$(basename "$f" .help) |"
done >"$tmp/rows"

bad=$(awk '$NF ~ /(^|[|])(yes|no|true|false|skip)([|]|$)/ { print }' "$tmp/rows")
[ -z "$bad" ] || fail "values spelled otherwise than on|off: $bad"

# a letter, the long names it stands for (synonyms folded)
awk '$2 ~ /^-.,$/ { l = substr($2, 2, 1); name = $3
	if (l == "n" && name ~ /^(iters|iterations|events|frames)$/) name = "iterations"
	if (l == "q" && name ~ /^(qp|qps)$/) name = "qps"
	print l, name, $1 }' "$tmp/rows" | sort -u >"$tmp/shorts"
awk '{ print $1, $2 }' "$tmp/shorts" | sort -u | awk '{ c[$1]++; v[$1] = v[$1] " --" $2 }
	END { for (l in c) if (c[l] > 1) print "-" l ":" v[l] }' >"$tmp/clash"
if [ -s "$tmp/clash" ]; then
	fail "a short flag with more than one meaning:"
	while read -r line; do
		l=$(echo "$line" | cut -c2)
		echo "    $line ($(awk -v l="$l" '$1 == l { printf "%s ", $3 }' "$tmp/shorts"))" >&2
	done <"$tmp/clash"
else
	echo "ok: $(cut -d' ' -f1 "$tmp/shorts" | sort -u | wc -l) short flags, each one meaning" \
		"across $(cut -d' ' -f1 "$tmp/rows" | sort -u | wc -l) programs and commands"
fi

[ "$fails" = 0 ] && echo "cli_grammar: ok" || echo "cli_grammar: $fails failed"
[ "$fails" = 0 ]
