#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# IA credit grants for 5 senders through real sockets follow the W/Δ schedule (loose
# bounds: real time on a shared machine), with a 500 us period, so the agent's timers must
# fire well below a millisecond; the sending side turns received grants into cumulative
# credits and credit gating, and drops the gating when grants stop.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc none --credits ia --peer-port "$PEERPORT"
"$BIN/qpace-probe" listen port=$PEERPORT timeout=3 >"$TMP/grants.out" &
LP=$!
PIDS="$PIDS $LP"
sleep 0.2
# C = 1 Gb/s, RTT = 500 us: C*RTT = 62500 B; n = 5, MTU 1000: W = 12, delta = 0,
# period 500 us: each sender 12000 B every 500 us (2000 grants/s), 96 Mb/s each, 480 in all
register rx local=127.0.0.1 peer=127.0.0.1 qpn=0x31 peer_qpn=0x41 count=5 receiver=on \
	link=1G rtt=500us mtu=1000
wait $LP

awk '
/type=credit/ {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	t = v["t"]; q = v["qp"]
	if (!(q in first)) { first[q] = t; nq++ }
	if (t >= first[q] + 0.2 && t < first[q] + 2.2) {
		# (the first grants may come while fewer than 5 QPs are registered: other W)
		if (v["bytes"] != 12000 || v["interval_ns"] != 500000) { bad++; next }
		cnt[q]++
		if (q in last) { g = t - last[q]; ngap[q]++; if (g >= 0.0004 && g <= 0.0006) near[q]++ }
	}
	last[q] = t
}
END {
	if (bad) { print "FAIL: " bad " grants with bytes != 12000 or interval != 500us"; exit 1 }
	if (nq != 5) { print "FAIL: grants for " nq " senders, want 5"; exit 1 }
	for (q in cnt) {
		# 2 s at one grant per 500 us = 4000; allow 25% for a noisy machine
		if (cnt[q] < 3000 || cnt[q] > 4400) { print "FAIL: " q ": " cnt[q] " grants in 2 s, want ~4000"; exit 1 }
		# the median gap within 400..600 us: at least half the gaps are
		if (near[q] * 2 < ngap[q]) { print "FAIL: " q ": " near[q] " of " ngap[q] " gaps within 400..600 us"; exit 1 }
		printf "%s %d grants in 2 s, %.0f%% of gaps within 500 +- 100 us\n", q, cnt[q], 100 * near[q] / ngap[q]
	}
}' "$TMP/grants.out" >"$TMP/grants.sum" || fail "$(cat "$TMP/grants.sum")"
sed 's/^/  /' "$TMP/grants.sum"
ok "IA: 5 senders, W=12 (12000 B) every 500 us each, grants on schedule through the daemon"

# n changes as QPs go: the registrations end, the link's pacer goes, grants stop
kill "$REG_PID"
sleep 0.3
probe listen port=$PEERPORT timeout=1 >"$TMP/after.out"
[ "$(grep -c type=credit "$TMP/after.out")" = 0 ] || fail "grants continue after the QPs left"
ok "grants stop when the receiving QPs are unregistered"

# sending side: grants add up in the rate table and gate the QP; silence ends the gating
register tx local=127.0.0.1 peer=10.0.0.2 qpn=0x51 peer_qpn=0x61 link=1G rtt=100us
probe send to=127.0.0.1:$FBPORT type=credit src=127.0.0.1 dst=10.0.0.2 qp=0x61 bytes=3000 \
	interval=50ms count=3 gap=1ms >/dev/null
line=$(probe rate table="$TABLE" qpn=0x51)
[ "$(echo "$line" | field credit_bytes)" = 9000 ] || fail "credits: $line, want 9000 bytes"
[ "$(echo "$line" | field flags)" = 1 ] || fail "credit gating not on: $line"
sleep 0.4   # 4 intervals of 50 ms without a grant
line=$(probe rate table="$TABLE" qpn=0x51)
[ "$(echo "$line" | field flags)" = 0 ] || fail "credit gating still on after silence: $line"
ok "3 grants -> 9000 B of credits, gating on; off again after 4 silent intervals"
