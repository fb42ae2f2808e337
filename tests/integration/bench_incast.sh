#!/bin/sh
# qpace-bench incast end to end on the embedded default (the demo's setting): qpace-switch
# started by the bench, 16 emulated RoCEv2 senders to one receiver on a 250 Mb/s star with
# 256 KiB of buffer per port and a 32-packet window per QP.
# Asserts behaviour with honest margins (the benchmark reports the real figures):
#   none      the buffer overflows: drops > 0 and retransmission timeouts > 0
#   none+ia   no drops, goodput >= 70% of the bottleneck's payload rate
#   hpcc      goodput >= 70%, Jain >= 0.9, every flow completes
#   hpcc+ia   no drops
# Real time is the premise: a run whose loop the machine stalled for more than 5 ms (a
# loaded shared VM: other processes' time slices) says so and is not judged, since
# nothing it measured is the network's doing. The stall figure is printed either way.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
STALL_NS=5000000
fail=0
judged=0

run() {   # run NAME ARGS...: one JSON line into $out; $ok = judge this run
	name=$1
	shift
	out=$("$B" incast -N 16 -s 256K -R 3 -j --buffer 256K --window 32 --base-port 23000 \
		--no-plots "$@" 2>/dev/null) || {
		echo "bench_incast: $name: qpace-bench failed" >&2
		fail=1
		out=""
	}
	echo "$name: $out"
	ok=0
	[ -n "$out" ] || return
	late=$(num loop_late_max_ns)
	if awk "BEGIN { exit !($late > $STALL_NS) }"; then
		echo "  not judged: the machine stalled the loop for $((late / 1000)) us"
	else
		ok=1
		judged=$((judged + 1))
	fi
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
[ "$ok" = 1 ] && {
	check "none: the buffer overflows" "$(num drops) > 0"
	check "none: retransmission timeouts" "$(num timeouts) > 0"
}
run none+ia --cc none --credits ia
[ "$ok" = 1 ] && {
	check "none+ia: no drops" "$(num drops) == 0"
	check "none+ia: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
}
run hpcc --cc hpcc
[ "$ok" = 1 ] && {
	check "hpcc: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
	check "hpcc: jain >= 0.9" "$(num jain) >= 0.9"
	check "hpcc: every flow done" "$(num flows_done) == $(num flows)"
}
run hpcc+ia --cc hpcc --credits ia
[ "$ok" = 1 ] && check "hpcc+ia: no drops" "$(num drops) == 0"

echo "bench_incast: $judged of 4 runs judged"
[ "$fail" = 0 ] && echo "bench_incast: ok"
exit "$fail"
