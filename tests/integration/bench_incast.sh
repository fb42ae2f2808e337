#!/bin/sh
# qpace-bench incast end to end on the embedded default: qpace-switch started by the bench,
# 16 emulated RoCEv2 senders to one receiver on a 1 Gb/s, 128 KiB-buffer star.
# Asserts behaviour with honest margins for a noisy 2-core machine (the benchmark reports
# the real figures): with no congestion control the buffer overflows (drops, timeouts);
# with IA credits nothing is dropped; HPCC keeps goodput at >= 70% of the bottleneck's
# payload rate with Jain >= 0.9.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
fail=0

run() {   # run NAME ARGS...: one JSON line into $out
	name=$1
	shift
	out=$("$B" incast -N 16 -s 256K -R 3 -j --base-port 23000 "$@") || {
		echo "bench_incast: $name: qpace-bench failed" >&2
		fail=1
		out=""
	}
	echo "$name: $out"
}
num() {   # num KEY: the value of a top-level number in $out
	echo "$out" | grep -o "\"$1\":[0-9.e+-]*" | head -1 | cut -d: -f2
}
check() {  # check WHAT EXPR
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"; else
		echo "  FAIL: $1 ($2)" >&2
		fail=1
	fi
}

run none --cc none
[ -n "$out" ] && {
	check "none: the buffer overflows" "$(num drops) > 0"
	check "none: retransmission timeouts" "$(num timeouts) > 0"
}
run none+ia --cc none --credits ia
[ -n "$out" ] && {
	check "none+ia: no drops" "$(num drops) == 0"
	check "none+ia: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
}
run hpcc --cc hpcc
[ -n "$out" ] && {
	check "hpcc: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
	check "hpcc: jain >= 0.9" "$(num jain) >= 0.9"
	check "hpcc: every flow done" "$(num flows_done) == $(num flows)"
}
run hpcc+ia --cc hpcc --credits ia
[ -n "$out" ] && check "hpcc+ia: no drops" "$(num drops) == 0"

[ "$fail" = 0 ] && echo "bench_incast: ok"
exit "$fail"
