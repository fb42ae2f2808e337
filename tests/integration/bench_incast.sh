#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench incast end to end on the embedded default (the demo's setting): qpace-switch
# started by the bench, 16 emulated RoCEv2 senders x 256 KiB to one receiver on a 250 Mb/s
# star with 100 us links (BDP ~15 packets), 512 KiB of buffer per port and rxe's 128-packet
# window per QP, 3 rounds. Asserts behaviour with honest margins (the benchmark, make demo,
# reports the real figures; on an idle machine 90-97% goodput for hpcc, acc and ia):
#   none      the buffer overflows: drops > 0 (its retransmission timeouts are printed, not
#             asserted: on an idle machine go-back-N recovered every loss by NAK in one
#             run of two, 0 and 3 timeouts)
#   none+ia   no drops, goodput >= 70% of the bottleneck's payload rate, Jain >= 0.9
#   hpcc      no drops (its window caps the first RTT at N x BDP), goodput >= 70%
#   acc       no drops, goodput >= 70%, mean queue below hpcc's and peak queue not above
#             hpcc's + 25% (its notices cut inside the first RTT; the demo reports the
#             real figures)
#   hpcc+ia   no drops, goodput >= 70%
# Real time is the premise: a run whose loop was held up for more than 20 ms (none), or
# 6 ms (the controlled runs: a 10 ms stall costs hpcc+ia half its goodput), is printed
# and not judged (a loaded, shared machine); the controlled runs also need the bench's and
# the switch's loops to have been late (counting delays over 100 us) for at most 35% of
# the run in all: credits clocked by arrivals lose every late turn of either loop. On an
# idle 2-core machine the sum is 18-25% of the run (none+ia 0.90, hpcc 0.88, acc 0.89,
# hpcc+ia 0.90 of the payload rate); a sanitizer build at load 3 reached 70% and none+ia
# made 61%. (vt_agreement.sh, which compares figures, asks for 4%.)
# INCAST_ARGS: more options for every run (e.g. "--rx-thread on": the same checks with the
# receiving host in its own thread).
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
INCAST_ARGS=${INCAST_ARGS:-}
STALL_NS=${STALL_NS:-20000000}
LATE_FRAC=1     # none: its figures are the buffer's
fail=0
judged=0

num() {   # num KEY: the value of a top-level number in $out
	echo "$out" | grep -o "\"$1\":[0-9.e+-]*" | head -1 | cut -d: -f2
}
run() {   # run NAME ARGS...: one JSON line into $out; $ok = judge this run
	name=$1
	shift
	# shellcheck disable=SC2086
	out=$("$B" incast -N 16 -s 256K -R 3 -j --base-port 23000 --no-plots $INCAST_ARGS "$@" \
		2>/dev/null) || {
		echo "bench_incast: $name: qpace-bench failed" >&2
		fail=1
		out=""
	}
	echo "$name: $out"
	ok=0
	[ -n "$out" ] || return 0
	late=$(num loop_late_max_ns)
	total=$(( $(num loop_late_total_ns) + $(num switch_late_total_ns) ))
	el=$(num elapsed_s)
	if awk "BEGIN { exit !($late > $STALL_NS) }"; then
		echo "  not judged: the machine held the loop up for $((late / 1000)) us"
	elif awk "BEGIN { exit !($total > $LATE_FRAC * $el * 1e9) }"; then
		echo "  not judged: the loops were late for $((total / 1000000)) ms of ${el} s"
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

run none --cc none
[ "$ok" = 1 ] && {
	check "none: the buffer overflows" "$(num drops) > 0"
	echo "  none: $(num timeouts) retransmission timeouts"
}
STALL_NS=6000000
LATE_FRAC=0.35
run none+ia --cc none --credits ia
[ "$ok" = 1 ] && {
	check "none+ia: no drops" "$(num drops) == 0"
	check "none+ia: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
	check "none+ia: jain >= 0.9" "$(num jain) >= 0.9"
}
run hpcc --cc hpcc
hpcc_ok=$ok
hpcc_peak=$(num max_queue_bytes)
hpcc_mean=$(num avg_queue_bytes)
[ "$ok" = 1 ] && {
	check "hpcc: no drops" "$(num drops) == 0"
	check "hpcc: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
}
run acc --cc acc
[ "$ok" = 1 ] && {
	check "acc: no drops" "$(num drops) == 0"
	check "acc: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
	# The peak is one instant of the first RTT of some round: below hpcc's in most
	# runs (105-201 KiB against 146-200 KiB here), not in all; the mean queue is a
	# third of hpcc's in every run (2.0-2.8 KiB against 7.6-7.8).
	[ "$hpcc_ok" = 1 ] && {
		check "acc: mean queue below hpcc's" "$(num avg_queue_bytes) < ${hpcc_mean:-0}"
		check "acc: peak queue not above hpcc's (+25%)" \
			"$(num max_queue_bytes) <= 1.25 * ${hpcc_peak:-0}"
	}
}
run hpcc+ia --cc hpcc --credits ia
[ "$ok" = 1 ] && {
	check "hpcc+ia: no drops" "$(num drops) == 0"
	check "hpcc+ia: goodput >= 70%" "$(num goodput_ratio) >= 0.70"
}

# --pcap in real time: the switch the bench starts writes every frame it sends (a record
# each, as many as its tx_frames), readable by libpcap's tools once the run has ended.
pdir=$(mktemp -d)
# shellcheck disable=SC2086
if "$B" incast -N 4 -s 64K -R 2 --rate 100M --cc hpcc -j --base-port 23000 --no-plots \
	-o "$pdir/out" --pcap "$pdir/run.pcap" $INCAST_ARGS >/dev/null 2>"$pdir/err"; then
	counts=$(python3 "$(dirname "$0")/lib/pcap_records.py" count "$pdir/run.pcap" \
		"$pdir/out/switch.json")
	set -- $counts
	check "--pcap: a record for every frame the switch sent ($1 of $2)" "$1 == $2 && $2 > 0"
else
	echo "  FAIL: --pcap run: $(cat "$pdir/err")" >&2
	fail=1
fi
rm -rf "$pdir"

echo "bench_incast: $judged of 5 runs judged"
[ "$fail" = 0 ] && echo "bench_incast: ok"
exit "$fail"
