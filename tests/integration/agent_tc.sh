#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpaced --enforce observe|tc on a veth pair between two namespaces: crafted RoCEv2
# frames (UDP 4791 with a BTH, qpace-swtest) sent through the device are counted per flow
# by the tc egress program, the flow becomes a QP with the configured algorithm, and
# qpacectl list -j, show and /metrics give its frames, bytes (exact) and measured wire
# rate; in tc mode the rate qpaced sets goes into the program's map (at least the floor),
# and --wire-start sets a new flow's first rate (the program's and hpcc's);
# on exit the filter and the clsact qdisc are gone. fq is absent on the CI host: the test
# checks that qpaced says so. --enforce tc refuses a device that reports no speed without
# --wire-rate, and an operator's htb root, leaving the device as it was.
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"

need jq
NSA=qpt$RUN_ID-a
NSB=qpt$RUN_ID-b
veth_setup "$NSA" "$NSB" qta qtb 10.77.0

# start_tc MODE [FLAG...]: qpaced in $NSA on qta (the socket and table are on the shared
# filesystem)
start_tc() {
	: >"$TMP/qpaced.log"
	mode=$1
	shift
	ip netns exec "$NSA" "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" \
		--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc hpcc \
		--enforce "$mode" --dev qta "$@" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	wait_agent
}
send() { # QPN RATE DURATION: prints the frames sent
	ip netns exec "$NSA" "$BIN/qpace-swtest" send --to 10.77.0.2:4791 --rate "$2" \
		--size 1024 --duration "$3" --qp "$1" | sed -n 's/^sent \([0-9]*\) frames.*/\1/p'
}
qp_of() { ctl list -j | jq -c ".[] | select(.peer_qpn == \"$1\")"; }
# set_rate QPN RATE WANT: qpacectl set QPN rate RATE, then the map holds WANT b/s
set_rate() {
	ctl set "$1" rate "$2" >/dev/null || fail "qpacectl set $1 rate $2"
	sleep 0.1
	got=$(ctl show "$1" -j | jq .wire_set)
	[ "$got" = "$3" ] || fail "after set $2 (${WHY:-}): wire_set $got, want $3"
}
no_filter() {
	[ -z "$(ip netns exec "$NSA" tc filter show dev qta egress)" ] &&
		! ip netns exec "$NSA" tc qdisc show dev qta | grep -q clsact
}

start_tc observe
ip netns exec "$NSA" tc filter show dev qta egress | grep -q "qp_tc_egress.*direct-action" ||
	fail "no direct-action filter on qta egress: $(ip netns exec "$NSA" tc filter show dev qta egress)"
ok "observe: the program is on qta's egress (clsact, direct action)"

# a 2 s flow at 20 Mb/s: mid-way the measured wire rate is about 20M
ip netns exec "$NSA" "$BIN/qpace-swtest" send --to 10.77.0.2:4791 --rate 20M --size 1024 \
	--duration 2s --qp 0x123 >"$TMP/send1.out" &
SP=$!
PIDS="$PIDS $SP"
sleep 1.3
q=$(qp_of 0x000123)
[ -n "$q" ] || fail "no QP for the flow to 10.77.0.2 QPN 0x123: $(ctl list)"
wire=$(echo "$q" | jq .wire)
# the sender paces whole frames (1066 B) at 20M; qpaced's sample covers 250 ms: allow a
# loaded machine's jitter
[ "$wire" -gt 14000000 ] && [ "$wire" -lt 26000000 ] ||
	fail "measured wire rate $wire b/s mid-flow, want 20M +-30%"
ok "a flow at 20 Mb/s measured at $wire b/s mid-flow (qpacectl list -j .wire)"
wait $SP
sent=$(sed -n 's/^sent \([0-9]*\) frames.*/\1/p' "$TMP/send1.out")
sleep 0.4
q=$(qp_of 0x000123)
[ "$(echo "$q" | jq .wire_pkts)" = "$sent" ] ||
	fail "wire_pkts $(echo "$q" | jq .wire_pkts), the sender sent $sent"
[ "$(echo "$q" | jq .wire_bytes)" = $((sent * 1066)) ] ||
	fail "wire_bytes $(echo "$q" | jq .wire_bytes), want $sent x 1066"
[ "$(echo "$q" | jq -r '.discovered, .algo, .local, .wire_set' | tr '\n' ' ')" = \
	"true hpcc 10.77.0.1 0 " ] || fail "the QP: $q"
ok "$sent frames: counted exactly (packets and bytes), the QP discovered with cc hpcc, nothing enforced"

qpn=$(echo "$q" | jq -r .qpn)
m=$(ip netns exec "$NSA" curl -s "127.0.0.1:$MPORT/metrics")
echo "$m" | grep -q "^qpace_qp_wire_packets_total{qpn=\"$qpn\",.*} $sent$" ||
	fail "/metrics: no qpace_qp_wire_packets_total $sent for $qpn"
echo "$m" | grep -q '^qpace_tc_frames_total{event="roce"} [1-9]' ||
	fail "/metrics: no qpace_tc_frames_total roce"
[ "$(counter wire_qps_created)" = 1 ] || fail "wire_qps_created $(counter wire_qps_created)"
ok "/metrics: the QP's wire counters and the program's frame counters; one QP created"

# a second flow to the same peer (another destination QPN) is a second QP
send 0x124 10M 0.3s >/dev/null
sleep 0.4
[ -n "$(qp_of 0x000124)" ] || fail "no QP for the second flow"
ok "a second flow is a second QP"
# each flow was reported once: qpaced gave it a (count-only) map entry, so the program's
# per-flow retry (1 s) never fired during the first flow's 2 s
reports=$(ip netns exec "$NSA" curl -s "127.0.0.1:$MPORT/metrics" |
	sed -n 's/^qpace_tc_frames_total{event="reports"} //p')
[ "$reports" = 2 ] || fail "the program reported $reports times for 2 flows"
ok "each flow reported once (2 reports), then counted as known"
stop_agent -TERM
no_filter || fail "after exit: $(ip netns exec "$NSA" tc qdisc show dev qta)"
ok "on exit the filter and the clsact qdisc are gone"

start_tc tc
grep -q "could not install fq on qta" "$TMP/qpaced.log" ||
	ip netns exec "$NSA" tc qdisc show dev qta | grep -q "qdisc fq" ||
	fail "tc mode: neither fq on qta nor a line saying why not"
sent=$(send 0x125 20M 0.5s)
sleep 0.4
q=$(qp_of 0x000125)
[ -n "$q" ] || fail "tc: no QP for the flow"
[ "$(echo "$q" | jq .wire_set)" = "$(echo "$q" | jq .rate)" ] ||
	fail "tc: wire_set $(echo "$q" | jq .wire_set) is not the rate $(echo "$q" | jq .rate)"
qpn=$(echo "$q" | jq -r .qpn)
set_rate "$qpn" 50M 50000000
# the floor: one frame of 1024 + 58 bytes within a quarter of ACK timeout 14 (67.1 ms):
# 0.516 Mb/s; 5M stands (the program asks for ACKs every 16.8 ms), 300k is raised
WHY="5M, above the floor" set_rate "$qpn" 5M 5000000
WHY="the floor" set_rate "$qpn" 300k 515938
ok "tc: the QP's rate goes into the map (50M and 5M as set; 300k raised to the 0.52M floor)"
stop_agent -TERM
no_filter || fail "tc: after exit: $(ip netns exec "$NSA" tc qdisc show dev qta)"
! ip netns exec "$NSA" tc qdisc show dev qta | grep -q "qdisc fq" || fail "fq left on qta"
ok "tc: on exit the filter, clsact and any fq are gone"

# perftest -u 18: a 1.07 s ACK timeout, a 0.032 Mb/s floor, so 300k stands
start_tc tc --wire-timeout 18
send 0x126 20M 0.3s >/dev/null
sleep 0.4
qpn=$(qp_of 0x000126 | jq -r .qpn)
[ -n "$qpn" ] || fail "--wire-timeout 18: no QP for the flow"
WHY="--wire-timeout 18" set_rate "$qpn" 300k 300000
ok "--wire-timeout 18 (perftest -u 18): 300k is enforced as set"
stop_agent -TERM

# --wire-start 30M: the flow's first frames are paced at 30M before qpaced knows the flow
# (the program's start_rate counter), and hpcc starts its QP there, not at the line (no
# INT here, so it stays there); the map holds 30M (the cap of twice the measured rate is
# at least the start rate)
start_tc tc --wire-start 30M --wire-rate 1G
send 0x127 20M 0.3s >/dev/null
sleep 0.4
q=$(qp_of 0x000127)
[ -n "$q" ] || fail "--wire-start: no QP for the flow"
[ "$(echo "$q" | jq .rate)" = 30000000 ] || fail "--wire-start 30M: hpcc's rate $(echo "$q" | jq .rate)"
[ "$(echo "$q" | jq .wire_set)" = 30000000 ] || fail "--wire-start 30M: wire_set $(echo "$q" | jq .wire_set)"
start=$(ip netns exec "$NSA" curl -s "127.0.0.1:$MPORT/metrics" |
	sed -n 's/^qpace_tc_frames_total{event="start_rate"} //p')
[ "${start:-0}" -ge 1 ] || fail "--wire-start: the program paced no frame at the start rate ('$start')"
ok "--wire-start 30M: hpcc starts at 30M (not the 1G line), $start frames paced at it before qpaced knew the flow"
stop_agent -TERM

# refusals, before anything is attached (docs/enforce.md, "What qpaced changes on a host"):
# a device that reports no speed without --wire-rate; an operator's classful root
refused() { # WHAT WORD [FLAG...]: qpaced --enforce tc exits non-zero naming WORD, qta as it was
	what=$1 word=$2
	shift 2
	before=$(ip netns exec "$NSA" tc qdisc show dev qta)
	ip netns exec "$NSA" timeout 10 "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" \
		--feedback "127.0.0.1:$FBPORT" --metrics off --cc hpcc --enforce tc "$@" \
		>"$TMP/refused.log" 2>&1 && fail "$what: qpaced started"
	grep -q -- "$word" "$TMP/refused.log" || fail "$what: no '$word' in: $(cat "$TMP/refused.log")"
	[ "$(ip netns exec "$NSA" tc qdisc show dev qta)" = "$before" ] ||
		fail "$what: qta changed: $(ip netns exec "$NSA" tc qdisc show dev qta)"
}
# lo reports no speed (reading /sys/class/net/lo/speed fails), as virtio does
if ! cat /sys/class/net/lo/speed >/dev/null 2>&1; then
	refused "no speed" "--wire-rate" --dev lo
	ok "a device that reports no speed (lo): --enforce tc refuses, naming --wire-rate"
else
	echo "skip: lo reports a speed here (the no-speed refusal)"
fi
if ip netns exec "$NSA" tc qdisc add dev qta root handle 1: htb default 10 2>/dev/null; then
	refused "htb root" "--wire-fq-parent" --dev qta
	ip netns exec "$NSA" tc qdisc del dev qta root
	ok "an operator's htb root: --enforce tc refuses naming it and --wire-fq-parent, qta untouched"
else
	echo "skip: no sch_htb here (the classful-root refusal)"
fi
