#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# IPv6 RoCEv2 flows in qpaced --enforce (docs/enforce.md, "IPv6"), on a veth pair between
# two namespaces with link-local addresses (fe80::79:1, fe80::79:2, nodad: what rxe's GID
# index 0 is, so `ib_write_bw` without -x sends this), RoCEv2 frames from a UDP socket
# (lib/roce6_frames.py), the maps pinned in a bpffs of the test's own:
#   tc   a flow becomes a QP shown with its IPv6 addresses (list -j, show, /metrics), hpcc
#        at --wire-start 30M (frames paced at it before qpaced knew the flow); set to 20M,
#        the program schedules it at 20M (read from the pinned qp_state, as
#        agent_tc_safe.sh: no sch_fq on the CI host); 5M is raised to the floor; after a
#        kill -9 it stays at 20M for the hold (1 s), then falls to the safe rate (5M); a
#        restarted qpaced takes it over (same QPN, 20M again); its frames and bytes
#        counted exactly; on exit nothing is left
#   ecn  DCQCN without qpace-switch: B's Not-ECT frames to A get no CNP and make B's flow
#        a dcqcn QP; CE-marked ones (traffic class 3) get B a CNP each from A, IPv6,
#        captured on B's device and checked byte by byte (UDP checksum, BECN, P-key,
#        reserved bytes, ICRC computed by the capture); B's ingress program sees them and
#        B's qpaced makes each a DCQCN event of its IPv6 flow, whose rate falls
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"
. "$(dirname "$0")/lib/tc_sched.sh"

need jq curl bpftool
NSA=qp6$RUN_ID-a
NSB=qp6$RUN_ID-b
PIN_MNT=$TMP/bpffs
PIN=$PIN_MNT/qpace
PY="python3 $(dirname "$0")/lib/roce6_frames.py"
A6=fe80::79:1
B6=fe80::79:2
veth_setup "$NSA" "$NSB" q6a q6b 10.79.0 "$PIN_MNT"
ip -n "$NSA" -6 addr add "$A6/64" dev q6a nodad && ip -n "$NSB" -6 addr add "$B6/64" dev q6b nodad &&
	ip -n "$NSA" -6 neigh add "$B6" lladdr "$(mac "$NSB" q6b)" dev q6a nud permanent &&
	ip -n "$NSB" -6 neigh add "$A6" lladdr "$(mac "$NSA" q6a)" dev q6b nud permanent ||
	fail "IPv6 link-local addresses and neighbours on q6a, q6b"

start_tc() {
	: >"$TMP/qpaced.log"
	rm -f "$SOCK"
	ip netns exec "$NSA" "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" \
		--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc hpcc --enforce tc \
		--dev q6a --bpf-pin "$PIN" --wire-timeout 14 --wire-rate 1G --wire-hold 1s \
		--wire-safe-rate 12M --wire-start 30M "$@" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	wait_agent
}
qp_of() { ctl list -j 2>/dev/null | jq -c ".[] | select(.peer_qpn == \"$1\")"; }
metrics() { ip netns exec "$1" curl -s "127.0.0.1:$MPORT/metrics"; }
sched_rate() { tc_sched_rate "$PIN/q6a" "$@"; }   # QPN SECONDS

# ---- tc: discovery, pacing, takeover ----
start_tc
# 1094-byte frames 200 us apart (~44 Mb/s) for ~5 s: backlogged at 20M
ip netns exec "$NSA" $PY send "$B6%q6a" 0x141 25000 200 0 1000 >"$TMP/send1" &
SP=$!
PIDS="$PIDS $SP"
i=0
until [ -n "$(qp_of 0x000141)" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "no QP for the IPv6 flow to QPN 0x141: $(ctl list)"
	sleep 0.02
done
q=$(qp_of 0x000141)
[ "$(echo "$q" | jq -r '.peer, .local, .discovered, .algo, .enforce, .rate, .wire_set' |
	tr '\n' ' ')" = "$B6 $A6 true hpcc tc 30000000 30000000 " ] || fail "the IPv6 QP: $q"
start=$(metrics "$NSA" | sed -n 's/^qpace_tc_frames_total{event="start_rate"} //p')
[ "${start:-0}" -ge 1 ] || fail "no frame of the IPv6 flow paced at --wire-start ('$start')"
qpn=$(echo "$q" | jq -r .qpn)
ok "the IPv6 flow $A6 -> $B6 QPN 0x141 is QP $qpn (discovered, hpcc at --wire-start 30M, in the map; frames paced at 30M before qpaced knew it: $start)"

ctl show "$qpn" | grep -q "$B6" || fail "qpacectl show $qpn: no $B6: $(ctl show "$qpn")"
metrics "$NSA" | grep -q "^qpace_qp_rate_bps{qpn=\"$qpn\",peer=\"$B6\",peer_qpn=\"0x000141\"" ||
	fail "/metrics: no qpace_qp_rate_bps with peer=\"$B6\""
ctl list | grep -q "$B6" || fail "qpacectl list: no $B6"
ok "qpacectl list, show and /metrics name it by its IPv6 address"

ctl set "$qpn" rate 20M >/dev/null || fail "qpacectl set $qpn rate 20M"
sleep 0.2
r=$(sched_rate 321 0.4)
within "$r" 20000000 5 || fail "set to 20M: scheduled at $r b/s"
ctl set "$qpn" rate 300k >/dev/null || fail "qpacectl set $qpn rate 300k"
sleep 0.1
# the floor: one frame of 1024 + 58 bytes within a quarter of ACK timeout 14 (67.1 ms)
[ "$(ctl show "$qpn" -j | jq .wire_set)" = 515938 ] || fail "300k: wire_set $(ctl show "$qpn" -j | jq .wire_set), want the 0.52M floor"
ctl set "$qpn" rate 20M >/dev/null || fail "qpacectl set $qpn rate 20M"
ok "set to 20M: the program schedules the IPv6 flow at $r b/s; 300k is raised to the 0.52M floor"

stop_agent -KILL
r=$(sched_rate 321 0.3)
within "$r" 20000000 5 || fail "kill -9: within the hold scheduled at $r b/s, want 20M"
sleep 0.8
r2=$(sched_rate 321 0.4)
within "$r2" 12000000 5 || fail "kill -9: after the hold scheduled at $r2 b/s, want the safe 12M"
ok "kill -9: the IPv6 flow stays at 20M for the 1 s hold ($r b/s), then at the safe rate ($r2 b/s)"
start_tc
grep -q "took over the maps pinned in $PIN/q6a.* 1 QPs from the wire again" "$TMP/qpaced.log" ||
	fail "the restarted qpaced did not take the IPv6 flow over: $(cat "$TMP/qpaced.log")"
q=$(qp_of 0x000141)
[ "$(echo "$q" | jq -r '.qpn, .peer, .discovered, .wire_set' | tr '\n' ' ')" = "$qpn $B6 true 20000000 " ] ||
	fail "the IPv6 QP taken over: $q"
sleep 0.2
r=$(sched_rate 321 0.4)
within "$r" 20000000 5 || fail "taken over: scheduled at $r b/s, want 20M"
ok "restart: QP $qpn taken over with its IPv6 addresses, back at 20M ($r b/s)"

wait $SP
set -- $(cat "$TMP/send1")
sent=$2 flen=$5
sleep 0.4
q=$(qp_of 0x000141)
[ "$(echo "$q" | jq .wire_pkts)" = "$sent" ] && [ "$(echo "$q" | jq .wire_bytes)" = $((sent * flen)) ] ||
	fail "wire_pkts $(echo "$q" | jq .wire_pkts), wire_bytes $(echo "$q" | jq .wire_bytes); sent $sent of $flen bytes"
ok "$sent frames of $flen bytes: counted exactly across the restart"
stop_agent -TERM
[ -z "$(ip netns exec "$NSA" tc filter show dev q6a egress)" ] && [ ! -e "$PIN/q6a" ] ||
	fail "after exit: a filter or pins left"
ok "on exit: no filter, no pins"

# ---- ecn: CE -> IPv6 CNP -> DCQCN ----
start() { # NS DEV SOCK TABLE PEERS [FLAG...]
	ns=$1 dev=$2 sock=$3 table=$4 peers=$5
	shift 5
	ip netns exec "$ns" "$BIN/qpaced" --socket "$sock" --rate-table "$table" \
		--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc dcqcn \
		--enforce observe --dev "$dev" --wire-rate 1G --bpf-pin none --cnp-peer "$peers" \
		"$@" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	SOCK=$sock
	wait_agent
}
ecn() { metrics "$1" | sed -n "s/^qpace_ecn_total{event=\"$2\"} //p"; }
: >"$TMP/qpaced.log"
start "$NSA" q6a "$TMP/a.sock" "$TABLE-a" 0x111=0x222
A_PID=$AGENT
start "$NSB" q6b "$TMP/b.sock" "$TABLE-b" 0x222=0x111
B_PID=$AGENT
ctlb() { "$BIN/qpacectl" --socket "$TMP/b.sock" "$@" 2>/dev/null; }

ip netns exec "$NSB" $PY capture q6b 1.2 >"$TMP/cnp0" &
CP=$!
sleep 0.3
ip netns exec "$NSB" $PY send "$A6%q6b" 0x111 50 1000 0 >/dev/null
wait $CP
[ ! -s "$TMP/cnp0" ] || fail "CNPs for Not-ECT frames: $(head -3 "$TMP/cnp0")"
qb=$(ctlb list -j | jq -c '.[] | select(.peer_qpn == "0x000111")')
[ "$(echo "$qb" | jq -r '.peer, .algo' | tr '\n' ' ')" = "$A6 dcqcn " ] ||
	fail "B's QP for its IPv6 flow to $A6 QPN 0x111: '$qb' ($(ctlb list))"
QB=$(echo "$qb" | jq -r .qpn)
rate0=$(echo "$qb" | jq .rate)
ok "50 Not-ECT IPv6 frames: no CNP; B's flow to $A6 is QP $QB (dcqcn, rate $rate0)"

ip netns exec "$NSB" $PY capture q6b 2.5 >"$TMP/cnp1" &
CP=$!
sleep 0.3
ip netns exec "$NSB" $PY send "$A6%q6b" 0x111 1000 200 3 >"$TMP/send2" &
SP=$!
rate1=$(lowest_rate ctlb "$QB" "$rate0" /dev/null)
wait $SP
wait $CP
n1=$(wc -l <"$TMP/cnp1")
[ "$(grep -vc " ok$" "$TMP/cnp1")" = 0 ] || fail "CNPs with wrong bytes: $(grep -v ' ok$' "$TMP/cnp1" | head -3)"
grep -v " $A6 $B6 0x000222 [0-9]* ok$" "$TMP/cnp1" | grep -q . &&
	fail "a CNP not from $A6 to $B6 QP 0x222: $(grep -v '0x000222' "$TMP/cnp1" | head -2)"
[ "$n1" -ge 600 ] && [ "$n1" -le 1000 ] || fail "$n1 IPv6 CNPs for 1000 CE frames 200 us apart"
ok "1000 CE-marked IPv6 frames ($(cat "$TMP/send2")): $n1 IPv6 CNPs $A6 -> $B6 QPN 0x222 (hop limit $(sed -n '1s/.* \([0-9]*\) ok$/\1/p' "$TMP/cnp1")), UDP checksum, BECN, P-key, reserved bytes and ICRC right"
sleep 0.3
sent=$(ecn "$NSA" cnp_sent) errs=$(ecn "$NSA" cnp_send_errors) v6=$(ecn "$NSA" ipv6_reports)
rx=$(ecn "$NSB" cnp_reports) ev=$(ecn "$NSB" cnp_events) nf=$(ecn "$NSB" cnp_no_flow)
[ "$sent" = "$n1" ] && [ "$errs" = 0 ] && [ "$v6" = "$n1" ] ||
	fail "A: $sent CNPs sent ($errs errors, $v6 IPv6 reports), $n1 captured"
[ "$rx" = "$n1" ] && [ "$ev" = "$n1" ] && [ "$nf" = 0 ] ||
	fail "B: $rx CNP reports, $ev cc events, $nf without a flow; $n1 CNPs sent"
[ "$rate1" -lt "$rate0" ] || fail "B's QP $QB at $rate1 while CNPs came (was $rate0)"
ok "A sent $sent IPv6 CNPs (all captured); B took $rx, made $ev DCQCN events: QP $QB's rate $rate0 -> $rate1"
kill "$A_PID" "$B_PID"
wait "$A_PID" "$B_PID" 2>/dev/null
