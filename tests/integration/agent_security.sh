#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Allow-list and authentication enforced through real sockets; a fuzzed feedback stream
# (random, truncated, mutated and oversized datagrams; bounded and seeded) does not crash
# the daemon, is counted, and valid feedback still works afterwards.
set -u
. "$(dirname "$0")/lib/agent.sh"

keyhex() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
keyhex >"$TMP/key"
keyhex >"$TMP/wrong"
chmod 600 "$TMP/key" "$TMP/wrong"
L3="type=level level=3 src=127.0.0.1 dst=10.0.0.2 qp=0x21"

start_agent --cc ffd --allow 127.0.0.1 --key "$TMP/key"
register q local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=10G rtt=10s

probe send to=127.0.0.1:$FBPORT from=127.0.0.2 key="$TMP/key" $L3 >/dev/null
wait_eq 1 counter feedback_rejected_source || fail "source 127.0.0.2 not rejected"
probe send to=127.0.0.1:$FBPORT $L3 >/dev/null
wait_eq 1 counter feedback_rejected_notag || fail "unsigned message not rejected"
probe send to=127.0.0.1:$FBPORT key="$TMP/wrong" $L3 >/dev/null
wait_eq 1 counter feedback_rejected_tag || fail "message under the wrong key not rejected"
[ "$(window_of 0x11)" = 2000 ] || fail "a rejected message changed the window: $(window_of 0x11)"
ok "rejected: source outside --allow, no tag, wrong key; window untouched"

out=$(probe send to=127.0.0.1:$FBPORT key="$TMP/key" $L3 seq=9 replies=300)
# ffd halves the window (2000 -> 1000 B: agent/cc/ffd.c)
w=$(wait_window 0x11 1000)
[ "$w" = 1000 ] || fail "signed message from an allowed source: window $w, want 1000"
echo "$out" | grep -q "level=7 acked=3 seq=9 tag=ok" || fail "ack not signed: $out"
ok "signed message from an allowed source accepted; the agent's ack carries a good tag"
stop_agent

# fuzz: an agent without a key, so the datagrams reach the decoder
start_agent --cc ffd
register f local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=10G rtt=10s
probe fuzz to=127.0.0.1:$FBPORT count=20000 seed=7 >/dev/null
sleep 0.3
kill -0 "$AGENT" 2>/dev/null || fail "qpaced died under the fuzzed stream"
dg=$(counter feedback_datagrams)
acc=$(counter feedback_accepted)
bad=0
for k in proto truncated field type oversize; do
	bad=$((bad + $(counter feedback_malformed_$k)))
done
drops=$(counter feedback_kernel_drops)
[ $((dg + drops)) -ge 20000 ] || fail "datagrams $dg + kernel drops $drops < 20000 sent"
[ $((acc + bad)) -eq "$dg" ] || fail "accepted $acc + malformed $bad != datagrams $dg"
[ "$bad" -gt 10000 ] || fail "only $bad of 20000 fuzzed datagrams counted malformed"
lines=$(grep -c "first of its kind" "$TMP/qpaced.log")
[ "$lines" -le 12 ] || fail "$lines warning lines: malformed input must be logged once per kind"
before=$(window_of 0x11)
probe send to=127.0.0.1:$FBPORT $L3 >/dev/null
after=$(wait_window 0x11 $((before / 2)))
[ "$after" = $((before / 2)) ] ||
	fail "valid level 3 after the fuzz: window $before -> $after, want half"
ok "fuzz: 20000 datagrams, $acc accepted, $bad malformed (by kind), $drops kernel drops, $lines log lines; agent alive and still acting"
