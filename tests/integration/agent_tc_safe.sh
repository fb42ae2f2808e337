#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Safe failure of qpaced --enforce tc (docs/enforce.md, "Safe failure"), on a veth pair
# between two namespaces with the maps pinned in a bpffs of the test's own: a QP found on
# the wire is set to 20M; qpaced is killed (-9) during the flow: the filter stays, the
# program keeps scheduling at 20M, and after --wire-hold (1 s) at the safe rate (5M); a
# restarted qpaced takes the maps and the filter over (one filter, the same QPN, its
# counters, back at 20M); its clean exit leaves nothing (tc, bpffs); after another kill -9,
# `qpaced --enforce off --dev qta` removes what was left.
#
# The CI host has no sch_fq, so nothing holds frames to their departure times; the test
# reads the departure schedule itself from the pinned qp_state map (lib/tc_sched.sh; the
# sender at 40M keeps the flow backlogged).
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"
. "$(dirname "$0")/lib/tc_sched.sh"

need jq bpftool
NSA=qps$RUN_ID-a
NSB=qps$RUN_ID-b
PIN_MNT=$TMP/bpffs
PIN=$PIN_MNT/qpace
veth_setup "$NSA" "$NSB" qsa qsb 10.78.0 "$PIN_MNT"

# --wire-timeout 18: a 0.69M floor, so a 5M safe rate stands
start_tc() {
	: >"$TMP/qpaced.log"
	mode=$1
	shift
	rm -f "$SOCK"
	ip netns exec "$NSA" "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" \
		--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc hpcc --enforce "$mode" \
		--dev qsa --bpf-pin "$PIN" --wire-timeout 18 --wire-rate 1G --wire-hold 1s \
		--wire-safe-rate 5M "$@" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	wait_agent
}
filters() { ip netns exec "$NSA" tc filter show dev qsa egress | grep -c "qp_tc_egress"; }
sched_rate() { tc_sched_rate "$PIN/qsa" "$@"; }   # QPN SECONDS
qp_of() { ctl list -j | jq -c ".[] | select(.peer_qpn == \"$1\")"; }
nothing_left() {
	[ "$(filters)" = 0 ] && ! ip netns exec "$NSA" tc qdisc show dev qsa | grep -q clsact &&
		[ ! -e "$PIN/qsa" ]
}

start_tc tc
[ -e "$PIN/qsa/qp_rates" ] && [ -e "$PIN/qsa/qp_alive" ] || fail "no maps pinned in $PIN/qsa: $(ls -R "$PIN")"
ip netns exec "$NSA" "$BIN/qpace-swtest" send --to 10.78.0.2:4791 --rate 40M --size 1024 \
	--duration 9s --qp 0x131 >/dev/null &
SP=$!
PIDS="$PIDS $SP"
i=0
until [ -n "$(qp_of 0x000131)" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "no QP for the flow to QPN 0x131: $(ctl list)"
	sleep 0.02
done
qpn=$(qp_of 0x000131 | jq -r .qpn)
ctl set "$qpn" rate 20M >/dev/null || fail "qpacectl set $qpn rate 20M"
sleep 0.2
r=$(sched_rate 305 0.4)
within "$r" 20000000 5 || fail "before the kill: scheduled at $r b/s, want 20M +-5%"
ok "the QP $qpn set to 20M: the program schedules it at $r b/s"
pkts0=$(qp_of 0x000131 | jq .wire_pkts)
# a second qpaced on the device of a live one is refused (and leaves the first alone)
rm -f "$TMP/second.sock"
ip netns exec "$NSA" "$BIN/qpaced" --socket "$TMP/second.sock" --rate-table "$TABLE-2" \
	--feedback "127.0.0.1:$PEERPORT" --metrics off --enforce tc --dev qsa --bpf-pin "$PIN" \
	>"$TMP/second.log" 2>&1 && fail "a second qpaced on qsa started"
rm -f "/dev/shm$TABLE-2"
grep -q "qpaced pid $AGENT already enforces on it" "$TMP/second.log" ||
	fail "the second qpaced: $(cat "$TMP/second.log")"
[ "$(filters)" = 1 ] && [ -e "$PIN/qsa/qp_rates" ] || fail "the refused qpaced removed the first's filter or pins"
ok "a second qpaced on the same device is refused: $(grep -o 'qpaced pid [0-9]* already enforces on it' "$TMP/second.log")"

stop_agent -KILL
[ "$(filters)" = 1 ] || fail "after kill -9: $(filters) filters on qsa egress"
r=$(sched_rate 305 0.3)
within "$r" 20000000 5 || fail "within the hold: scheduled at $r b/s, want the last rate 20M"
ok "kill -9: the filter stays, and within the 1 s hold the flow stays at its last rate ($r b/s)"
sleep 0.8
r=$(sched_rate 305 0.4)
within "$r" 5000000 5 || fail "after the hold: scheduled at $r b/s, want the safe rate 5M"
ok "after the hold the flow falls to the safe rate: $r b/s (5M)"
# a flow that starts while qpaced is dead has no rate entry: the safe rate, not line rate
ip netns exec "$NSA" "$BIN/qpace-swtest" send --to 10.78.0.2:4791 --rate 40M --size 1024 \
	--duration 1s --qp 0x132 >/dev/null &
SP2=$!
PIDS="$PIDS $SP2"
sleep 0.2
r=$(sched_rate 306 0.4)
within "$r" 5000000 5 || fail "a new flow after the hold: scheduled at $r b/s, want the safe rate 5M"
wait $SP2
ok "a flow that started after the crash is paced at the safe rate too: $r b/s"

start_tc tc
grep -q "took over the maps pinned in $PIN/qsa.* 1 QPs from the wire again" "$TMP/qpaced.log" ||
	fail "the restarted qpaced did not take the flow over"
[ "$(filters)" = 1 ] || fail "after the restart: $(filters) filters: $(ip netns exec "$NSA" tc filter show dev qsa egress)"
q=$(qp_of 0x000131)
[ "$(echo "$q" | jq -r '.qpn, .discovered, .wire_set' | tr '\n' ' ')" = "$qpn true 20000000 " ] ||
	fail "the QP taken over: $q (want QPN $qpn, discovered, wire_set 20000000)"
sleep 0.3
r=$(sched_rate 305 0.4)
within "$r" 20000000 5 || fail "taken over: scheduled at $r b/s, want 20M again"
pkts1=$(qp_of 0x000131 | jq .wire_pkts)
# the flow that started while qpaced was dead: its report waited in the pinned ring buffer
[ -n "$(qp_of 0x000132)" ] || fail "the flow to QPN 0x132 (started during the crash) is no QP: $(ctl list)"
stale=$(ip netns exec "$NSA" curl -s "127.0.0.1:$MPORT/metrics" |
	sed -n 's/^qpace_tc_frames_total{event="stale_heartbeat"} //p')
[ "${stale:-0}" -gt 0 ] || fail "/metrics: stale_heartbeat '$stale' (the pinned counters)"

[ "$pkts1" -gt "$pkts0" ] || fail "wire_pkts $pkts1 after the takeover, $pkts0 before the kill"
ok "a restarted qpaced takes over: one filter, QP $qpn again (discovered, 20M held, $r b/s), wire_pkts $pkts0 -> $pkts1, $stale frames were paced stale; the flow started during the crash is a QP now"

stop_agent -TERM
nothing_left || fail "after a clean exit: filters $(filters), $(ip netns exec "$NSA" tc qdisc show dev qsa), $(ls -R "$PIN_MNT")"
ok "a clean exit leaves no filter, no clsact, no pins"

start_tc tc
stop_agent -KILL
[ "$(filters)" = 1 ] && [ -e "$PIN/qsa/qp_rates" ] || fail "kill -9 left no filter or pins"
start_tc off
grep -q "enforce off on qsa: the filter removed, clsact removed, the pinned maps removed" \
	"$TMP/qpaced.log" || fail "--enforce off did not say what it removed"
nothing_left || fail "after --enforce off: filters $(filters), $(ip netns exec "$NSA" tc qdisc show dev qsa), $(ls -R "$PIN_MNT")"
stop_agent -TERM
ok "after a kill -9, qpaced --enforce off --dev qsa removes the filter, clsact and the pins"
