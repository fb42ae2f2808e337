#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shm ports end to end (qpace-switch --shm, the soft backend's shm=, qpace-bench
# --transport shm):
#   1. write_bw through `qpace-switch --star 2 --shm` with every RoCEv2 frame's ICRC
#      checked at the switch (--icrc-check 1): the client completes, every frame the
#      switch took from a ring was a RoCEv2 frame whose ICRC verified (the bytes crossed
#      the rings intact), each ring's frames match the port's counters, no slot or index
#      was refused, and the links go when the switch does.
#   2. A hostile host: garbage written into a live region (ring 0's head far ahead, every
#      slot length impossible) costs the switch counters and one line, never its life.
#   3. The real-time incast with --transport shm: every flow of every round completes,
#      and the bench's links are gone afterwards.
#   4. Offered rings: the plain `qpace-switch --star 2` and write_bw with no transport
#      flags take the rings by themselves (the banner and the switch say shm, every frame
#      through a ring, every ICRC good); on the same switch write_bw --transport udp goes
#      by datagram and turns the ports back; with --shm-offer off nothing is offered.
# Judges behaviour, not speed (docs/performance.md has the figures). About 15 s.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
S=$BUILD/bin/qpace-switch
P=23900
tmp=$(mktemp -d)
pids=""
fail=0
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
check() {  # check WHAT EXPR
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"; else
		echo "  FAIL: $1 ($2)" >&2
		fail=1
	fi
}
# port PORT KEY: a port's counter from the switch's JSON
port() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["switches"][0]["ports"] if p["name"] == sys.argv[2]][0]
print(p.get(sys.argv[3], -1))' "$tmp/sw.json" "$1" "$2"
}

echo "--- 1. write_bw over shm, every ICRC checked"
"$S" --star 2 --base-port $P --rate 1G --buffer 4M --shm "$tmp/ring" --icrc-check 1 \
	--stats-json "$tmp/sw.json" --quiet &
sw=$!
pids="$sw"
sleep 0.3
timeout 60 "$B" write_bw --backend soft --attach 127.0.0.1:$P --ip 10.0.0.1 -p $((P + 10)) \
	-s 64K -n 1000 --transport shm --shm "$tmp/ring.p0" >"$tmp/srv" 2>&1 &
srv=$!
pids="$pids $srv"
for _ in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.2
	ss -ltn 2>/dev/null | grep -q ":$((P + 10)) " && break
done
timeout 60 "$B" write_bw --backend soft --attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 \
	-p $((P + 10)) -s 64K -n 1000 --transport shm --shm "$tmp/ring.p1" --report_gbits \
	127.0.0.1 >"$tmp/cli" 2>&1
rc=$?
wait $srv
check "the client completed" "$rc == 0"
gbps=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v + 0 }' "$tmp/cli")
echo "  write_bw: $gbps Gb/s"
check "it moved data" "$gbps > 0"
kill "$sw"
wait "$sw"
pids=""
check "the links went with the switch" "$(ls "$tmp"/ring.p* 2>/dev/null | wc -l) == 0"
for p in p0 p1; do
	rx=$(port $p rx_frames) srx=$(port $p shm_rx_frames) tx=$(port $p tx_frames)
	stx=$(port $p shm_tx_frames) chk=$(port $p icrc_checked) bad=$(port $p icrc_bad)
	echo "  $p: rx $rx (ring $srx), tx $tx (ring $stx), ICRC checked $chk, bad $bad"
	check "$p: every frame in came from its ring" "$rx == $srx && $rx > 0"
	check "$p: every frame out went into its ring" "$tx == $stx && $tx > 0"
	# (but the host's ARP: a frame or two that are not RoCEv2)
	check "$p: every RoCEv2 frame in had a good ICRC" "$chk >= $rx - 2 && $bad == 0"
	check "$p: no slot or index refused" \
		"$(port $p shm_rx_bad_len) + $(port $p shm_rx_bad_index) + $(port $p shm_tx_bad_index) == 0"
done
p1_rx=$(port p1 rx_frames)
check "64 MB of 1 KB frames reached the switch from the client" "$p1_rx >= 64000"

echo "--- 2. garbage in a live region"
"$S" --star 1 --base-port $P --shm "$tmp/ring" --stats-json "$tmp/sw.json" --quiet \
	2>"$tmp/sw.err" &
sw=$!
pids="$sw"
sleep 0.3
python3 - "$tmp/ring.p0" <<'EOF'
import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, os.fstat(fd).st_size)
slots, slot = struct.unpack_from("<II", m, 8)
for i in range(slots):                   # every slot of ring 0: an impossible length
    struct.pack_into("<I", m, 4096 + i * slot, 0xffffffff)
struct.pack_into("<I", m, 64, 5)         # ring 0's head: five frames, all garbage
import time; time.sleep(0.3)
struct.pack_into("<I", m, 64, 0x7fffffff)   # then far beyond a ring's worth
time.sleep(0.3)
EOF
alive=0
kill -0 "$sw" 2>/dev/null && alive=1
check "the switch lives" "$alive == 1"
kill "$sw"
wait "$sw"
pids=""
check "bad lengths counted" "$(port p0 shm_rx_bad_len) == 5"
check "the bad head counted" "$(port p0 shm_rx_bad_index) >= 1"
check "and said once" "$(grep -c 'ring is corrupt' "$tmp/sw.err") >= 1"
sed 's/^/  switch: /' "$tmp/sw.err" | head -2

echo "--- 3. the real-time incast over shm"
out=$(timeout 60 "$B" incast --clock real -N 4 -s 64K -R 3 --rate 250M --cc hpcc -j --no-plots \
	--base-port $((P + 40)) --transport shm 2>/dev/null | tail -1)
echo "  $out" | cut -c1-400
flows=$(echo "$out" | grep -o '"flows":[0-9]*' | cut -d: -f2)
done_=$(echo "$out" | grep -o '"flows_done":[0-9]*' | cut -d: -f2)
check "every flow of every round completed" "${done_:-0} == 12 && ${flows:-0} == 12"
check "no link left behind" \
	"$(ls /dev/shm/qpace-bench-*-$((P + 40)).p* 2>/dev/null | wc -l) == 0"

echo "--- 4. offered rings: the plain star, write_bw without flags"
export QPACE_SHM_DIR="$tmp/offer"
mkdir -p "$QPACE_SHM_DIR"
# pair WHAT ARGS...: a write_bw server and client through the star at $P
pair() {
	what=$1
	shift
	timeout 60 "$B" write_bw --backend soft --attach 127.0.0.1:$P --ip 10.0.0.1 \
		-p $((P + 10)) -s 64K -n 500 "$@" >"$tmp/srv.$what" 2>&1 &
	srv=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.2
		ss -ltn 2>/dev/null | grep -q ":$((P + 10)) " && break
	done
	timeout 60 "$B" write_bw --backend soft --attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 \
		-p $((P + 10)) -s 64K -n 500 --report_gbits "$@" 127.0.0.1 >"$tmp/cli.$what" 2>&1
	rc=$?
	wait $srv
	check "$what: the client completed" "$rc == 0"
}
rm -f "$tmp/sw.json"
"$S" --star 2 --base-port $P --rate 1G --buffer 4M --icrc-check 1 \
	--stats-json "$tmp/sw.json" 2>"$tmp/sw.err" &
sw=$!
pids="$sw"
sleep 0.3
check "each port's rings offered" "$(ls "$QPACE_SHM_DIR" | grep -c '^qpace-sw-.*-127.0.0.1-') == 2"
pair auto
check "auto: the banner says shm" "$(grep -c 'Backend *: soft (shm)' "$tmp/cli.auto") == 1"
kill -USR1 "$sw"   # the counters now
sleep 0.3
for p in p0 p1; do
	rx=$(port $p rx_frames) srx=$(port $p shm_rx_frames) chk=$(port $p icrc_checked)
	echo "  $p: $(port $p transport), attaches $(port $p shm_attaches), rx $rx (ring $srx), ICRC checked $chk, bad $(port $p icrc_bad)"
	# Rings from the host's attach (change 1); back to datagrams once the switch has seen
	# it detach (change 2), which it sees on its next turn for that port: before or after
	# this dump, as the hosts' last frames and exits fall.
	mode="$(port $p transport) $(port $p shm_mode_changes)"
	check "$p: through the rings, datagrams only after its host left ($mode)" \
		"(\"$mode\" == \"shm 1\" || \"$mode\" == \"udp 2\") && $(port $p shm_attaches) == 1"
	check "$p: every frame in from its ring" "$rx == $srx && $rx > 0"
	check "$p: every RoCEv2 frame intact" "$chk >= $rx - 2 && $(port $p icrc_bad) == 0"
done
pair udp --transport udp
check "udp: the banner says udp" "$(grep -c 'Backend *: soft (udp)' "$tmp/cli.udp") == 1"
kill -USR1 "$sw"
sleep 0.3
for p in p0 p1; do
	check "$p: back to datagrams" "\"$(port $p transport)\" == \"udp\" && $(port $p shm_mode_changes) == 2"
done
kill "$sw"
wait "$sw"
pids=""
check "the offers went with the switch" "$(ls "$QPACE_SHM_DIR" | wc -l) == 0"
"$S" --star 2 --base-port $P --shm-offer off --duration 300ms --quiet &
sleep 0.15
check "--shm-offer off: nothing offered" "$(ls "$QPACE_SHM_DIR" | wc -l) == 0"
wait
unset QPACE_SHM_DIR

[ $fail = 0 ] && echo "bench_shm: ok" || echo "bench_shm: FAILED" >&2
exit $fail
