#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Feedback through real sockets changes the rate table as the algorithm says: FFD levels
# (exact factors) with their acknowledgement back to the switch, HPCC under 5-hop INT (down
# under overload, up again when it clears), the echo role, and unknown flows counted.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc ffd --peer-port "$PEERPORT"
# FFD steers a TCP window (agent/cc/ffd.c): 2 packets of the QP's MTU (1000 B) to start,
# at the line rate. rtt 10s: ffd cuts at most once per RTT (a deeper level within it cuts
# only what it cuts beyond the last cut; a shallower one, nothing), so within the test the
# factors are exact
register ffd local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=10G rtt=10s
[ "$(rate_of 0x11)" = 10000000000 ] || fail "initial rate $(rate_of 0x11)"
[ "$(window_of 0x11)" = 2000 ] || fail "initial window $(window_of 0x11), want 2000"

probe send to=127.0.0.1:$FBPORT type=level level=2 src=127.0.0.1 dst=10.0.0.2 qp=0x21 >/dev/null
w=$(wait_window 0x11 1500)
[ "$w" = 1500 ] || fail "level 2: window $w, want 1500"
ok "level 2 x0.75 (window 2000 -> 1500 B)"

out=$(probe send to=127.0.0.1:$FBPORT type=level level=3 src=127.0.0.1 dst=10.0.0.2 \
	qp=0x21 seq=5 replies=300)
# level 3 within the RTT of level 2's cut: only what it cuts beyond it, x0.5/0.75
w=$(wait_window 0x11 1000)
[ "$w" = 1000 ] || fail "level 3: window $w, want 1000"
echo "$out" | grep -q "type=level src=127.0.0.1 dst=10.0.0.2 qp=0x000021 level=7 acked=3 seq=5" ||
	fail "no level-7 ack for level 3 came back: $out"
ok "level 3 deepens the cut to a half of the window before it (1000 B) and is acknowledged to the switch"

probe send to=127.0.0.1:$FBPORT type=level level=2 src=127.0.0.1 dst=10.0.0.2 qp=0x21 >/dev/null
probe send to=127.0.0.1:$FBPORT type=level level=0 src=127.0.0.1 dst=10.0.0.2 qp=0x21 >/dev/null
wait_eq 4 ctl_feedback_of 0x11 || fail "the four levels did not all reach the QP"
# level 0: standard TCP, which grows the window per ACK; no ACK came, so it stays
[ "$(window_of 0x11)" = 1000 ] || fail "level 2 after 3, then 0: window $(window_of 0x11), want 1000"
[ "$(rate_of 0x11)" = 10000000000 ] || fail "ffd changed the rate: $(rate_of 0x11)"
ok "level 2 after 3 within the RTT cuts nothing, level 0 grows only on ACKs (1000 B); the rate stays the line's"

# HPCC: 5-hop INT with the last hop at 120% and a queue, one report per 20 us
register hpcc local=127.0.0.1 peer=10.0.0.2 qpn=0x12 peer_qpn=0x22 link=10G rtt=10us algo=hpcc
probe send to=127.0.0.1:$FBPORT type=int hops=5 util=1.2 qlen=20000 src=127.0.0.1 \
	dst=10.0.0.2 qp=0x22 count=200 gap=20us >/dev/null
down=$(wait_rate 0x12 -lt 5000000000)
[ "$down" -lt 5000000000 ] || fail "hpcc under overload: rate $down, want < 5G"
probe send to=127.0.0.1:$FBPORT type=int hops=5 util=0.3 qlen=0 src=127.0.0.1 \
	dst=10.0.0.2 qp=0x22 psn=1000 count=2000 gap=20us >/dev/null
up=$(wait_rate 0x12 -gt "$down")
[ "$up" -gt "$down" ] || fail "hpcc after the overload cleared: rate $up, not above $down"
ok "hpcc: 10G -> $down b/s under 120% load, back up to $up b/s at 30%"

# echo role: INT delivered to us as the receiver goes on to the sender's agent
register rx local=127.0.0.1 peer=127.0.0.1 qpn=0x13 peer_qpn=0x23 link=10G rtt=10us
"$BIN/qpace-probe" listen port=$PEERPORT count=1 timeout=3 >"$TMP/echo.out" &
LP=$!
PIDS="$PIDS $LP"
sleep 0.2
probe send to=127.0.0.1:$FBPORT type=int to_receiver=on src=127.0.0.1 dst=127.0.0.1 qp=0x13 \
	psn=77 hops=3 >/dev/null
wait $LP
grep -q "type=echo src=127.0.0.1 dst=127.0.0.1 qp=0x000013 psn=77 hops=3" "$TMP/echo.out" ||
	fail "no echo: $(cat "$TMP/echo.out")"
ok "INT to the receiver echoed to the sender's agent (port $PEERPORT)"

before=$(counter feedback_unknown_flow)
probe send to=127.0.0.1:$FBPORT type=level level=3 src=127.0.0.1 dst=10.0.0.9 qp=0x99 >/dev/null
wait_eq $((before + 1)) counter feedback_unknown_flow || fail "unknown flow not counted"
ok "feedback for no local QP counted (feedback_unknown_flow)"
