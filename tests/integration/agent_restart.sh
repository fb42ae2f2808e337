#!/bin/sh
# Killing the agent mid-run leaves a sender (the real pacing gate and rate source) running
# at the fallback rate; a restarted agent and a re-registration bring the agent's rate
# back. A clean stop (SIGTERM) removes the socket and the table and the gate falls back at
# once. QPs of a process that dies are reaped.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc none
register q local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=400M rtt=100us
# 64 KiB pieces and sleeping waits: a piece every 1.3 ms at 400M, little CPU, so the
# sender's rate does not hinge on getting a CPU of its own on a loaded machine
"$BIN/qpace-probe" sender table="$TABLE" qpn=0x11 seconds=6 fallback=100M interval=200ms \
	chunk=64K wait=sleep >"$TMP/sender.out" 2>&1 &
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

# The sender's intervals must go: agent rate (400M) -> fallback (100M) -> agent rate again,
# each phase at least 3 intervals long (2 for the last); intervals next to a change are
# mixed and not measured; the others deliver their rate in force: at most 25% above, and
# at least half of it (the gate's precision is bench-gate's subject; here a sender starved
# of CPU on a loaded machine loses time it cannot catch up: the bucket holds one burst).
awk '
/^sender/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	n++; r[n] = v["rate_bps"] / 1e6; inf[n] = v["in_force_bps"] / 1e6; fb[n] = v["fallback"]
}
END {
	ph = 1
	for (i = 1; i <= n; i++) {
		want = ph == 2 ? 100 : 400
		if ((ph == 2) != (fb[i] != "none") || inf[i] != want) {
			if (ph == 3) { printf "FAIL: interval %d: %s at %d Mb/s after the agent came back\n", i, fb[i], inf[i]; exit 1 }
			ph++; i--; continue
		}
		cnt[ph]++
		if (i > 1 && i < n && fb[i - 1] == fb[i] && fb[i + 1] == fb[i]) { m[ph] += r[i]; k[ph]++ }
	}
	for (p = 1; p <= 3; p++) {
		want = p == 2 ? 100 : 400
		if (cnt[p] < (p == 3 ? 2 : 3) || !k[p]) { printf "FAIL: phase %d has %d intervals\n", p, cnt[p]; exit 1 }
		printf "phase %d (%s): %d intervals, mean %.0f Mb/s in the settled ones (want %d)\n", p, p == 2 ? "agent dead, fallback" : "agent rate", cnt[p], m[p] / k[p], want
		if (m[p] / k[p] < 0.5 * want || m[p] / k[p] > 1.25 * want) exit 1
	}
}' "$TMP/sender.out" >"$TMP/phases" || fail "$(cat "$TMP/phases"; echo; cat "$TMP/sender.out")"
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
