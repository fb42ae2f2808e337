#!/bin/sh
# qpace-bench incast end to end on the embedded default (the demo's setting): qpace-switch
# started by the bench, 16 emulated RoCEv2 senders x 256 KiB to one receiver on a 250 Mb/s
# star with 256 KiB of buffer per port and a 32-packet window per QP, 3 rounds.
# Asserts behaviour with honest margins (the benchmark reports the real figures):
#   none      the buffer overflows: drops > 0 and retransmission timeouts > 0
#   none+ia   goodput >= 50% of the bottleneck's payload rate, Jain >= 0.9 (93-97% when
#             no credit expiry hits it; each expiry costs a burst and its retransmissions)
# Known failures, printed as XFAIL and enforced only with BENCH_STRICT=1 (see the bench
# handoff: both are the agent's, not the bench's):
#   none+ia, hpcc+ia   no drops   (credit gating expires when a loop is late > 1 ms)
#   hpcc      goodput >= 70%   (reference-rate updates compound: the rate collapses)
#   acc       no drops and a lower peak queue than hpcc (0 drops and 84-171 KiB against
#             256 KiB in most runs here; ACC shares HPCC's update path, and a loop late
#             by a few ms in the first RTT lets the line-rate start overfill the port)
# Real time is the premise: a run whose loop was held up for more than 20 ms (a loaded,
# shared machine) is printed and not judged.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
STALL_NS=20000000
fail=0
judged=0

num() {   # num KEY: the value of a top-level number in $out
	echo "$out" | grep -o "\"$1\":[0-9.e+-]*" | head -1 | cut -d: -f2
}
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
	[ -n "$out" ] || return 0
	late=$(num loop_late_max_ns)
	if awk "BEGIN { exit !($late > $STALL_NS) }"; then
		echo "  not judged: the machine held the loop up for $((late / 1000)) us"
	else
		ok=1
		judged=$((judged + 1))
	fi
}
check() {  # check WHAT EXPR
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"; else
		echo "  FAIL: $1 ($2)" >&2
		fail=1
	fi
}
xfail() {  # xfail WHAT EXPR WHY
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"
	elif [ "${BENCH_STRICT:-0}" = 1 ]; then echo "  FAIL: $1 ($2): $3" >&2; fail=1
	else echo "  XFAIL: $1 ($2): $3"; fi
}

run none --cc none
[ "$ok" = 1 ] && {
	check "none: the buffer overflows" "$(num drops) > 0"
	check "none: retransmission timeouts" "$(num timeouts) > 0"
}
run none+ia --cc none --credits ia
[ "$ok" = 1 ] && {
	check "none+ia: goodput >= 50%" "$(num goodput_ratio) >= 0.50"
	check "none+ia: jain >= 0.9" "$(num jain) >= 0.9"
	xfail "none+ia: no drops" "$(num drops) == 0" "agent: credit gating expires after 1 ms"
}
run hpcc --cc hpcc
hpcc_ok=$ok
hpcc_peak=$(num max_queue_bytes)
[ "$ok" = 1 ] && xfail "hpcc: goodput >= 70%" "$(num goodput_ratio) >= 0.70" \
	"agent: HPCC reference updates compound"
run acc --cc acc
[ "$ok" = 1 ] && {
	xfail "acc: no drops" "$(num drops) == 0" "agent: HPCC's update path; a late first RTT"
	[ "$hpcc_ok" = 1 ] && xfail "acc: peak queue below hpcc's" \
		"$(num max_queue_bytes) < ${hpcc_peak:-0}" "as above"
}
run hpcc+ia --cc hpcc --credits ia
[ "$ok" = 1 ] && xfail "hpcc+ia: no drops" "$(num drops) == 0" \
	"agent: credit gating expires after 1 ms"

echo "bench_incast: $judged of 5 runs judged"
[ "$fail" = 0 ] && echo "bench_incast: ok"
exit "$fail"
