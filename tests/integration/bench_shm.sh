#!/bin/sh
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
# Judges behaviour, not speed (docs/performance.md has the figures). About 10 s.
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

[ $fail = 0 ] && echo "bench_shm: ok" || echo "bench_shm: FAILED" >&2
exit $fail
