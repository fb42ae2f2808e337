#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Signed telemetry end to end, and the attacks of docs/security.md tried against it. Host A (a
# network namespace) runs qpaced and sends RoCEv2 data at twice the 100 Mb/s port rate to
# host B through qpace-switch (packet ports on veth, in a third namespace), so the switch's
# INT reports cut A's QP's rate. Both have the same key unless said otherwise.
#   1 signed telemetry is accepted (counts) and acted on (the rate falls), nothing rejected
#   2 2000 forged INT reports from an allowed address: unsigned (notag), then signed with
#     another key (tag); the rate does not move
#   3 50 datagrams the switch sent (its capture), replayed to the agent that took them,
#     then to a fresh agent: all rejected as replays, the fresh agent's QP stays at its
#     line rate; the same 50 to a fresh agent without a key do cut it (what the key stops)
#   4 a switch without a key: every datagram rejected (notag), the rate does not move
#   5 qpace-bench --key (emulated hosts, FFD): the switch it starts signs every level
#     message and takes the hosts' signed acks, none refused; the same hosts on a switch
#     without a key refuse its telemetry
set -u
. "$(dirname "$0")/lib/agent.sh"
NA=qpt$RUN_ID-a NB=qpt$RUN_ID-b NS=qpt$RUN_ID-s
A=10.77.9.1 B=10.77.9.2 SWIP=10.77.9.254
SW=""
trap 'for n in $NA $NB $NS; do ip netns del "$n" 2>/dev/null; done; cleanup' EXIT

keyhex() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
keyhex >"$TMP/key"
keyhex >"$TMP/wrong"
chmod 600 "$TMP/key" "$TMP/wrong"

for n in $NA $NB $NS; do
	ip netns add "$n" || fail "ip netns add $n (needs root)"
	ip -n "$n" link set lo up
done
ip link add a0 netns $NA type veth peer name qa netns $NS || fail "veth"
ip link add b0 netns $NB type veth peer name qb netns $NS || fail "veth"
for d in "$NA a0" "$NB b0" "$NS qa" "$NS qb"; do
	set -- $d
	ip -n "$1" link set "$2" up
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip -n $NA addr add $A/24 dev a0
ip -n $NB addr add $B/24 dev b0

# start_switch [key=FILE|none]: the switch, capturing what it sends to A
start_switch() {
	cat >"$TMP/t.topo" <<EOF
switch sw rate=100M buffer=256K delay=10us ip=$SWIP $1
port sw pa packet dev=qa
port sw pb packet dev=qb
EOF
	rm -f "$TMP/switch.log"
	ip netns exec $NS "$BIN/qpace-switch" -c "$TMP/t.topo" --pcap "$TMP/cap.pcap" \
		--pcap-port pa --duration 60s 2>"$TMP/switch.log" &
	SW=$!
	PIDS="$PIDS $SW"
	for i in $(seq 100); do
		grep -q '^qpace-switch: switch' "$TMP/switch.log" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "switch did not start: $(cat "$TMP/switch.log")"
}
stop_switch() { kill "$SW"; wait "$SW" 2>/dev/null; }

# start_in_a [--key FILE]: qpaced in A on UDP 4792, its QP 0x11 -> B's 0x21 registered
# (100M line rate)
start_in_a() {
	ip netns exec $NA "$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" --metrics off \
		--feedback 0.0.0.0:4792 --allow $SWIP,127.0.0.1 --cc hpcc "$@" \
		2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	i=0
	until ctl status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "qpaced did not start"
		sleep 0.02
	done
	register q local=$A peer=$B qpn=0x11 peer_qpn=0x21 link=100M rtt=100us mtu=1000
}

rate() { rate_of 0x11; }
rejected() {
	echo "source $(counter feedback_rejected_source) notag $(counter feedback_rejected_notag)" \
		"tag $(counter feedback_rejected_tag) replay $(counter feedback_rejected_replay)" \
		"future $(counter feedback_rejected_future)"
}
# traffic SECONDS: RoCEv2 data A -> B at 200 Mb/s (B absorbs it)
traffic() {
	ip netns exec $NB timeout 10 "$BIN/qpace-swtest" recv --bind $B:4791 --duration "$1s" \
		>/dev/null &
	sleep 0.1
	ip netns exec $NA "$BIN/qpace-swtest" send --to $B:4791 --rate 200M --size 1000 \
		--duration "$1s" --qp 0x21 >"$TMP/send.out" || fail "traffic"
	sleep 0.3
}
in_a() { ip netns exec $NA "$@"; }

# ---- 1 ----
start_switch "key=$TMP/key"
start_in_a --key "$TMP/key"
[ "$(rate)" = 100000000 ] || fail "QP not at its line rate: $(rate)"
traffic 1
acc=$(counter feedback_accepted)
cut=$(rate)
[ "$acc" -gt 1000 ] || fail "signed telemetry accepted: $acc ($(rejected))"
[ "$(rejected)" = "source 0 notag 0 tag 0 replay 0 future 0" ] || fail "rejected: $(rejected)"
[ "$cut" -lt 100000000 ] || fail "the rate did not fall: $cut"
ok "1: signed telemetry: $acc messages accepted, none rejected; HPCC cut the rate 100M -> $cut"

# ---- 2 ----
FORGE="type=int src=$A dst=$B qp=0x21 hops=1 util=3 link=100M count=2000 gap=20us"
in_a "$BIN/qpace-probe" send to=127.0.0.1:4792 from=127.0.0.1 $FORGE >/dev/null
in_a "$BIN/qpace-probe" send to=127.0.0.1:4792 from=127.0.0.1 key="$TMP/wrong" $FORGE \
	>/dev/null
sleep 0.3
[ "$(counter feedback_rejected_notag)" = 2000 ] || fail "unsigned forgeries: $(rejected)"
[ "$(counter feedback_rejected_tag)" = 2000 ] || fail "forgeries under another key: $(rejected)"
[ "$(rate)" = "$cut" ] || fail "forgeries moved the rate: $cut -> $(rate)"
[ "$(counter feedback_accepted)" = "$acc" ] || fail "a forgery was accepted"
ok "2: 2000 unsigned + 2000 wrongly signed INT reports from an allowed address: 2000 notag," \
	"2000 tag, rate unchanged ($cut)"

# ---- 3 ----
stop_switch
in_a "$BIN/qpace-probe" replay pcap="$TMP/cap.pcap" to=127.0.0.1:4792 from=127.0.0.1 \
	count=50 >"$TMP/replay.out"
grep -q "sent=50" "$TMP/replay.out" || fail "replay: $(cat "$TMP/replay.out")"
sleep 0.3
[ "$(counter feedback_rejected_replay)" = 50 ] || fail "replay to the same agent: $(rejected)"
[ "$(rate)" = "$cut" ] || fail "replays moved the rate"
stop_agent
start_in_a --key "$TMP/key"
in_a "$BIN/qpace-probe" replay pcap="$TMP/cap.pcap" to=127.0.0.1:4792 from=127.0.0.1 \
	count=50 >/dev/null
sleep 0.3
[ "$(counter feedback_rejected_replay)" = 50 ] || fail "replay to a fresh agent: $(rejected)"
[ "$(counter feedback_accepted)" = 0 ] || fail "a replay was accepted by the fresh agent"
[ "$(rate)" = 100000000 ] || fail "replays moved the fresh agent's rate: $(rate)"
stop_agent
start_in_a
in_a "$BIN/qpace-probe" replay pcap="$TMP/cap.pcap" to=127.0.0.1:4792 from=127.0.0.1 \
	count=50 >/dev/null
sleep 0.3
nokey_acc=$(counter feedback_accepted)
nokey_rate=$(rate)
[ "$nokey_acc" -gt 0 ] && [ "$nokey_rate" -lt 100000000 ] ||
	fail "control: the replay did nothing to an agent without a key ($nokey_acc, $nokey_rate)"
stop_agent
ok "3: 50 captured datagrams replayed: 50/50 rejected as replays by the agent that took" \
	"them and 50/50 by a fresh one (rate stays 100M); a fresh agent without a key took" \
	"$nokey_acc messages from them and its rate fell to $nokey_rate"

# ---- 4 ----
start_switch key=none
start_in_a --key "$TMP/key"
traffic 0.5
notag=$(counter feedback_rejected_notag)
[ "$(counter feedback_accepted)" = 0 ] || fail "unsigned telemetry accepted"
[ "$notag" -gt 200 ] || fail "unsigned telemetry: $(rejected)"
[ "$(rate)" = 100000000 ] || fail "unsigned telemetry moved the rate: $(rate)"
ok "4: a switch without a key: $notag datagrams rejected (notag), 0 accepted, rate 100M"

# ---- 5 ----
BENCH="$BIN/qpace-bench incast -N 4 -s 512K -R 2 --cc ffd --key $TMP/key --no-plots -v"
$BENCH --base-port $((FBPORT + 100)) -o "$TMP/out" >/dev/null 2>"$TMP/bench.log" ||
	fail "incast with a key: $(tail -3 "$TMP/bench.log")"
J="$BIN/qpace-swtest json $TMP/out/switch.json s1"
levels=$($J p0 levels) acks=$($J p0 level_acks)
grep -q '"signed_messages": '"$levels"',' "$TMP/out/switch.json" ||
	fail "not every level message signed ($levels levels)"
grep -c '"acks_rejected_[a-z]*": 0,' "$TMP/out/switch.json" | grep -qx 4 ||
	fail "the switch refused acks: $(grep acks_rejected "$TMP/out/switch.json")"
[ "$acks" -gt 0 ] || fail "no level ack taken"
! grep -q "dropped" "$TMP/bench.log" ||
	fail "a host dropped feedback: $(grep dropped "$TMP/bench.log")"
P=$((FBPORT + 200))
"$BIN/qpace-switch" --star 5 --base-port $P --rate 250M --levels 20K,40K,80K --quiet \
	--duration 30s 2>/dev/null &
PIDS="$PIDS $!"
sleep 0.3
$BENCH --switch 127.0.0.1:$P >/dev/null 2>"$TMP/bench2.log" || fail "incast, keyless switch"
grep -q "dropped: not signed" "$TMP/bench2.log" || fail "keyed hosts took unsigned telemetry"
ok "5: qpace-bench --key: $levels level messages signed, $acks acks taken, none refused;" \
	"on a keyless switch the hosts refuse its telemetry"
echo "agent_trust: ok"
