#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# QPs register with the agent by themselves (the QP library, verbs/qp_agent.c): two soft
# hosts on loopback (qp-agent-check) stream WRITEs from A to B while
#   - qpacectl list -j shows both QPNs;
#   - qpacectl set QPN rate 200M changes the rate A actually sends at (±20%);
#   - kill -9 of the agent: A keeps sending, at the 200M it last had for the agent's
#     --fallback-hold (300 ms), then at the safe rate, 1/10 of its 400M link;
#   - a new agent: both QPs register again by themselves within 2 s, and the agent's
#     rate (the 400M link rate under --cc none) is in force again.
set -u
. "$(dirname "$0")/lib/agent.sh"

UDPPORT=$((FBPORT + 3000))
start_agent --cc none --fallback-hold 300ms
"$BIN/qp-agent-check" --socket "$SOCK" -r "$TABLE" -p "$UDPPORT" -l 400M --time 9s --interval 100ms \
	>"$TMP/check.out" 2>"$TMP/check.err" &
CP=$!
PIDS="$PIDS $CP"

# Mb/s the QP sent at in the last N intervals (skipping the newest, maybe mixed), the rate
# in force there, why no agent rate was (none = it was) and the gate's mode.
recent() { tail -n $(($1 + 1)) "$TMP/check.out" | head -n "$1" | grep '^interval' | awk '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	  s += v["rate_bps"]; n++; f = v["in_force_bps"]; fb = v["fallback"]; m = v["mode"] }
	END { if (n) printf "%.0f %.0f %s %s\n", s / n / 1e6, f / 1e6, fb, m }'; }
within() { awk -v a="$1" -v want="$2" 'BEGIN { exit !(a >= 0.8 * want && a <= 1.2 * want) }'; }

i=0
until grep -q "^qpn" "$TMP/check.out" 2>/dev/null && grep -q "a=registered b=registered" "$TMP/check.out"; do
	i=$((i + 1))
	[ $i -lt 150 ] || fail "QPs not registered: $(cat "$TMP/check.out" "$TMP/check.err")"
	kill -0 $CP 2>/dev/null || fail "qp-agent-check exited: $(cat "$TMP/check.err")"
	sleep 0.02
done
QA=$(sed -n 's/^qpn a=\(0x[0-9a-f]*\) b=.*/\1/p' "$TMP/check.out")
QB=$(sed -n 's/^qpn a=.* b=\(0x[0-9a-f]*\)$/\1/p' "$TMP/check.out")
J=$(ctl list -j)
echo "$J" | grep -q "\"qpn\":\"$QA\"" && echo "$J" | grep -q "\"qpn\":\"$QB\"" \
	|| fail "qpacectl list -j lacks $QA or $QB: $J"
ok "qpacectl list -j shows both QPNs ($QA, $QB), registered by the library"
# Each QP's program reports its posted PSN and enforcer (TXSTATE): the soft backend has no
# per-QP rate limits, so the gate enforces both; the agent took every record.
echo "$J" | grep -q "\"qpn\":\"$QA\".*\"enforce\":\"gate\"" \
	|| fail "qpacectl list -j: $QA not enforced by the gate: $J"
S=$(ctl status -j)
for c in control_malformed control_rejected; do
	echo "$S" | grep -q "\"$c\":0[,}]" || fail "agent counter $c not 0 (TXSTATE refused?): $S"
done
ok "qpacectl list -j: ENF gate for the soft QPs; their TXSTATE records accepted"

sleep 1
set -- $(recent 5)
echo "  at the agent's rate: $1 Mb/s (in force $2 Mb/s)"
[ "$2" = 400 ] || fail "rate in force $2, want 400 (the link rate under --cc none)"
ctl set "$QA" rate 200M >/dev/null || fail "qpacectl set"
sleep 0.8
set -- $(recent 5)
echo "  after qpacectl set $QA rate 200M: $1 Mb/s over 0.5 s (in force $2 Mb/s)"
[ "$2" = 200 ] || fail "rate in force $2 after set, want 200"
within "$1" 200 || fail "sent at $1 Mb/s, want 200 ±20%: $(tail -n 8 "$TMP/check.out")"
ok "qpacectl set rate 200M: the QP sends at $1 Mb/s"

kill -9 "$AGENT"
wait "$AGENT" 2>/dev/null
sleep 1.5
set -- $(recent 5)
echo "  agent killed 1.5 s ago: $1 Mb/s (in force $2 Mb/s, $4: $3)"
[ "$2" = 40 ] && [ "$4" = safe ] || fail "not at the safe rate: $(tail -n 5 "$TMP/check.out")"
within "$1" 40 || fail "sent at $1 Mb/s after the agent died, want 40 ±20%"
grep -q "gone" "$TMP/check.err" || fail "no line about the lost agent: $(cat "$TMP/check.err")"
grep -q "holding the agent's last rate 200Mb/s, window and credits for 300 ms" "$TMP/check.err" ||
	fail "no line about the hold: $(cat "$TMP/check.err")"
ok "agent killed: the QP held 200M for 300 ms, then kept sending at the safe rate ($1 Mb/s)"

start_agent --cc none
T0=$(date +%s%N)
i=0
until J=$(ctl list -j) && echo "$J" | grep -q "\"qpn\":\"$QA\"" && echo "$J" | grep -q "\"qpn\":\"$QB\""; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "QPs not registered again within 2 s: $J"
	sleep 0.02
done
MS=$(( ($(date +%s%N) - T0) / 1000000 ))
sleep 1
set -- $(recent 5)
echo "  agent back: both QPs registered again after $MS ms; $1 Mb/s (in force $2 Mb/s)"
[ "$2" = 400 ] && [ "$3" = none ] && [ "$4" = agent ] ||
	fail "agent's rate not in force: $(tail -n 5 "$TMP/check.out")"
ok "agent restarted: re-registered by themselves in $MS ms, the agent's 400M in force again"
kill -0 $CP 2>/dev/null || fail "qp-agent-check died: $(cat "$TMP/check.err")"
