#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Virtual time is deterministic: the same incast with the same seed gives byte-identical
# outputs (the JSON report, flows.csv, rates.csv, queue.csv, the switch's switch.csv and
# switch.json) run after run, and with two CPU hogs on this 2-core machine. The JSON's
# wall_s (wall-clock seconds of the simulation: a figure of the machine, not of the
# network) is the one field taken out before comparing. Three runs: hpcc with IA credits
# (INT reports, grants), dcqcn (switch notices as CNPs, drops, timeouts) and hpcc with
# lossless PFC (291 PAUSE frames to the hosts, which obey them: no drops).
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
tmp=$(mktemp -d)
hogs=""
trap 'for p in $hogs; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0

run() {   # run DIR ARGS...
	dir=$1
	shift
	mkdir -p "$dir"
	"$B" incast --clock virtual -N 8 -s 256K -R 3 -j --no-plots -o "$dir" "$@" \
		2>"$dir.err" | sed 's/,"wall_s":[0-9.]*//' >"$dir/report.json" || {
		echo "vt_determinism: qpace-bench failed: $(cat "$dir.err")" >&2
		fail=1
	}
}
same() {  # same WHAT DIR1 DIR2
	for f in report.json flows.csv rates.csv queue.csv switch.csv switch.json; do
		if [ ! -s "$2/$f" ]; then
			echo "  FAIL: $1: $2/$f missing or empty" >&2
			fail=1
		elif cmp -s "$2/$f" "$3/$f"; then
			echo "  ok: $1: $f identical ($(wc -c <"$2/$f") bytes)"
		else
			echo "  FAIL: $1: $f differs" >&2
			cmp "$2/$f" "$3/$f" >&2
			fail=1
		fi
	done
}

for algo in "hpcc --credits ia" "dcqcn" "none --pfc xoff=16K,class=0,lossless"; do
	name=$(echo "$algo" | tr -d ' -' | tr '=,' '__')
	# shellcheck disable=SC2086
	run "$tmp/$name.a" --cc $algo
	# shellcheck disable=SC2086
	run "$tmp/$name.b" --cc $algo
	same "$name, run twice" "$tmp/$name.a" "$tmp/$name.b"
	for i in 1 2; do
		timeout 30 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	# shellcheck disable=SC2086
	run "$tmp/$name.c" --cc $algo
	for p in $hogs; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	hogs=""
	same "$name, under two CPU hogs" "$tmp/$name.a" "$tmp/$name.c"
done
# A different seed is a different run (the comparison can tell runs apart).
run "$tmp/seed2" --cc hpcc --credits ia --seed 2
if cmp -s "$tmp/hpcccreditsia.a/rates.csv" "$tmp/seed2/rates.csv"; then
	echo "  FAIL: --seed 2 gave the same rates.csv as --seed 1" >&2
	fail=1
else
	echo "  ok: --seed 2 differs from --seed 1"
fi
# --pcap in virtual time: a record for every frame the switch sent (its tx_frames), each
# stamped with simulated time, the same stamps and lengths in two runs; the frames differ
# only in the RDMA WRITEs' RETH address (the hosts' buffers are real memory, placed anew
# each run) and so in their ICRC.
for k in 1 2; do
	run "$tmp/pcap$k" --cc hpcc --pcap "$tmp/pcap$k.pcap"
done
if python3 "$(dirname "$0")/lib/pcap_records.py" compare "$tmp/pcap1.pcap" "$tmp/pcap2.pcap" \
	"$tmp/pcap1/switch.json"
then
	echo "  ok: --pcap: every frame sent, stamped with simulated time, the same in two runs"
else
	echo "  FAIL: --pcap in virtual time (above)" >&2
	fail=1
fi
# Two lanes (run --lanes 2: the hosts on one thread, the switches on the other, meeting
# every microsecond): a 16-host leaf-spine at 100G under WebSearch, run twice, once under
# two CPU hogs, and once with both lanes on one thread: the same bytes in every file.
# The report's machine figures (wall_s, peak_rss_bytes, huge_page_bytes, threads and the
# lanes' wall seconds) are taken out of report.json before comparing.
printf 'poisson cdf=websearch load=0.5 duration=1ms\n' >"$tmp/ws.wl"
lanes() {   # lanes DIR ARGS...
	dir=$1
	shift
	"$B" run --gen leaf-spine:leaves=4,spines=2,hosts-per-leaf=4,rate=100G \
		--workload "$tmp/ws.wl" --cc hpcc --lanes 2 -j --no-plots --no-progress \
		-o "$dir" "$@" >"$dir.out" 2>"$dir.err" || {
		echo "vt_determinism: qpace-bench run --lanes 2 failed: $(cat "$dir.err")" >&2
		fail=1
	}
	python3 - "$dir/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("wall_s", "peak_rss_bytes", "huge_page_bytes", "threads", "hosts_lane_s",
          "switches_lane_s"):
    r.pop(k, None)
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
}
same_run() {   # same_run WHAT DIR1 DIR2
	for f in report.json flows.csv fct_bins.csv links.csv rates.csv queue.csv switch.csv \
		switch.json; do
		if [ ! -s "$2/$f" ]; then
			echo "  FAIL: $1: $2/$f missing or empty" >&2
			fail=1
		elif ! cmp -s "$2/$f" "$3/$f"; then
			echo "  FAIL: $1: $f differs" >&2
			cmp "$2/$f" "$3/$f" >&2
			fail=1
		fi
	done
	[ $fail = 0 ] && echo "  ok: $1: every file identical"
}
lanes "$tmp/l.a"
lanes "$tmp/l.b"
same_run "--lanes 2, run twice" "$tmp/l.a" "$tmp/l.b"
for i in 1 2; do
	timeout 60 sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
lanes "$tmp/l.c"
for p in $hogs; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
hogs=""
same_run "--lanes 2, under two CPU hogs" "$tmp/l.a" "$tmp/l.c"
lanes "$tmp/l.d" --threads 1
same_run "--lanes 2, on one thread" "$tmp/l.a" "$tmp/l.d"
grep -q '"lanes": 2' "$tmp/l.a/report.json" || {
	echo "  FAIL: --lanes 2: the report does not name its lanes" >&2
	fail=1
}
[ $fail = 0 ] && echo "vt_determinism: ok"
exit $fail
