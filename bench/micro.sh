#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The micro-benchmarks, each program's JSON (one run each), then its figures as FIGURE lines
# (bench/figure.sh) for docs/figures.md:
#   cc     bench-cc: nanoseconds per event of each congestion-control algorithm (make bench-cc)
#   icrc   bench-icrc: nanoseconds per RoCEv2 ICRC, zlib against ISA-L
#   gate   bench-gate: the pacing gate's achieved rate against its target (real time)
#   agent  qpaced-bench: reports per second one qpaced sustains, arrival-to-rate-table delay
# usage: bench/micro.sh [BUILD] [PART...]   (default: every part; make bench-micro)
# gate and agent time real things: run them alone (flock /tmp/qpace-heavy.lock, as make
# bench-micro does on this project's shared machines) and read their spread.
set -eu
. "$(dirname "$0")/figure.sh"
BUILD=${1:-build}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- cc icrc gate agent
B=$BUILD/bin
command -v jq >/dev/null 2>&1 || { echo "micro: needs jq" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

for part in "$@"; do
	case $part in
	cc)
		"$B/bench-cc" -j | tee "$tmp/cc"
		cc() {   # cc ALGO KEY: that algorithm's median ns per event
			jq -r --arg a "$1" '.results[] | select(.algorithm == $a) |
				"\(.ns_per_event_p50) ns"' "$tmp/cc"
		}
		figure cc.hpcc.ns "$(cc hpcc)" "make bench-cc" "hpcc per INT report of 5 hops: median ns per event, 7 rounds of 200,000"
		figure cc.acc.ns "$(cc acc)" "make bench-cc" "acc per INT report of 5 hops, 1/64 notices: median ns per event"
		figure cc.dcqcn.ns "$(cc dcqcn)" "make bench-cc" "dcqcn per CNP and timer: median ns per event"
		figure cc.ffd.ns "$(cc ffd)" "make bench-cc" "ffd per congestion level and timer: median ns per event"
		figure cc.idcc.ns "$(cc idcc)" "make bench-cc" "idcc per INT report of 5 hops and RTT: median ns per event"
		figure cc.none.ns "$(cc none)" "make bench-cc" "none per INT report of 5 hops: median ns per event"
		;;
	icrc)
		"$B/bench-icrc" -j | tee "$tmp/icrc"
		icrc() {   # icrc PAYLOAD CRC
			jq -r --argjson p "$1" --arg c "$2" '.results[] |
				select(.payload == $p and .crc == $c) | "\(.ns_per_frame_p50) ns"' "$tmp/icrc"
		}
		figure icrc.1k.frame-icrc "$(icrc 1024 frame_icrc)" "make bench-micro" \
			"the ICRC of a *1 KB RoCEv2 frame*, all of frame_icrc (ISA-L's CRC, headers masked): median ns, 7 rounds of 200,000"
		figure icrc.1k.zlib "$(icrc 1024 zlib)" "make bench-micro" \
			"zlib's crc32 over the same spans of a *1 KB RoCEv2 frame*, for comparison: median ns"
		;;
	gate)
		"$B/bench-gate" -m sleep,hybrid,spin -d 500ms -j >"$tmp/gate"
		jq -r '"\(.target_bps / 1e6) Mb/s \(.mode): error \(.error_pct)%, CPU \(.cpu_pct)%, stalled \(.stall_ms) ms"' "$tmp/gate"
		gate() {   # gate MODE TARGET_BPS: its error, in percent
			jq -r --arg m "$1" --argjson t "$2" 'select(.mode == $m and .target_bps == $t) |
				"\(.error_pct)%"' "$tmp/gate" | tail -1
		}
		figure gate.hybrid.1g "$(gate hybrid 1000000000)" "make bench-micro" \
			"the pacing gate, *hybrid wait* (sleep, then spin the last 80 µs), 4 KiB pieces at 1 Gb/s: achieved rate's error"
		figure gate.hybrid.2g "$(gate hybrid 2000000000)" "make bench-micro" \
			"the pacing gate, *hybrid wait*, 4 KiB pieces at 2 Gb/s: achieved rate's error"
		figure gate.sleep.1g "$(gate sleep 1000000000)" "make bench-micro" \
			"the pacing gate, *sleep only*, 4 KiB pieces at 1 Gb/s: achieved rate's error"
		;;
	agent)
		"$B/qpaced-bench" -j | tee "$tmp/agent"
		figure agent.core.reports "$(jq -r '"\(.core_reports_per_s / 1e6 * 100 | floor / 100) M/s"' "$tmp/agent")" \
			"make bench-micro" "the agent's *hpcc core alone*, 5-hop INT reports over 64 QPs: reports per second"
		figure agent.core.signed "$(jq -r '"\(.core_signed_reports_per_s / 1e6 * 100 | floor / 100) M/s"' "$tmp/agent")" \
			"make bench-micro" "the agent's *hpcc core alone*, every report signed (in the loop) and checked (tag, replay window): reports per second"
		figure agent.daemon.reports "$(jq -r '"\(.agent_reports_per_s / 1e3 | floor)k/s"' "$tmp/agent")" \
			"make bench-micro" "*qpaced on one core*, saturated with 5-hop INT reports over loopback UDP: reports per second"
		figure agent.delay.sleep.p99 "$(jq -r '.latency[] | select(.agent == "sleeping" and .rate == 10000) |
			"\(.p99_ns / 100 | floor / 10) µs"' "$tmp/agent")" "make bench-micro" \
			"*arrival to rate table*, a sleeping qpaced, 10,000 reports/s: p99 delay"
		figure agent.delay.busy.p99 "$(jq -r '.latency[] | select(.agent != "sleeping" and .rate == 10000) |
			"\(.p99_ns / 100 | floor / 10) µs"' "$tmp/agent")" "make bench-micro" \
			"*arrival to rate table*, qpaced --busy-poll 1ms, 10,000 reports/s: p99 delay"
		;;
	*) echo "micro: unknown part '$part' (cc, icrc, gate, agent)" >&2; exit 2 ;;
	esac
done
