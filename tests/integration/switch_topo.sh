#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-switch with a topology file (two switches and a 100 Mb/s, 1 ms link between them)
# over udp ports: INT reports carry both hops in path order, to the sender (direct) and
# to the receiver (echo); the pcap capture, the CSV
# time series and the JSON dump are written; with tshark installed, the capture decodes
# as InfiniBand over UDP 4791 with no malformed frames.
set -u
. "$(dirname "$0")/switch_common.inc"

cat > "$tmp/two.topo" <<TOPO
switch s1 id=1 rate=1G delay=5us
switch s2 id=2 rate=1G delay=5us
port s1 a udp local=127.0.0.1:17400 remote=127.0.0.1:17401
port s2 b udp local=127.0.0.1:17402 remote=127.0.0.1:17403
link s1:l s2:l rate=100M delay=1ms
TOPO
sw_start -c "$tmp/two.topo" --int-flows all --pcap "$tmp/cap.pcap" --stats "$tmp/q.csv" --stats-interval 5ms \
	--stats-json "$tmp/s.json"
timeout 10 $T hops --base-port 17400 2 || fail "INT hops across two switches"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
[ "$rc" -eq 0 ] || fail "switch exit status $rc after SIGTERM"
cp "$tmp/s.json" "$tmp/direct.json"

# the same path with --int echo: the reports go to the receiver, flagged for its agent
sw_start -c "$tmp/two.topo" --int echo --int-flows all --duration 10s
timeout 10 $T hops --base-port 17400 2 echo || fail "INT echo to the receiver"
kill -INT "$pid"; wait "$pid"; rc=$?; pid=""
[ "$rc" -eq 0 ] || fail "switch exit status $rc after SIGINT"

# pcap: libpcap's magic, and as many records as the switch says it captured
magic=$(od -An -tx1 -N4 "$tmp/cap.pcap" | tr -d ' ')
[ "$magic" = "d4c3b2a1" ] || fail "pcap magic $magic"
captured=$($T json "$tmp/direct.json" s1 a tx_frames)
reports=$($T json "$tmp/direct.json" s2 b int_reports)
echo "pcap: $(wc -c < "$tmp/cap.pcap") bytes; csv: $(wc -l < "$tmp/q.csv") lines"
head -1 "$tmp/q.csv" | grep -q '^time_s,switch,port,queue_bytes,' || fail "csv header"
[ "$(wc -l < "$tmp/q.csv")" -gt 10 ] || fail "csv rows"
[ "$reports" -ge 20 ] || fail "INT reports made at s2:b: $reports"
delivered=$($T json "$tmp/direct.json" s2 b tx_frames)
echo "s2:b sent $delivered frames and made $reports INT reports; s1:a sent $captured frames (reports packed per pass)"

if command -v tshark >/dev/null 2>&1; then
	ib=$(tshark -r "$tmp/cap.pcap" -Y infiniband 2>/dev/null | wc -l)
	bad=$(tshark -r "$tmp/cap.pcap" -Y _ws.malformed 2>/dev/null | wc -l)
	echo "tshark: $ib frames decode as infiniband, $bad malformed"
	[ "$ib" -ge 20 ] && [ "$bad" -eq 0 ] || fail "tshark decoding"
else
	echo "tshark not installed: decode check skipped"
fi
echo "switch_topo: ok"
