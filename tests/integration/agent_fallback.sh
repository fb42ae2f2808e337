#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# kill -9 of qpaced during congestion: two HPCC QPs on a 400M line, cut by INT reports of an
# overloaded hop (A mildly, to ~140M; B to HPCC's floor, 400 kb/s), each paced by a sender
# through the real gate and rate source. Then the agent dies. For each QP:
#   - the rate in force never rises above what the agent last published;
#   - the gate holds that rate for the agent's --fallback-hold (800 ms here, published in the
#     rate table), then falls to the safe rate: min(1/10 of the line = 40M, the last rate);
#   - what the sender actually sends stays within its rate in force (+25%);
#   - a restarted agent takes over (the QPs registered again: HPCC's 400M in force).
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc hpcc --fallback-hold 800ms --fallback-safe 100
reg() {
	register "$1" local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=400M rtt=10us \
		algo=hpcc count=2
}
reg q
# 200 ms intervals, sleeping waits: little CPU, so a loaded machine does not skew the rates
for s in a:0x11:16K b:0x12:1K; do
	name=${s%%:*}; rest=${s#*:}; qpn=${rest%%:*}; chunk=${rest#*:}
	"$BIN/qpace-probe" sender table="$TABLE" qpn="$qpn" link=400M seconds=6 interval=200ms \
		chunk="$chunk" wait=sleep >"$TMP/$name.out" 2>&1 &
	PIDS="$PIDS $!"
	eval "SP_$name=$!"
done
sleep 0.6
int() {
	probe send to=127.0.0.1:$FBPORT type=int hops=1 link=400M src=127.0.0.1 dst=10.0.0.2 \
		gap=20us "$@" >/dev/null
}
int qp=0x21 util=1.2 qlen=0 count=3
int qp=0x22 util=1.2 qlen=2000 count=20
RA=$(rate_of 0x11)
RB=$(rate_of 0x12)
echo "  congestion: the agent cut A to $RA b/s, B to $RB b/s (line 400M)"
[ "$RA" -gt 40000000 ] && [ "$RA" -lt 400000000 ] || fail "A cut to $RA, want 40M..400M"
[ "$RB" -lt 40000000 ] || fail "B cut to $RB, want below the 40M safe rate"
sleep 0.6
kill -9 "$AGENT"
wait "$AGENT" 2>/dev/null
sleep 2.2
start_agent --cc hpcc
reg q2
eval "wait \$SP_a \$SP_b"

# Phases from each sender's lines: agent (before the kill), hold, safe, agent again. The
# rate in force: never above R (the last one before the kill) while the agent is gone; R in
# the hold, min(R, 40M) after it; 400M once the new agent has the QP. Intervals next to a
# change mix two rates and are not measured, and so is the one after them (the rate in force
# is read at an interval's end: at load 2 the cut of B to 400 kb/s, read at 0.607 s, still
# let 12 KB at the old rate into the next interval, 909 kb/s, in two runs in a row); the
# others send at most 25% over their rate in force (plus one piece), and at least half of it.
check() {
	awk -v chunk="$2" '
	/^sender/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n++; rate[n] = v["rate_bps"]; inf[n] = v["in_force_bps"]; mode[n] = v["mode"]
	}
	function bad(msg) { printf "FAIL: interval %d: %s\n", i, msg; failed = 1; exit 1 }
	END {
		ph = 0; R = 0; safe = 0
		for (i = 1; i <= n; i++) {
			m = mode[i]
			want = m == "agent" ? (ph < 1 ? 0 : 1) : m == "hold" ? 1 : 2
			if (m == "agent" && ph >= 1) want = 3
			if (want < ph) bad("mode " m " after phase " ph)
			if (want == 1 && ph == 0) R = inf[i - 1]
			if (want == 2 && ph < 2) safe = R < 40e6 ? R : 40e6
			ph = want; cnt[ph]++
			if (ph == 1 && inf[i] != R) bad("held " inf[i] ", want the last rate " R)
			if (ph == 2 && inf[i] != safe) bad("safe " inf[i] ", want " safe)
			if ((ph == 1 || ph == 2) && inf[i] > R) bad("rate rose to " inf[i] " over " R)
			if (ph == 3 && inf[i] != 400e6) bad("agent back at " inf[i] ", want 400M")
			if (i > 2 && i < n && mode[i - 1] == m && mode[i + 1] == m &&
			    inf[i - 2] == inf[i] && inf[i - 1] == inf[i] && inf[i + 1] == inf[i]) {
				slack = chunk * 8 / 0.2
				if (rate[i] > 1.25 * inf[i] + slack) bad("sent " rate[i] " over " inf[i])
				if (rate[i] < 0.5 * inf[i] - slack) bad("sent " rate[i] " under " inf[i])
				sum[ph] += rate[i]; k[ph]++
			}
		}
		if (!R || cnt[1] < 2 || cnt[2] < 3 || cnt[3] < 2) {
			printf "FAIL: intervals agent %d, hold %d, safe %d, agent again %d\n",
			       cnt[0], cnt[1], cnt[2], cnt[3]
			exit 1
		}
		printf "last agent rate %.3f Mb/s; hold: %d intervals in force %.3f Mb/s, sent %.3f;" \
		       " safe: %d in force %.3f, sent %.3f; agent again: %d at 400 Mb/s\n", R / 1e6,
		       cnt[1], R / 1e6, k[1] ? sum[1] / k[1] / 1e6 : -1, cnt[2], safe / 1e6,
		       k[2] ? sum[2] / k[2] / 1e6 : -1, cnt[3]
	}' "$TMP/$1.out"
}
for s in a:16384 b:1024; do
	name=${s%%:*}
	out=$(check "$name" "${s#*:}") || fail "QP $name: $out
$(cat "$TMP/$name.out")"
	echo "  $name: $out"
	grep -q "holding the agent's last rate" "$TMP/$name.out" &&
		grep -q "no agent for 800 ms: pacing at the safe rate" "$TMP/$name.out" &&
		grep -q "in force again" "$TMP/$name.out" || fail "QP $name: gate lines missing:
$(grep '^gate' "$TMP/$name.out")"
done
ok "agent killed under congestion: both QPs held their last rate 800 ms, then the safe rate, never above it; the restarted agent took over"
