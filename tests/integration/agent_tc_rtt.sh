#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RTT samples and NAKs from the wire (docs/enforce.md "RTT samples and NAKs from the
# wire"): qpaced --enforce observe --cc swift on B's end of a veth pair. B sends 200
# RoCEv2 data frames with AckReq to A's QP 0x111, 2 ms apart; a responder in A answers
# each with an ACK of its PSN to B's local QP 0x999 after 3 ms, the 100th with a NAK
# (PSN sequence error). Nothing leans on timing but the 3 ms floor of each sample. B's egress
# program stamps each frame's departure, its ingress program matches each ACK and reports
# the RTT: qpaced gives the samples to the QP it made of the flow (A, 0x111), whose view
# shows an RTT of at least the 3 ms and whose Swift window falls below its first (one
# BDP at the 100 us --wire-rtt: the delay is far above its target), and the NAK to the
# same QP (found from the samples' local QPN). No RTT is reported for frames without
# AckReq. The counters on /metrics account for every frame.
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"

need jq curl python3
NSA=qpr$RUN_ID-a
NSB=qpr$RUN_ID-b
PY="python3 $(dirname "$0")/lib/rtt_frames.py"
veth_setup "$NSA" "$NSB" qra qrb 10.79.0

: >"$TMP/qpaced.log"
ip netns exec "$NSB" "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" \
	--feedback "127.0.0.1:$FBPORT" --metrics "127.0.0.1:$MPORT" --cc swift \
	--enforce observe --dev qrb --wire-rate 1G --wire-rtt 100us 2>>"$TMP/qpaced.log" &
AGENT=$!
PIDS="$PIDS $AGENT"
wait_agent
metric() { # NAME EVENT
	ip netns exec "$NSB" curl -s "127.0.0.1:$MPORT/metrics" |
		sed -n "s/^$1{event=\"$2\"} //p"
}
grep -q "tc ingress on qrb: ACKs matched" "$TMP/qpaced.log" ||
	fail "no RTT line from the ingress program in the log"
ip netns exec "$NSB" tc filter show dev qrb ingress | grep -q "qp_tc_ingress.*direct-action" ||
	fail "no ingress filter on qrb"
ok "--enforce observe: the ingress program is on qrb for RTT samples (no --cnp)"

ip netns exec "$NSA" $PY respond 30 0x999 3000 100 200 >"$TMP/resp" &
RP=$!
i=0
until grep -q ready "$TMP/resp"; do
	i=$((i + 1))
	[ $i -le 200 ] || fail "the responder did not bind in 10 s"
	sleep 0.05
done
ip netns exec "$NSB" $PY send 10.79.0.1 0x111 200 2000 >/dev/null
wait $RP
resp=$(tail -n 1 "$TMP/resp")
# qpaced has taken every report when the reports and the ones held back add up to the
# samples the program matched (up to 10 s: a loaded machine, a sanitizer build)
i=0
while :; do
	samples=$(metric qpace_tc_ingress_frames_total rtt_samples)
	limited=$(metric qpace_tc_ingress_frames_total rtt_limited)
	reports=$(metric qpace_rtt_total rtt_reports)
	[ $((reports + limited)) -lt "$samples" ] && [ $i -lt 100 ] || break
	i=$((i + 1))
	sleep 0.1
done
q=$(ctl list -j | jq -c '.[] | select(.peer_qpn == "0x000111")')
[ -n "$q" ] || fail "no QP for the flow to 10.79.0.1 QPN 0x111: $(ctl list)"
QPN=$(echo "$q" | jq -r .qpn)
rtt=$(echo "$q" | jq .rtt)
stamped=$(metric qpace_tc_frames_total rtt_stamped)
events=$(metric qpace_rtt_total rtt_events)
noflow=$(metric qpace_rtt_total rtt_no_flow)
nakev=$(metric qpace_rtt_total nak_events)
min=$(ip netns exec "$NSB" curl -s "127.0.0.1:$MPORT/metrics" |
	sed -n 's/^qpace_rtt_sample_ns{which="min"} //p')
[ "$stamped" = 200 ] || fail "$stamped frames stamped, 200 sent with AckReq"
[ "$samples" -ge 190 ] && [ "$samples" -le 199 ] ||
	fail "$samples RTT samples for 199 ACKs ($resp)"
# each sample reported (or held back: two ACKs within 100 us), each report to a QP or not
[ $((reports + limited)) = "$samples" ] && [ $((events + noflow)) = "$reports" ] &&
	[ "$events" -ge 100 ] ||
	fail "$samples samples: $reports reported, $limited held back; $events to a QP, $noflow without one"
[ "$rtt" -ge 3000000 ] && [ "$rtt" -lt 1000000000 ] || fail "QP $QPN's rtt $rtt ns, want 3 ms to 1 s"
[ "$min" -ge 3000000 ] || fail "the least sample $min ns, below the responder's 3 ms"
ok "200 AckReq frames ($resp): $stamped stamped, $samples RTT samples ($limited held back by the 100 us gap), $events to QP $QPN ($noflow before it existed); its rtt $rtt ns, the least $min ns"
win=$(echo "$q" | jq .window)
[ "$win" -gt 0 ] && [ "$win" -lt 12500 ] || fail "QP $QPN's swift window $win, want below one BDP (12500)"
ok "QP $QPN's swift window $win bytes (one BDP at 100 us: 12500): the samples reached its algorithm"
naks=$(counter transport_naks)
[ "$nakev" = 1 ] && [ "$naks" = 1 ] || fail "$nakev NAK events, $naks transport NAKs, 1 NAK sent"
ok "the NAK became QP $QPN's NAK event (nak_events $nakev, transport_naks $naks)"

# Frames without AckReq (ecn_frames.py's): no stamp, no sample.
ip netns exec "$NSB" python3 "$(dirname "$0")/lib/ecn_frames.py" send 10.79.0.1 0x111 20 1000 0 >/dev/null
sleep 0.2
[ "$(metric qpace_tc_frames_total rtt_stamped)" = "$stamped" ] ||
	fail "frames without AckReq were stamped"
ok "20 frames without AckReq: none stamped"

kill "$AGENT"
wait "$AGENT" 2>/dev/null
[ -z "$(ip netns exec "$NSB" tc filter show dev qrb ingress)" ] ||
	fail "the ingress filter stayed after qpaced exited"
ok "on exit the ingress filter went"
