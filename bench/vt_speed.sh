#!/bin/sh
# The virtual-time engine's speed on one core, against the issue's targets: per scenario
# the simulated and wall-clock time, events/s, packet-hops/s (every completed transmission
# on any link) and ns per packet-hop, and the target next to the measured wall time.
#   hpcc    HPCC's incast: 60 x 500 KB to one receiver at 100 Gb/s, 1 us links, HPCC,
#           PFC on (lossless, XOFF at 32 KiB per ingress port, 32 MiB buffer); target
#           under 2 s wall.
#   iatcp   IA-TCP's: 96 x 256 KB at 1 Gb/s, 20 us links (base RTT ~130 us), IA credits
#           over no other control, 100 iterations (rounds); target under 60 s wall.
#   demo    make demo's incast for scale: 16 x 256 KiB at 250 Mb/s, hpcc, 5 rounds.
# On a machine other jobs share, wall time measures them too: the CPU seconds of the run
# (user + system, /usr/bin/time) are printed beside it, and hops per CPU second.
# usage: bench/vt_speed.sh [BUILD]   (VT_SPEED_ROUNDS=N runs iatcp with N rounds)
set -eu
BUILD=${1:-build}
B=$BUILD/bin/qpace-bench
ROUNDS=${VT_SPEED_ROUNDS:-100}
one_core=""
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
command -v taskset >/dev/null 2>&1 && one_core="taskset -c 0"

num() {   # num JSON KEY
	echo "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2
}
row() {   # row NAME TARGET_S ARGS...
	name=$1
	target=$2
	shift 2
	cpu=-1
	if [ -x /usr/bin/time ]; then
		out=$(/usr/bin/time -f "%U %S" -o "$tmp" $one_core "$B" incast --clock virtual -j \
			--no-plots "$@" 2>/dev/null)
		cpu=$(awk '{ print $1 + $2 }' "$tmp")
	else
		out=$($one_core "$B" incast --clock virtual -j --no-plots "$@" 2>/dev/null)
	fi
	awk -v n="$name" -v t="$target" -v sim="$(num "$out" sim_s)" -v cpu="$cpu" \
	    -v wall="$(num "$out" wall_s)" -v ev="$(num "$out" events)" \
	    -v hops="$(num "$out" packet_hops)" -v g="$(num "$out" goodput_ratio)" 'BEGIN {
		printf "%-6s %9.4f %8.2f %7s %8s %10.0f %12.0f %9.0f %12s %7.3f  %s\n", n, sim,
		       wall, cpu < 0 ? "-" : sprintf("%.2f", cpu), t == "-" ? "-" : t,
		       ev / wall, hops / wall, wall * 1e9 / hops,
		       cpu <= 0 ? "-" : sprintf("%.0f", hops / cpu), g,
		       t == "-" ? "" : (wall < t ? "under target" : "OVER TARGET")
	}'
}

echo "qpace virtual time, one core ($one_core), $(date -u +%Y-%m-%d)"
printf "%-6s %9s %8s %7s %8s %10s %12s %9s %12s %7s\n" scen sim_s wall_s cpu_s target \
	events/s packet-hops/s ns/hop hops/cpu-s goodput
row hpcc 2 -N 60 -s 500K -R 1 --rate 100G --delay 1us --buffer 32M --cc hpcc \
	--pfc xoff=32K,headroom=auto,class=0,lossless
row iatcp 60 -N 96 -s 256K -R "$ROUNDS" --rate 1G --delay 20us --cc none --credits ia
row demo - -N 16 -s 256K -R 5 --cc hpcc
