#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# DCQCN without qpace-switch (docs/enforce.md): two qpaced, each with --enforce observe
# --cc dcqcn on one end of a veth pair between two namespaces. From B, RoCEv2 data frames
# to A's QP 0x111, CE-marked by a UDP socket with IP_TOS=3: A's tc ingress program reports
# them, A sends B a CNP for the peer QP 0x222 (--cnp-peer: no rdma netlink here), captured
# on B's device with AF_PACKET and checked byte by byte (ICRC computed by the capture);
# spaced CE frames each get a CNP, a burst gets at most one per 50 us; unmarked frames and
# CE to a QP with no known peer get none (counted); B's ingress program sees the CNPs and
# B's qpaced makes each a DCQCN CNP event of its flow (A, 0x111), which cuts its rate; on
# exit no filter and no clsact remain; after a kill -9, --enforce off removes the ingress
# filter too. B also runs --ecn-mark on: its Not-ECT frames
# arrive at A as ECT(0) with a right IPv4 checksum.
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"

need jq curl
NSA=qpe$RUN_ID-a
NSB=qpe$RUN_ID-b
PY="python3 $(dirname "$0")/lib/ecn_frames.py"
veth_setup "$NSA" "$NSB" qea qeb 10.78.0

# start NS DEV SOCK TABLE PEERS [FLAG...]: qpaced in NS on DEV (same ports: separate
# namespaces)
start() {
	ns=$1 dev=$2 sock=$3 table=$4 peers=$5
	shift 5
	ip netns exec "$ns" "$BIN/qpaced" --socket "$sock" --rate-table "$table" \
		--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc dcqcn \
		--enforce observe --dev "$dev" --wire-rate 1G --cnp-peer "$peers" "$@" \
		2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	SOCK=$sock
	wait_agent
}
: >"$TMP/qpaced.log"
start "$NSA" qea "$TMP/a.sock" "$TABLE-a" 0x111=0x222
A_PID=$AGENT
start "$NSB" qeb "$TMP/b.sock" "$TABLE-b" 0x222=0x111 --ecn-mark on
B_PID=$AGENT
ctla() { "$BIN/qpacectl" --socket "$TMP/a.sock" "$@" 2>/dev/null; }
ctlb() { "$BIN/qpacectl" --socket "$TMP/b.sock" "$@" 2>/dev/null; }
metric() { # NS EVENT: qpace_ecn_total{event=EVENT}
	ip netns exec "$1" curl -s "127.0.0.1:$MPORT/metrics" |
		sed -n "s/^qpace_ecn_total{event=\"$2\"} //p"
}
for n in "$NSA:qea" "$NSB:qeb"; do
	ip netns exec "${n%%:*}" tc filter show dev "${n#*:}" ingress | grep -q "qp_tc_ingress.*direct-action" ||
		fail "no ingress filter on ${n#*:}"
done
grep -q "tc ingress on qea: CE-marked" "$TMP/qpaced.log" || fail "no ingress line in the log"
ok "the ingress program is on both devices (clsact, direct action)"

# Not-ECT frames: B's egress program (--ecn-mark on) sends them as ECT(0) with a right
# IPv4 checksum (captured on A's device); B's qpaced finds the flow (A, 0x111) on the
# wire; no CNP comes back.
ip netns exec "$NSB" $PY capture qeb 1.5 >"$TMP/cnp0" &
CP=$!
ip netns exec "$NSA" $PY tos qea 1.5 >"$TMP/tos0" &
TP=$!
sleep 0.3
ip netns exec "$NSB" $PY send 10.78.0.1 0x111 50 1000 0 >/dev/null
wait $CP
wait $TP
[ ! -s "$TMP/cnp0" ] || fail "CNPs for unmarked frames: $(head -3 "$TMP/cnp0")"
[ "$(grep -c '^0x02 ok$' "$TMP/tos0")" = 50 ] && [ "$(wc -l <"$TMP/tos0")" = 50 ] ||
	fail "at A, not 50 ECT(0) frames with right checksums: $(sort "$TMP/tos0" | uniq -c)"
ok "--ecn-mark on at B: the 50 Not-ECT frames arrive at A as ECT(0) (TOS 0x02), IPv4 checksums right"
qb=$(ctlb list -j | jq -c '.[] | select(.peer_qpn == "0x000111")')
[ -n "$qb" ] || fail "B has no QP for its flow to 10.78.0.1 QPN 0x111: $(ctlb list)"
QB=$(echo "$qb" | jq -r .qpn)
rate0=$(echo "$qb" | jq .rate)
ok "50 Not-ECT frames: no CNP; B's flow is QP $QB (dcqcn, rate $rate0)"

# 1000 CE frames 200 us apart: each gets its own CNP (the 50 us limit does not bite);
# while they come, B's QP runs below line rate at times (DCQCN cuts on CNPs and recovers
# within milliseconds, so the rate is read 20 times while they come).
ip netns exec "$NSB" $PY capture qeb 2.5 >"$TMP/cnp1" &
CP=$!
sleep 0.3
ip netns exec "$NSB" $PY send 10.78.0.1 0x111 1000 200 3 >"$TMP/send1" &
SP=$!
rate1=$(lowest_rate ctlb "$QB" "$rate0" "$TMP/rates")   # over the ~200 ms
wait $SP
wait $CP
n1=$(wc -l <"$TMP/cnp1")
bad=$(grep -vc " ok$" "$TMP/cnp1")
[ "$bad" = 0 ] || fail "$bad CNPs with wrong bytes: $(grep -v ' ok$' "$TMP/cnp1" | head -3)"
grep -v " 10.78.0.1 10.78.0.2 0x000222 ok$" "$TMP/cnp1" | grep -q . &&
	fail "a CNP not from A to B's QP 0x222: $(grep -v '0x000222' "$TMP/cnp1" | head -2)"
# at least 200 us apart when sent; a loaded machine may deliver some closer than 50 us
[ "$n1" -ge 600 ] && [ "$n1" -le 1000 ] || fail "$n1 CNPs for 1000 CE frames 200 us apart"
ok "1000 CE frames 200 us apart ($(cat "$TMP/send1")): $n1 CNPs to 10.78.0.2 QPN 0x222, every one's checksum, BECN, P-key, reserved bytes and ICRC right"

# A burst of 3000 CE frames as fast as Python sends: at most one CNP per 50 us.
ip netns exec "$NSB" $PY capture qeb 2 >"$TMP/cnp2" &
CP=$!
sleep 0.3
ip netns exec "$NSB" $PY send 10.78.0.1 0x111 3000 0 3 >"$TMP/send2"
wait $CP
ms=$(sed -n 's/.* in \([0-9.]*\) ms/\1/p' "$TMP/send2")
n2=$(wc -l <"$TMP/cnp2")
max=$(awk -v ms="$ms" 'BEGIN { printf "%d", ms * 1000 / 50 + 2 }')
[ "$n2" -ge 1 ] && [ "$n2" -le "$max" ] || fail "burst over $ms ms: $n2 CNPs, allowed 1..$max"
[ "$(grep -vc ' ok$' "$TMP/cnp2")" = 0 ] || fail "burst: CNPs with wrong bytes"
ok "a burst of 3000 CE frames over $ms ms: $n2 CNPs (at most $max: one per QP per 50 us)"

# CE to a QP with no known peer: counted, no CNP.
ip netns exec "$NSB" $PY capture qeb 1 >"$TMP/cnp3" &
CP=$!
sleep 0.3
ip netns exec "$NSB" $PY send 10.78.0.1 0x333 20 200 3 >/dev/null
wait $CP
[ ! -s "$TMP/cnp3" ] || fail "a CNP for QP 0x333, which has no known peer"
unm=$(metric "$NSA" ce_unmapped)
[ "$unm" -ge 1 ] || fail "A's ce_unmapped is $unm"
ok "20 CE frames to QP 0x333 (no peer known): no CNP, A's ce_unmapped $unm"

# Counters on both ends: every CNP A sent was captured, seen by B's ingress program and
# became a DCQCN event of B's flow, whose rate fell.
sleep 0.3
sent=$(metric "$NSA" cnp_sent)
errs=$(metric "$NSA" cnp_send_errors)
rx=$(metric "$NSB" cnp_reports)
ev=$(metric "$NSB" cnp_events)
nf=$(metric "$NSB" cnp_no_flow)
total=$((n1 + n2))
[ "$sent" = "$total" ] && [ "$errs" = 0 ] || fail "A sent $sent CNPs ($errs errors), $total captured"
[ "$rx" = "$total" ] && [ "$ev" = "$total" ] && [ "$nf" = 0 ] ||
	fail "B: $rx CNP reports, $ev cc events, $nf without a flow; $total CNPs sent"
[ "$rate1" -lt "$rate0" ] || fail "B's QP $QB at $rate1 while CNPs came (was $rate0; readings $(tr "\n" " " <"$TMP/rates"))"
ok "A sent $sent CNPs (all captured); B took $rx, made $ev DCQCN events: QP $QB's rate $rate0 -> $rate1 while they came (readings: $(tr "\n" " " <"$TMP/rates"))"

kill "$A_PID" "$B_PID"
wait "$A_PID" "$B_PID" 2>/dev/null
for n in "$NSA:qea" "$NSB:qeb"; do
	[ -z "$(ip netns exec "${n%%:*}" tc filter show dev "${n#*:}" ingress)" ] &&
		! ip netns exec "${n%%:*}" tc qdisc show dev "${n#*:}" | grep -q clsact ||
		fail "${n#*:}: a filter or clsact left after exit"
done
ok "after SIGTERM: no filter, no clsact on either device"

# A clsact that was there before (not qpaced's) and a kill -9: the ingress filter stays;
# qpaced --enforce off --dev qea removes it (and the egress one) and leaves clsact.
ip netns exec "$NSA" tc qdisc add dev qea clsact || fail "tc qdisc add clsact"
: >"$TMP/qpaced.log"
start "$NSA" qea "$TMP/a.sock" "$TABLE-a" 0x111=0x222
stop_agent -KILL
ip netns exec "$NSA" tc filter show dev qea ingress | grep -q qp_tc_ingress ||
	fail "kill -9 left no ingress filter (nothing to clean)"
ip netns exec "$NSA" "$BIN/qpaced" --socket "$TMP/a.sock" --rate-table "$TABLE-a" \
	--feedback "127.0.0.1:$FBPORT" --metrics off --enforce off --dev qea 2>>"$TMP/qpaced.log" &
AGENT=$!
PIDS="$PIDS $AGENT"
SOCK=$TMP/a.sock
wait_agent
stop_agent -TERM
grep -q "tc ingress: --enforce off on qea: the ingress filter removed" "$TMP/qpaced.log" ||
	fail "--enforce off did not remove the ingress filter"
[ -z "$(ip netns exec "$NSA" tc filter show dev qea ingress)" ] &&
	[ -z "$(ip netns exec "$NSA" tc filter show dev qea egress)" ] &&
	ip netns exec "$NSA" tc qdisc show dev qea | grep -q clsact ||
	fail "after --enforce off: $(ip netns exec "$NSA" tc filter show dev qea ingress) / $(ip netns exec "$NSA" tc qdisc show dev qea)"
ok "after a kill -9, --enforce off --dev qea removes both filters and leaves the clsact that was there"
