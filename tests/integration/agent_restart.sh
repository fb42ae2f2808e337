#!/bin/sh
# Killing the agent mid-run leaves a sender (the real pacing gate and rate source) running
# at the fallback rate; a restarted agent and a re-registration bring the agent's rate
# back. A clean stop (SIGTERM) removes the socket and the table and the gate falls back at
# once. QPs of a process that dies are reaped.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc none
register q local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=400M rtt=100us
"$BIN/qpace-probe" sender table="$TABLE" qpn=0x11 seconds=5 fallback=100M interval=200ms \
	>"$TMP/sender.out" 2>&1 &
SP=$!
PIDS="$PIDS $SP"
sleep 1.5
kill -9 "$AGENT"
wait "$AGENT" 2>/dev/null
sleep 1.5
start_agent --cc none
register q2 local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=400M rtt=100us
wait $SP
kill -0 $SP 2>/dev/null && fail "sender still running"

# phases by the sender's clock: agent alive (0.3..1.4 s), dead (2.0..2.9 s), back (>= 4.4 s,
# the rate source reopens a replaced table within a second)
awk -v lo1=0.3 -v hi1=1.4 -v lo2=2.0 -v hi2=2.9 -v lo3=4.4 '
/^sender/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	t = v["t"] + 0; r = v["rate_bps"] / 1e6; f = v["fallback"]; inf = v["in_force_bps"] / 1e6
	ph = (t >= lo1 && t <= hi1) ? 1 : (t >= lo2 && t <= hi2) ? 2 : (t >= lo3) ? 3 : 0
	if (!ph) next
	want = ph == 2 ? 100 : 400
	n[ph]++; sum[ph] += r
	if (inf != want || (ph == 2) != (f != "none")) { printf "FAIL: t=%.1f phase %d: in force %d Mb/s, fallback %s\n", t, ph, inf, f; bad = 1 }
}
END {
	for (ph = 1; ph <= 3; ph++) {
		want = ph == 2 ? 100 : 400
		if (!n[ph]) { print "FAIL: no intervals in phase " ph; exit 1 }
		m = sum[ph] / n[ph]
		printf "phase %d: %d intervals, mean %.0f Mb/s (want %d)\n", ph, n[ph], m, want
		if (m < 0.75 * want || m > 1.25 * want) bad = 1
	}
	exit bad
}' "$TMP/sender.out" >"$TMP/phases" || fail "$(cat "$TMP/phases" "$TMP/sender.out")"
sed 's/^/  /' "$TMP/phases"
grep "^gate" "$TMP/sender.out" | sed 's/^/  /'
ok "agent killed: the sender kept going at the 100M fallback; agent back: 400M again"

# clean stop: exit 0, names removed, gates fall back without waiting for staleness
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?
[ $rc = 0 ] || fail "qpaced exited $rc on SIGTERM"
[ ! -e "$SOCK" ] && [ ! -e "/dev/shm$TABLE" ] || fail "socket or table left after SIGTERM"
grep -q "stopping on" "$TMP/qpaced.log" || fail "no stop message"
ok "SIGTERM: exit 0, control socket and rate table removed"

# reaping: a registering process killed with SIGKILL loses its QPs
start_agent --cc none
register r local=127.0.0.1 peer=10.0.0.2 qpn=0x71 peer_qpn=0x81 count=3
[ "$(ctl list | grep -c '^0x0000')" = 3 ] || fail "3 QPs not registered"
kill -9 "$REG_PID"
wait_eq 3 counter reaped || fail "QPs of a killed process not reaped: $(ctl list)"
[ "$(ctl list | grep -c '^0x0000')" = 0 ] || fail "QPs left: $(ctl list)"
[ "$(probe rate table="$TABLE" qpn=0x71 | field status)" = no_slot ] || fail "slot not freed"
ok "a killed process's 3 QPs reaped, their rate-table slots freed"
