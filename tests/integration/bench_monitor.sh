#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# While an incast runs, `qpacectl list -j` (and so `qpacectl top`) shows its QPs: the bench
# serves the agent's control protocol for its emulated hosts.
set -u
BUILD=${BUILD:-build}
sock=$(mktemp -u /tmp/qpace-bench-test.XXXXXX.sock)
"$BUILD/bin/qpace-bench" incast -N 4 -s 8M -R 1 --cc hpcc --base-port 23400 --monitor "$sock" \
	--no-plots >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$sock"' EXIT INT TERM
n=0
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	sleep 0.25
	out=$(QPACE_SOCKET=$sock "$BUILD/bin/qpacectl" list -j 2>/dev/null) || continue
	n=$(echo "$out" | grep -o '"algo":"hpcc"' | wc -l)
	[ "$n" -eq 4 ] && break
done
if [ "$n" -ne 4 ]; then
	echo "bench_monitor: FAIL: qpacectl saw $n of 4 hpcc QPs" >&2
	exit 1
fi
echo "bench_monitor: ok (qpacectl list -j shows the 4 senders' QPs)"
