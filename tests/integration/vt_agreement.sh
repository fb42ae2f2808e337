#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Real time and virtual time agree: the same incast (8 -> 1 at 100 Mb/s, 256 KiB per
# sender, 5 rounds, the bench's defaults otherwise: 512 KiB buffer, 100 us links, rxe's
# 128-packet window) in both clocks, for three algorithms that load the switch
# differently:
#   hpcc       INT-driven rates: no drops, a first-RTT peak, a small standing queue
#   none+ia    receiver credits clocked by the receiving host's arrivals, each sender at
#              most W = 1 MTU outstanding: no drops, a queue of at most n*W = 8 packets
#   none       windows alone: the buffer overflows, drops and retransmission timeouts
# Asserted (docs/bench.md, "Virtual time", has the figures): goodput ratios
# within 0.12 of each other; peak queues within 30% (or 8 KiB) of each other; drops zero
# in both or in neither, and within a factor of 2 where the buffer overflows. What real
# time adds and virtual time does not: the loop's lateness and loopback (a few % of
# goodput); what virtual time adds: each link's delay in the host -> switch direction too
# (the real switch models it only at egress; both runs register the same modelled RTT,
# and the credit pacer takes it as its RTT's floor, so real time holds the two missing
# delays as queue: the 8 KiB margin is those 8 packets; 0.12 of goodput is ~100 ms of
# the ~0.9 s run, three times what the 4% of lateness below can cost).
# Real time is judged only when it kept up: the bench's loop and the switch's each late by
# at most 6 ms at worst, and together by at most 4% of the run's duration in all
# (lateness beyond 100 us, summed: that much of a second is a third of the goodput
# margin; none+ia's credits are clocked by arrivals, so a stalled loop idles the link for
# as long as it stalls); none, whose figures are the buffer's and whose goodput is set by
# its retransmission timeouts, only by at most 20 ms at worst. Up to 3 tries, else the
# pair is printed, not judged. It can fail: the timer-scheduled credits of before (no
# arrivals reached the pacer) gave none+ia real a peak of 72-75 KB against 37 KB
# virtual on an idle machine, and reverting host_service's flush stalls every real run.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
fail=0
judged=0

. "$(dirname "$0")/lib/kept_up.sh"
run() {   # run CLOCK ARGS...: one JSON line
	clock=$1
	shift
	"$B" incast --clock "$clock" -N 8 -s 256K -R 5 --rate 100M -j --no-plots \
		--base-port 25000 "$@" 2>/dev/null
}
check() {  # check WHAT EXPR
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"; else
		echo "  FAIL: $1 ($2)" >&2
		fail=1
	fi
}
pair() {   # pair NAME STALL_NS LATE_FRACTION ARGS...
	name=$1
	stall=$2
	frac=$3
	shift 3
	v=$(run virtual "$@") || { echo "vt_agreement: $name: virtual run failed" >&2; fail=1; return; }
	r=$(kept_up "$name" "$stall" "$frac" run real "$@")
	echo "$name virtual: $v"
	[ -n "$r" ] || { echo "  $name: no real run kept up; not judged"; return; }
	echo "$name real:    $r"
	judged=$((judged + 1))
	gv=$(num "$v" goodput_ratio); gr=$(num "$r" goodput_ratio)
	pv=$(num "$v" max_queue_bytes); pr=$(num "$r" max_queue_bytes)
	dv=$(num "$v" drops); dr=$(num "$r" drops)
	check "$name: goodput ratios within 0.12 ($gv virtual, $gr real)" \
		"($gv - $gr) <= 0.12 && ($gr - $gv) <= 0.12"
	check "$name: peak queues within 30% or 8 KiB ($pv virtual, $pr real)" \
		"($pv - $pr <= 0.3 * $pr || $pv - $pr <= 8192) && ($pr - $pv <= 0.3 * $pv || $pr - $pv <= 8192)"
	check "$name: drops in both or in neither, within 2x ($dv virtual, $dr real)" \
		"($dv == 0 && $dr == 0) || ($dv > 0 && $dr > 0 && $dv <= 2 * $dr && $dr <= 2 * $dv)"
}

pair hpcc 6000000 0.04 --cc hpcc
pair none+ia 6000000 0.04 --cc none --credits ia
pair none 20000000 1 --cc none
echo "vt_agreement: $judged of 3 pairs judged"
[ "$fail" = 0 ] && echo "vt_agreement: ok"
exit "$fail"
