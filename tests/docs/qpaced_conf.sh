#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The example configuration (dist/qpaced.conf, installed as
# /etc/qpace/qpaced.conf) loads: qpaced --check -c FILE exits 0. The same file with one
# bad line stops with FILE:LINE, the key, the value and exit 2; a key a file gives twice
# too; and the command line overrides the file.
#   BUILD=build tests/docs/qpaced_conf.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
Q=${BUILD:-build}/bin/qpaced
EX=dist/qpaced.conf
tmp=$(mktemp -d /tmp/qpace-conf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

out=$("$Q" --check -c "$EX" 2>&1) && echo "ok: $EX loads: $out" || fail "$EX: $out"
# every line that sets a key is a key qpaced has (a typo would have failed above), and
# the commented settings load as well once uncommented (but ecn-mark, which needs
# enforce observe or tc)
sed 's/^# \([a-z-]* = \)/\1/' "$EX" | grep -v '^ecn-mark ' >"$tmp/all.conf"
out=$("$Q" --check -c "$tmp/all.conf" 2>&1) && echo "ok: its commented settings load too" ||
	fail "the commented settings: $out"

expect() {  # expect WANT FILE-ARGS...: exit 2 and WANT in the message
	want=$1
	shift
	out=$("$Q" --check "$@" 2>&1)
	rc=$?
	if [ "$rc" = 2 ] && echo "$out" | grep -qF -- "$want"; then
		echo "ok: $(echo "$out" | head -1)"
	else
		fail "qpaced --check $*: exit $rc: $out (wanted exit 2 and '$want')"
	fi
}
sed 's/^credits = off/credits = none/' "$EX" >"$tmp/bad.conf"
line=$(grep -n '^credits' "$EX" | cut -d: -f1)
expect "$tmp/bad.conf:$line: credits: \"none\": one of: off, ia ('none' is written 'off')" \
	-c "$tmp/bad.conf"
{ cat "$EX"; echo "cc = dcqcn"; } >"$tmp/twice.conf"
expect "cc: given twice in this file" -c "$tmp/twice.conf"
printf 'max-qps = 0\n' >"$tmp/range.conf"
expect "$tmp/range.conf:1: max-qps: \"0\": not a whole number in 1..65536" -c "$tmp/range.conf"
out=$("$Q" --check -c "$EX" --cc dcqcn 2>&1)
case $out in *"cc dcqcn"*) echo "ok: the command line overrides the file: $out" ;;
	*) fail "--cc over the file: $out" ;; esac

[ "$fails" = 0 ] && echo "qpaced_conf: ok" || echo "qpaced_conf: $fails failed"
[ "$fails" = 0 ]
