#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-switch over udp ports on loopback (no namespaces needed, but run with the rest):
#  1. RoCEv2 data from a test host: INT reports, early notices, congestion levels
#     (qpace-swtest int checks them against the queue model and prints the figures);
#  2. a sender at twice the link rate: received rate within 2% of the link rate, drops
#     equal sent minus received, the queue never above the buffer.
set -u
. "$(dirname "$0")/switch_common.inc"

sw_stop() { kill "$pid"; wait "$pid" 2>/dev/null; pid=""; }
# figures OUT JSON: sent and received from the sender's OUT; from the switch's JSON the
# drops (its queue's drop-tail plus what the kernel dropped at its ingress socket when
# the machine stalled it, both counted by the switch) and the peak queue.
figures() {
	sent=$(awk '/^sent/ {print $2}' "$1")
	recv=$(awk '/^received/ {print $2}' "$1")
	drops=$(( $($T json "$2" s1 p1 drop_tail) + $($T json "$2" s1 p0 rx_kernel_drops) )) ||
		fail "no stats"
	maxq=$($T json "$2" s1 p1 max_qbytes)
}

echo "--- INT, notices and levels (10 Mb/s, 2 ports)"
# --level-weight 1: the levels from the instantaneous queue, so that a 15-frame burst walks
# them 1, 2, 3 and an empty queue brings 0 (RED's average, the default w = 0.002, moves
# 0.2% per arrival: test_telem covers it)
sw_start --star 2 --base-port 17300 --rate 10M --buffer 256K --delay 5us --int direct --int-flows all \
	--early 5000 --notice-interval 1ms --levels 3000,8000,12000 --level-weight 1 \
	--level-repeat 200us --cnp on \
	--duration 20s
timeout 15 $T int --base-port 17300 || fail "telemetry checks"
sw_stop

echo "--- 2x overload through udp ports (200 Mb/s link, 400 Mb/s offered, 2 s)"
# A 1 MB buffer (40 ms at 200 Mb/s) rides out a sender that a busy machine stalls.
sw_start --star 2 --base-port 17310 --rate 200M --buffer 1M --delay 5us --duration 20s \
	--stats-json "$tmp/s.json"
timeout 15 $T rate --base-port 17310 --rate 400M --size 1000 --duration 2s > "$tmp/out" ||
	fail "sender"
cat "$tmp/out"
sw_stop
figures "$tmp/out" "$tmp/s.json"
rate=$(awk '/^received/ {print $(NF-1)}' "$tmp/out")
buf=$($T json "$tmp/s.json" s1 p1 buffer_bytes)
echo "sent $sent received $recv drops $drops (sent - received = $((sent - recv))); max queue $maxq of $buf B; median received rate $rate b/s of 200000000"
[ "$drops" -eq $((sent - recv)) ] || fail "drops != sent - received"
[ "$maxq" -le "$buf" ] || fail "queue above the buffer"
awk -v r="$rate" 'BEGIN { d = r / 200000000 - 1; exit !(d < 0.02 && d > -0.02) }' ||
	fail "received rate $rate not within 2% of 200000000"

echo "--- 10x overload (20 Mb/s link, 200 Mb/s offered, 1 s): bounded queue, no crash"
sw_start --star 2 --base-port 17320 --rate 20M --buffer 64K --delay 5us --duration 20s \
	--stats-json "$tmp/s10.json"
timeout 15 $T rate --base-port 17320 --rate 200M --size 1000 --duration 1s > "$tmp/out10" ||
	fail "sender"
kill -0 "$pid" 2>/dev/null || fail "switch died under 10x overload"
sw_stop
figures "$tmp/out10" "$tmp/s10.json"
echo "sent $sent received $recv drops $drops (sent - received = $((sent - recv))); max queue $maxq of 65536 B"
[ "$maxq" -le 65536 ] || fail "queue above the buffer"
[ "$drops" -eq $((sent - recv)) ] || fail "drops != sent - received"
echo "switch_udp: ok"
