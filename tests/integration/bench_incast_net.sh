#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The networked incast, perftest style: a receiver with no address accepts 3 senders, each
# its own process naming the receiver last; soft hosts on a running qpace-switch (the same
# path as --backend ibv between machines). Every flow of every round completes and the
# receiver reports them; a sender killed mid-run is reported by address and the rest go on.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
P=23700
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$BUILD/bin/qpace-switch" --star 4 --base-port $P --rate 1G --buffer 256K --quiet &
pids="$!"
sleep 0.3
common="-N 3 -s 64K -R 3 -p 18900 --cc none --timeout 10s"
# shellcheck disable=SC2086
timeout 60 "$B" incast $common --attach 127.0.0.1:$P --ip 10.0.0.1 -j >"$tmp/recv" 2>"$tmp/err" &
recv=$!
for i in 1 2 3; do
	sleep 0.3
	# shellcheck disable=SC2086
	timeout 60 "$B" incast $common --attach 127.0.0.1:$((P + 2 * i)) --ip 10.0.0.$((i + 1)) \
		127.0.0.1 >/dev/null 2>&1 &
	pids="$pids $!"
done
wait $recv || { echo "bench_incast_net: FAIL: receiver exit" >&2; cat "$tmp/err" >&2; exit 1; }
cat "$tmp/recv"
grep -q '"flows":9,"flows_done":9' "$tmp/recv" || {
	echo "bench_incast_net: FAIL: not every flow completed" >&2
	exit 1
}

# A sender that dies: the receiver names it and finishes the others' rounds.
# 1000 rounds (~0.5 GB, seconds at the star's 1 Gb/s): the victim is still sending when it
# is killed (at 100 rounds a cooperatively polling sender had finished within the second)
common="-N 2 -s 256K -R 1000 -p 18901 --cc none --timeout 10s"
# shellcheck disable=SC2086
timeout 90 "$B" incast $common --attach 127.0.0.1:$P --ip 10.0.0.1 -j >"$tmp/recv" 2>"$tmp/err" &
recv=$!
sleep 0.3
# shellcheck disable=SC2086
timeout 90 "$B" incast $common --attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 127.0.0.1 \
	>/dev/null 2>&1 &
pids="$pids $!"
sleep 0.3
# shellcheck disable=SC2086
"$B" incast $common --attach 127.0.0.1:$((P + 4)) --ip 10.0.0.3 127.0.0.1 >/dev/null 2>&1 &
victim=$!
sleep 1
kill -9 $victim
wait $recv || { echo "bench_incast_net: FAIL: receiver exit after a lost sender" >&2; exit 1; }
cat "$tmp/err" "$tmp/recv" | cut -c1-200
grep -q "lost sender 2 (10.0.0.3" "$tmp/err" || {
	echo "bench_incast_net: FAIL: the lost sender is not named" >&2
	exit 1
}
grep -q '"rounds":100' "$tmp/recv" || { echo "bench_incast_net: FAIL: rounds" >&2; exit 1; }
echo "bench_incast_net: ok"
