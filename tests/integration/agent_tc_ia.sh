#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# IA credits for unmodified receivers (docs/enforce.md): two qpaced, --enforce tc
# --credits ia --cc none, on the two ends of a veth pair between namespaces. S sends
# crafted RoCEv2 data (qpace-swtest, UDP 4791 with a BTH) of 3 "senders" (QPs 0x111-0x113
# at R); R's tc ingress program counts each flow's frames, R's qpaced makes each a receiving
# QP of its link's credit pacer (--wire-rate 10M: C), which answers the arrivals with
# CREDIT grants to S's agent; S's qpaced turns them into each flow's frame budget in its
# egress program's map, which holds the frames beyond it to the credit schedule (departure
# times; no fq on the CI host, so they are only stamped). Checked: every frame R counted
# was fed to the pacer; the bytes R granted are the bytes S took; S's map budget is S's
# credits of the generation, in frames; no flow sent more frames within budget than
# granted; frames beyond it held with departure times ahead; gating off after the expiry
# with the rate alone left; after a kill -9 of S's qpaced the program ignores the
# expired credits by itself.
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"

need jq curl bpftool
NSR=qpi$RUN_ID-r
NSS=qpi$RUN_ID-s
DR=qir$RUN_ID
DS=qis$RUN_ID
PIN_MNT=$TMP/bpffs
PIN=$PIN_MNT/qpace
MTU=256
veth_setup "$NSR" "$NSS" "$DR" "$DS" 10.79.0 "$PIN_MNT"

# R's receiving flows leave its pacer after 3 s without a frame (--ia-idle; default 1 s):
# on a loaded machine the checks between two phases took more than 1 s, and phase 1's
# flows had left before they were counted
IA_IDLE=3s
# start NS DEV ADDR SOCK RATE CNP: qpaced in NS on DEV, feedback on ADDR (grants cross the
# veth); R with --cnp off: its ingress program is there for the credits alone
start() {
	ns=$1 dev=$2 addr=$3 sock=$4 rate=$5 cnp=$6
	ip netns exec "$ns" "$BIN/qpaced" --socket "$sock" --rate-table "$TABLE-$dev" \
		--feedback "$addr:$FBPORT" --peer-port "$FBPORT" --allow 10.79.0.0/24 \
		--metrics "127.0.0.1:$MPORT" --cc none --credits ia --enforce tc --dev "$dev" \
		--bpf-pin "$PIN" --wire-rate "$rate" --wire-mtu $MTU --cnp "$cnp" \
		--ia-idle "$IA_IDLE" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	SOCK=$sock
	wait_agent
}
: >"$TMP/qpaced.log"
start "$NSR" "$DR" 10.79.0.1 "$TMP/r.sock" 10M off
R_PID=$AGENT
start "$NSS" "$DS" 10.79.0.2 "$TMP/s.sock" 1G on
S_PID=$AGENT
ctlr() { "$BIN/qpacectl" --socket "$TMP/r.sock" "$@" 2>/dev/null; }
ctls() { "$BIN/qpacectl" --socket "$TMP/s.sock" "$@" 2>/dev/null; }
metric() { # NS NAME EVENT
	ip netns exec "$1" curl -s "127.0.0.1:$MPORT/metrics" |
		sed -n "s/^$2{event=\"$3\"} //p"
}
send() { # QPN RATE DURATION: prints the frames sent
	ip netns exec "$NSS" "$BIN/qpace-swtest" send --to 10.79.0.1:4791 --rate "$2" \
		--size $MTU --duration "$3" --qp "$1" | sed -n 's/^sent \([0-9]*\) frames.*/\1/p'
}
# map NAME QPN FIELD...: the fields of the pinned S map entry of the flow to QPN (decimal);
# from the snapshot $TMP/NAME.json when there is one
map() {
	m=$1 q=$2
	shift 2
	f=$(echo "$@" | sed 's/\([a-z_]*\)/\\(.value.\1)/g')
	if [ -s "$TMP/$m.json" ]; then cat "$TMP/$m.json"; else
		bpftool -j map dump pinned "$PIN/$DS/$m"; fi |
		jq -r ".[] | .formatted | select(.key.dqpn == $q) | \"$f\""
}
cred() { # QPN: S's credits of the flow to QPN (from the snapshot when there is one)
	if [ -s "$TMP/s.list" ]; then cat "$TMP/s.list"; else ctls list -j; fi |
		jq ".[] | select(.peer_qpn == \"$1\") | .credits"
}
# until SECONDS CMD...: true once CMD succeeds, polled every 50 ms; false after SECONDS.
# Every wait on qpaced's state is a bounded poll, never a fixed sleep: the test must not
# depend on how fast this machine (and its sanitizer build) runs.
until_ok() {
	i=0 n=$(($1 * 20))
	shift
	until "$@"; do
		i=$((i + 1))
		[ $i -lt $n ] || return 1
		sleep 0.05
	done
}
[ "$(grep -c "IA credits for unmodified receivers" "$TMP/qpaced.log")" = 2 ] ||
	fail "not both qpaced log IA credits for unmodified receivers"
ip netns exec "$NSR" tc filter show dev "$DR" ingress | grep -q "qp_tc_ingress.*direct-action" ||
	fail "R (--cnp off): no ingress filter"
! grep -q "tc ingress on $DR: CE-marked" "$TMP/qpaced.log" || fail "R (--cnp off) sends CNPs"
ok "R (--cnp off) and S: qpaced --enforce tc --credits ia, the ingress program counting receiving flows"

# Phase 1: a few frames of each sender. R makes 3 receiving QPs, each arrival-clocked from
# its first frames; S makes 3 sending QPs from the wire and takes each one's first grant.
sent1=0
for q in 0x111 0x112 0x113; do
	n=$(send $q 100k 0.1s)
	sent1=$((sent1 + n))
done
r_fed() { [ "$(metric "$NSR" qpace_ia_total arrived_frames)" = "$1" ]; }
until_ok 5 r_fed "$sent1"
[ "$(metric "$NSR" qpace_ia_total flows_created)" = 3 ] ||
	fail "R: flows_created $(metric "$NSR" qpace_ia_total flows_created), want 3"
arr=$(metric "$NSR" qpace_ia_total arrived_frames)
[ "$arr" = "$sent1" ] || fail "R fed $arr frames to the pacer, S sent $sent1"
nrx=$(ctlr list -j | jq '[.[] | select(.receiver == true and .peer == "10.79.0.2")] | length')
[ "$nrx" = 3 ] || fail "R: $nrx receiving QPs from 10.79.0.2: $(ctlr list)"
s_granted() { [ "$(ctls list -j | jq '[.[] | select(.discovered == true and .credits > 0)] | length')" = 3 ]; }
until_ok 5 s_granted
for q in 0x000111 0x000112 0x000113; do
	c=$(ctls list -j | jq ".[] | select(.peer_qpn == \"$q\") | .credits")
	[ -n "$c" ] && [ "$c" -gt 0 ] || fail "S: the flow to $q has credits '$c': $(ctls list)"
done
c1=$(ctls list -j | jq '[.[] | select(.discovered == true) | .credits] | add')
for q in 0x000111 0x000112 0x000113; do   # phase 1's credits of each flow
	eval "C1$q=$(cred $q)"
done
ok "phase 1: $sent1 frames of 3 senders; R made 3 receiving QPs and fed all $sent1 frames to the pacer; S took $c1 B of first grants"

# Phase 2: the 3 senders at 8 Mb/s each for 1 s, 2.4x the 10 Mb/s R's pacer shares: the
# credits fall short, so S's program holds frames to the schedule.
# A quiet spell past R's 3 s --ia-idle, so R's receiving QPs leave the pacer and come
# back, and past S's credit expiry (100 ms), so phase 2 is a generation of its own at S
s_ungated() { [ "$(ctls list -j | jq '[.[] | select(.discovered == true) | .credit_gated] | any')" = false ]; }
r_idle() { [ "$(metric "$NSR" qpace_ia_total flows_idle)" = 3 ]; }
sleep 3
until_ok 5 r_idle ||
	fail "R: flows_idle $(metric "$NSR" qpace_ia_total flows_idle) after 8 s quiet, want 3"
until_ok 5 s_ungated || fail "S: credit gating still on after the quiet: $(ctls list -j)"
for q in 0x111 0x112 0x113; do
	send $q 8M 1s >"$TMP/sent.$q" &
	eval "P$q=\$!"
done
# while they send, every flow is gated, in the core and in S's map
s_gated() {
	[ "$(ctls list -j | jq '[.[] | select(.discovered == true) | .credit_gated] | all')" = true ] &&
		[ "$(bpftool -j map dump pinned "$PIN/$DS/qp_rates" |
			jq '[.[] | .formatted | select(.value.flags % 8 >= 4)] | length')" = 3 ]
}
until_ok 1 s_gated || fail "S: credit gating not on for every flow while they send: $(ctls list -j)"
wait $P0x111 $P0x112 $P0x113
# R's view first: its receiving QPs leave the pacer --ia-idle (3 s) after their last frame
sent2=$(($(cat "$TMP/sent.0x111") + $(cat "$TMP/sent.0x112") + $(cat "$TMP/sent.0x113")))
until_ok 2 r_fed $((sent1 + sent2))
ctlr list -j >"$TMP/r.list"
# S's state once the grants stopped: gating ends in the core 4 grant intervals (at least
# 100 ms) after the last one; the entry keeps the last grant's fields without the flag
until_ok 5 s_ungated || fail "S: credit gating still on 5 s after the last frame"
bpftool -j map dump pinned "$PIN/$DS/qp_rates" >"$TMP/qp_rates.json"
bpftool -j map dump pinned "$PIN/$DS/qp_state" >"$TMP/qp_state.json"
ctls list -j >"$TMP/s.list"
arr=$(metric "$NSR" qpace_ia_total arrived_frames)
[ "$arr" = $((sent1 + sent2)) ] || fail "R fed $arr frames to the pacer, S sent $((sent1 + sent2))"
[ "$(metric "$NSR" qpace_ia_total flows_created)" = 6 ] ||
	fail "R: flows_created $(metric "$NSR" qpace_ia_total flows_created), want 3 + 3 back from idle"
# what R's receiving QPs (registered again for phase 2) granted, S took on top of phase 1's
granted=$(jq '[.[] | select(.receiver == true) | .credits_granted] | add' "$TMP/r.list")
took=$(jq '[.[] | select(.discovered == true) | .credits] | add' "$TMP/s.list")
[ "$granted" = $((took - c1)) ] || fail "R granted $granted B in phase 2, S took $((took - c1)) B"
tot_frames=0
tot_held=0
for q in 273 274 275; do
	hq=$(printf "0x%06x" $q)
	set -- $(map qp_rates $q flags credit_frames credit_gen credit_win credit_interval_ns credit_next_ns)
	flags=$1 frames=$2 gen=$3 win=$4 ival=$5 cnext=$6
	set -- $(map qp_state $q credit_used credit_held pkts next_ns credit_gen last_ns)
	used=$1 held=$2 pkts=$3 next=$4 sgen=$5 last=$6
	cr=$(cred "$hq")
	eval "c1q=\$C1$hq"
	[ $((flags & 4)) = 0 ] || fail "flow $hq: the credit flag still set after gating ended (flags $flags)"
	[ "$gen" = "$sgen" ] && [ "$gen" -ge 2 ] || fail "flow $hq: generation $gen (state $sgen)"
	# the map's budget is the core's credits of this generation: all but phase 1's
	[ $((cr - c1q)) = $((frames * MTU)) ] ||
		fail "flow $hq: S took $cr B ($c1q B in phase 1), the map's budget is $frames frames"
	[ $((used - held)) -le "$frames" ] ||
		fail "flow $hq: $((used - held)) frames within a budget of $frames"
	[ "$held" -gt 0 ] && [ "$next" -gt "$last" ] ||
		fail "flow $hq: $held frames held, next departure $((next - last)) ns after the last frame"
	echo "  flow $hq: $pkts frames, $used against credits: $((used - held)) within the budget of $frames, $held held; grant rate $win frame(s) per $ival ns; next departure $(((next - last) / 1000000)) ms after the last frame (debt $((used - frames)) frames = $(((used - frames) / win * ival / 1000000)) ms at the grant rate)"
	tot_frames=$((tot_frames + frames))
	tot_held=$((tot_held + held))
done
gps=$(awk -v f=$tot_frames 'BEGIN { printf "%.0f", f }')
cap=$((10000000 / 8 / MTU))
ok "phase 2: $sent2 frames sent, all fed to R's pacer (its 3 QPs back from idle); R granted $granted B = what S took; S's budgets $tot_frames frames in ~1 s (C = 10 Mb/s is $cap MTU/s), $tot_held frames held to the schedule"
[ "$tot_frames" -ge $((cap / 5)) ] && [ "$tot_frames" -le $((cap * 3 / 2)) ] ||
	fail "the 3 budgets add up to $gps frames over ~1 s: outside 0.2..1.5 x C's $cap"

ok "no grant for the expiry interval: S's gating off, the credit flag gone from every map entry (the last grant's fields left)"
rm -f "$TMP/qp_rates.json" "$TMP/qp_state.json" "$TMP/s.list"

# kill -9 of S's qpaced while gated: the program ignores the credits past their expiry
# by itself (and the heartbeat's safe rate follows after --wire-hold).
send 0x111 8M 1s >/dev/null &
SP=$!
gated_111() { [ $(($(map qp_rates 273 flags) & 4)) = 4 ]; }
until_ok 1 gated_111 || fail "flow 0x111 not gated before the kill"
kill -9 "$S_PID"
wait $SP
set -- $(map qp_state 273 credit_used pkts)
u0=$1 p0=$2
sleep 0.3
n=$(send 0x111 1M 0.1s)
set -- $(map qp_state 273 credit_used pkts)
[ "$1" = "$u0" ] && [ "$2" = $((p0 + n)) ] ||
	fail "after kill -9 and the expiry: credit_used $u0 -> $1, frames $p0 -> $2 (sent $n)"
ok "kill -9 of S's qpaced: past the credits' expiry the program counts $n more frames of 0x111 and holds none to credits (credit_used stays $u0)"
kill "$R_PID"
wait "$R_PID" 2>/dev/null
[ -z "$(ip netns exec "$NSR" tc filter show dev "$DR" ingress)" ] &&
	! ip netns exec "$NSR" tc qdisc show dev "$DR" | grep -q clsact ||
	fail "R: a filter or clsact left after SIGTERM"
ip netns exec "$NSS" "$BIN/qpaced" --socket "$TMP/s.sock" --rate-table "$TABLE-$DS" \
	--feedback "127.0.0.1:$FBPORT" --metrics off --enforce off --dev "$DS" \
	--bpf-pin "$PIN" 2>>"$TMP/qpaced.log" &
AGENT=$!
PIDS="$PIDS $AGENT"
SOCK=$TMP/s.sock
wait_agent
stop_agent -TERM
[ -z "$(ip netns exec "$NSS" tc filter show dev "$DS" egress)" ] || fail "S: a filter left"
ok "R's exit left nothing; --enforce off removed what the killed qpaced left on S"
