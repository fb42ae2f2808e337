#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# INT only where it is used: write_bw between two soft hosts through qpace-switch (default
# --int-flows wanted). With --cc none the sender's agent asks for no INT and the switch
# makes no report (it counts the frames it let go without one: int_unwanted); with
# --cc hpcc the agent asks (int_wants) and its data gets reports. --int-flows all brings
# back a report for every frame of an agent that asked for none. The switch's counters
# are read from --stats-json.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
P=23240
tmp=$(mktemp -d)
sw=""
fail=0
cleanup() {
	[ -n "$sw" ] && kill "$sw" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# counter NAME PORT: the switch's counter of port PORT (0 = the server's, 1 = the client's)
counter() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sw = d["switches"][0] if "switches" in d else d
print(sw["ports"][int(sys.argv[3])][sys.argv[2]])' "$tmp/stats.json" "$1" "$2"
}

run() {  # run NAME SWITCH_ARGS -- BENCH_ARGS...
	name=$1
	shift
	swargs=""
	while [ "$1" != "--" ]; do swargs="$swargs $1"; shift; done
	shift
	rm -f "$tmp/stats.json"
	# shellcheck disable=SC2086
	"$BUILD/bin/qpace-switch" --star 2 --base-port $P --rate 1G --quiet \
		--stats-json "$tmp/stats.json" $swargs &
	sw=$!
	sleep 0.3
	timeout 60 "$B" write_bw --backend soft --attach 127.0.0.1:$P --ip 10.0.0.1 \
		-p 18740 -n 500 -s 4K "$@" >"$tmp/server" 2>&1 &
	srv=$!
	timeout 50 "$B" write_bw --backend soft --attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 \
		-p 18740 -n 500 -s 4K "$@" 127.0.0.1 >"$tmp/client" 2>&1
	rc=$?
	wait $srv
	kill -TERM "$sw"
	wait "$sw"
	sw=""
	if [ $rc -ne 0 ] || [ ! -s "$tmp/stats.json" ]; then
		echo "FAIL: $name: write_bw rc $rc or no --stats-json" >&2
		cat "$tmp/client" "$tmp/server" >&2
		fail=1
		return 1
	fi
	# data flows client (port 1) -> server: its frames leave the switch on port 0
	reports=$(counter int_reports 0)
	unwanted=$(counter int_unwanted 0)
	wants=$(counter int_wants 1)
	frames=$(counter tx_frames 0)
	echo "$name: int_reports $reports, int_unwanted $unwanted, int_wants $wants"
}

check() {  # check WHAT CONDITION
	if [ "$2" = 1 ]; then echo "ok: $1"; else echo "FAIL: $1" >&2; fail=1; fi
}

if run none -- --cc none; then
	check "--cc none: no INT report" "$([ "$reports" -eq 0 ] && echo 1)"
	check "--cc none: every data frame counted unwanted (>= 500 x 4)" \
		"$([ "$unwanted" -ge 2000 ] && echo 1)"
	check "--cc none: the agent asked for nothing" "$([ "$wants" -eq 0 ] && echo 1)"
fi
if run hpcc -- --cc hpcc; then
	check "--cc hpcc: the agent asked" "$([ "$wants" -ge 1 ] && echo 1)"
	check "--cc hpcc: INT reports (>= 500 x 4 data frames)" \
		"$([ "$reports" -ge 2000 ] && echo 1)"
	check "--cc hpcc: none counted unwanted" "$([ "$unwanted" -eq 0 ] && echo 1)"
fi
if run none-all --int-flows all -- --cc none; then
	check "--int-flows all, --cc none: INT reports" "$([ "$reports" -ge 2000 ] && echo 1)"
fi
if run sampled --int-sample every=8 -- --cc hpcc; then
	check "--int-sample every=8: one report per 8 data frames ($reports of $frames)" \
		"$([ "$reports" -ge 240 ] && [ $((reports * 8)) -le "$frames" ] && echo 1)"
fi
[ "$fail" = 0 ] && echo "bench_int_wanted: ok"
exit "$fail"
