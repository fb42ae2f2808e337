#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench's perftest-compatible tests between two emulated hosts through qpace-switch,
# invoked as perftest is (same options on both sides, the server address last on the
# client): the result tables carry perftest's headers and a row with the size and count;
# the latency ping-pongs' servers print a row too, the one-sided ones' none.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
P=23200
tmp=$(mktemp -d)
sw=""
fail=0
cleanup() {
	[ -n "$sw" ] && kill "$sw" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$BUILD/bin/qpace-switch" --star 2 --base-port $P --rate 1G --quiet &
sw=$!
sleep 0.3

pair() {  # pair TEST WANT_HEADER ARGS...
	t=$1
	want=$2
	shift 2
	timeout 60 "$B" "$t" --backend soft --attach 127.0.0.1:$P --ip 10.0.0.1 -p 18700 "$@" \
		>"$tmp/server" 2>&1 &
	srv=$!
	timeout 50 "$B" "$t" --backend soft --attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 \
		-p 18700 "$@" 127.0.0.1 >"$tmp/client" 2>&1
	rc=$?
	wait $srv
	if [ $rc -ne 0 ] || ! grep -qF "$want" "$tmp/client"; then
		echo "FAIL: $t: rc $rc" >&2
		cat "$tmp/client" "$tmp/server" >&2
		fail=1
		return
	fi
	echo "ok: $t"
	grep -A1 -F "$want" "$tmp/client"
}

pair write_bw " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]" -n 200
grep -Eq '^ 65536 +200 ' "$tmp/client" || { echo "FAIL: write_bw row" >&2; fail=1; }
pair write_bw "BW peak[Gb/sec]" -n 100 -s 4K --report_gbits --cc hpcc
pair send_bw "BW average[MiB/sec]" -n 200 -s 4K
LAT=" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
pair write_lat "$LAT" -n 200
grep -Eq '^ 2 +200 ' "$tmp/server" || { echo "FAIL: write_lat: no server row" >&2; fail=1; }
pair read_bw "BW average[MiB/sec]" -n 200
grep -Eq '^ 65536 +200 ' "$tmp/client" || { echo "FAIL: read_bw row" >&2; fail=1; }
grep -q "Outstand reads  : 16" "$tmp/client" || { echo "FAIL: read_bw: outstanding reads" >&2; fail=1; }
pair read_bw "BW average[MiB/sec]" -n 100 -s 4K -q 2 -o 4
pair read_bw "BW average[MiB/sec]" -n 20 -a
[ "$(grep -Ec '^ [0-9]+ +20 ' "$tmp/client")" = 23 ] || { echo "FAIL: read_bw -a: not 23 rows" >&2; fail=1; }
pair atomic_bw "MsgRate[Mpps]" -n 500
grep -Eq '^ 8 +500 ' "$tmp/client" || { echo "FAIL: atomic_bw row" >&2; fail=1; }
pair write_bw "BW average[MiB/sec]" -n 100 -b
pair read_lat "$LAT" -n 200
pair atomic_lat "$LAT" -n 200
pair send_lat "$LAT" -n 200
grep -Eq '^ 2 +200 ' "$tmp/server" || { echo "FAIL: send_lat: no server row" >&2; fail=1; }
[ "$fail" = 0 ] && echo "bench_perf: ok"
exit "$fail"
