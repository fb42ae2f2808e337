#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpacectl's output (list, show, -j, set, status, top's snapshot, errors) and the Prometheus
# endpoint scraped with curl.
set -u
. "$(dirname "$0")/lib/agent.sh"
command -v curl >/dev/null || sh scripts/deps.sh curl || fail "curl is needed (apt-get install curl)"

start_agent --cc ffd
register a local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 count=2 link=10G rtt=10s
probe send to=127.0.0.1:$FBPORT type=level level=3 src=127.0.0.1 dst=10.0.0.2 qp=0x21 qlen=70000 >/dev/null
# ffd halves the QP's window (2000 -> 1000 B: agent/cc/ffd.c), at the line rate
[ "$(wait_window 0x11 1000)" = 1000 ] || fail "level 3: window $(window_of 0x11), want 1000"

# list: a header and one row per QP, the columns the issue names
ctl list >"$TMP/list" || fail "qpacectl list failed"
head -n 1 "$TMP/list" | grep -q "^QPN *PEER *ALGO *RATE *TARGET *ENF *WIRE *FLOOR *CREDITS *UTIL *QUEUE *RTT *BYTES *RETX *OWNER$" ||
	fail "list header: $(head -n 1 "$TMP/list")"
grep -q "^0x000011 *10.0.0.2 *ffd *10G *10G *gate *0 *no *0 *0.00 *68K *10s *0 *0 *-$" "$TMP/list" || fail "list row: $(cat "$TMP/list")"
[ "$(wc -l <"$TMP/list")" = 3 ] || fail "list: $(cat "$TMP/list")"
ok "list: header and rows ($(sed -n 2p "$TMP/list" | tr -s ' '))"

# show: every field, text and JSON agree
ctl show 0x11 >"$TMP/show"
for kv in "qpn 0x000011" "peer_qpn 0x000021" "rate 10G" "algo ffd" "queue 68K" "feedback 1" \
	"override no" "receiver no"; do
	k=${kv%% *}
	v=${kv#* }
	grep -q "^$k  *$v\$" "$TMP/show" || fail "show: no \"$k $v\" in $(cat "$TMP/show")"
done
ctl show 0x11 -j >"$TMP/show.json"
grep -q '"qpn":"0x000011"' "$TMP/show.json" && grep -q '"rate":10000000000' "$TMP/show.json" &&
	grep -q '"window":1000,' "$TMP/show.json" &&
	grep -q '"queue":70000' "$TMP/show.json" || fail "show -j: $(cat "$TMP/show.json")"
if command -v python3 >/dev/null; then
	ctl list -j | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d)==2 and d[0]["algo"]=="ffd", d' ||
		fail "list -j is not the JSON expected"
	ctl status -j | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["qps"]==2 and d["counters"]["feedback_accepted"]==1, d' ||
		fail "status -j is not the JSON expected"
fi
ok "show: text and JSON carry the same keys; list -j / status -j parse as JSON"

# set: manual rate (logged), back to the algorithm, algorithm switch; errors exit 1
ctl set 0x12 rate 2.5G || fail "set rate"
[ "$(rate_of 0x12)" = 2500000000 ] || fail "set rate: table says $(rate_of 0x12)"
grep -q "qp 0x000012: manual rate 2.5G" "$TMP/qpaced.log" || fail "override not logged"
ctl set 0x12 rate auto && [ "$(rate_of 0x12)" = 10000000000 ] || fail "set rate auto"
ctl set 0x12 algo dcqcn && ctl show 0x12 | grep -q "^algo  *dcqcn$" || fail "set algo"
ctl set 0x12 rate 20G 2>"$TMP/err" && fail "a rate above the link was accepted"
grep -q "out of range" "$TMP/err" || fail "set error: $(cat "$TMP/err")"
ctl set 0x99 rate 1G 2>/dev/null && fail "set on an unknown QP succeeded"
ok "set: rate override logged and cleared, algorithm switched, bad values refused"

ctl frobnicate 2>"$TMP/err" && fail "unknown command succeeded"
grep -q 'unknown command "frobnicate"' "$TMP/err" && grep -q "^usage: qpacectl" "$TMP/err" ||
	fail "unknown command: $(cat "$TMP/err")"
ctl set 0x11 rate 5G || fail "set 0x11's rate"   # so the two QPs' rates differ
ctl top --sort rate >"$TMP/top" || fail "top snapshot"
grep -q "^qpaced pid $AGENT " "$TMP/top" && grep -q "RATEv" "$TMP/top" || fail "top: $(cat "$TMP/top")"
[ "$(sed -n 3p "$TMP/top" | cut -c1-8)" = 0x000012 ] || fail "top not sorted by rate: $(cat "$TMP/top")"
ctl top --sort bogus 2>/dev/null && fail "top accepted an unknown sort key"
ok "unknown command: error + usage, exit 1; top (not a tty): one snapshot sorted by rate"

# Prometheus text, scraped with curl
curl -sf "http://127.0.0.1:$MPORT/metrics" >"$TMP/metrics" || fail "scrape failed"
grep -q '^qpace_qp_rate_bps{qpn="0x000011",peer="10.0.0.2",peer_qpn="0x000021",algo="ffd"} 5000000000$' "$TMP/metrics" ||
	fail "no per-QP rate: $(grep qp_rate "$TMP/metrics")"
grep -q '^qpace_agent_feedback_accepted_total 1$' "$TMP/metrics" &&
	grep -q '^qpace_agent_feedback_rejected_total{reason="source"} 0$' "$TMP/metrics" &&
	grep -q '^qpace_agent_feedback_malformed_total{kind="truncated"} 0$' "$TMP/metrics" &&
	grep -q '^qpace_agent_qps 2$' "$TMP/metrics" || fail "agent counters missing"
# every sample belongs to a family announced with # TYPE, and each family is announced once
awk '/^# TYPE/ { if (seen[$3]++) { print "twice: " $3; bad = 1 } ; t[$3] = 1; next }
     /^#/ { next }
     { n = $1; sub(/\{.*/, "", n); b = n; sub(/_(sum|count)$/, "", b)
       if (!(n in t) && !(b in t)) { print "no TYPE: " n; bad = 1 } }
     END { exit bad }' "$TMP/metrics" || fail "malformed exposition"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/nothing")
[ "$code" = 404 ] || fail "GET /nothing: $code"
ok "metrics: $(grep -vc '^#' "$TMP/metrics") samples, per-QP and agent families well-formed; 404 elsewhere"
