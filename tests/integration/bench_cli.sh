#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench's bad input: wrong flags name the flag, the value and the range and exit 2
# with the usage; an unreachable switch is one clear line and exit 1.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
fail=0

expect_status() {  # expect_status STATUS "WANT" ARGS...: that exit status and WANT in stderr
	status=$1 want=$2
	shift 2
	err=$("$B" "$@" 2>&1 >/dev/null)
	got=$?
	[ "$got" = "$status" ] || { echo "FAIL: qpace-bench $*: exit $got, not $status" >&2; fail=1; return; }
	case $err in
	*"$want"*) echo "ok: qpace-bench $* -> $(echo "$err" | head -1)" ;;
	*) echo "FAIL: qpace-bench $*: '$want' not in: $err" >&2; fail=1 ;;
	esac
}
expect() {  # expect "WANT" ARGS...: a usage error
	expect_status 2 "$@"
}

expect "unknown command 'frobnicate'" frobnicate
expect "-N/--senders '99': not a whole number in 1..63" incast -N 99
expect "-s/--size '12X'" write_bw -s 12X
# The clocks: virtual time takes what real time cannot, and nothing of a network.
expect "--clock virtual takes 1..127" incast -N 99
expect "-N/--senders '200': not a whole number in 1..127" incast --clock virtual -N 200
expect "--rate '20G': above 10G in real time" incast --rate 20G
expect "--clock 'later': one of: real, virtual" incast --clock later
expect "--clock virtual builds its own switch" incast --clock virtual --switch 127.0.0.1:7000
expect "--clock virtual runs every host in this process" incast --clock virtual --attach 127.0.0.1:7000 --ip 10.0.0.2 10.0.0.1
expect "--cc" incast --cc reno
expect "--credits 'maybe': one of: off, ia" incast --credits maybe
expect "try: qpace-bench incast --help" incast --bogus
expect "'none' is written 'off'" incast --credits none
expect "--icrc 'skip': one of: on, off ('skip' is written 'off')" run --gen star --workload x --icrc skip
expect "unknown option '-t'" run -t x.topo --workload x
expect "unknown option '-k'" topo fat-tree -k 4
expect "unknown command" frobnicate
expect "unknown option '--bogus'" --bogus
# Nothing listens on the named switch: one line that says so.
expect_status 1 "nothing listens there" incast --switch 127.0.0.1:29999 -N 2 -s 4K -R 1
lines=$("$B" incast --switch 127.0.0.1:29999 -N 2 2>&1 | wc -l)
[ "$lines" -eq 1 ] || { echo "FAIL: unreachable switch printed $lines lines" >&2; fail=1; }
"$B" --help | grep -q "incast" || { echo "FAIL: --help" >&2; fail=1; }
"$B" --version | grep -q "^qpace-bench [0-9]" || { echo "FAIL: --version" >&2; fail=1; }
[ "$fail" = 0 ] && echo "bench_cli: ok"
exit "$fail"
