#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace's virtual time against htsim (the UEC's packet-level simulator) on the same
# experiment files: htsim's own connection matrices, read by both unchanged, on the same
# fabric (a k = 8 fat-tree of 128 hosts, 100 Gb/s, 1 us links), one process each on one
# core (taskset -c 0), run alternately in the same sitting, COMPARE_REPS times (default 1).
#
#   HTSIM_SRC=DIR bench/htsim_compare.sh [BUILD]    (make bench-htsim HTSIM_SRC=DIR)
#
# DIR is htsim's source: the folder with its CMakeLists.txt (uet-htsim's htsim/sim), or a
# folder above it. It is built with cmake into BUILD/htsim (htsim_roce and htsim_hpcc;
# its googletest off), never inside this tree's sources. Without HTSIM_SRC it prints one
# line and exits 0.
#
# Rows (the connection matrix is DIR/datacenter/connection_matrices/NAME):
#   roce    incast_128.cm (127 -> 1 x 2,000,000 B to host 33): htsim_roce (PFC, no CC)
#           against qpace-bench run --cc none with PFC (xoff=32K,headroom=auto,class=0,
#           lossless)
#   hpcc    the same file: htsim_hpcc against --cc hpcc with PFC
#   lossy   the same file, qpace --cc none without PFC (drops, timeouts) against qpace's
#           roce row: the issue's "within 2x of the PFC run's wall time"
#   perm    perm_128n_128c_2MB.cm (a permutation, 128 x 2 MB): htsim_roce against --cc none
#           with PFC
# htsim runs `-nodes 128 -strat ecmp_host -paths 1 -mtu 1000 -q 200 -end 30000`
# (anchors/README.md's arguments); qpace `--gen fat-tree:k=8,rate=100G --icrc skip`.
# Printed per row and side: wall and CPU seconds, peak RSS (/usr/bin/time), the simulated
# time the last flow finished (htsim's "finished at", qpace's last FCT end), and the
# ratios qpace / htsim (or lossy / roce). Every output is kept in COMPARE_OUT (default
# results/htsim).
set -u
BUILD=${1:-build}
QB=$BUILD/bin/qpace-bench
REPS=${COMPARE_REPS:-1}
OUT=${COMPARE_OUT:-results/htsim}
PFC=xoff=32K,headroom=auto,class=0,lossless

if [ -z "${HTSIM_SRC:-}" ]; then
	echo "bench-htsim: skipped: HTSIM_SRC is not set (HTSIM_SRC=DIR, htsim's source folder)"
	exit 0
fi
case "$REPS" in '' | *[!0-9]* | 0) echo "bench-htsim: COMPARE_REPS '$REPS': a whole number >= 1" >&2; exit 2 ;; esac
src=$HTSIM_SRC
[ -f "$src/CMakeLists.txt" ] && [ -d "$src/datacenter" ] || src=$HTSIM_SRC/htsim/sim
[ -f "$src/CMakeLists.txt" ] && [ -d "$src/datacenter" ] || src=$HTSIM_SRC/sim
if ! [ -f "$src/CMakeLists.txt" ] || ! [ -d "$src/datacenter/connection_matrices" ]; then
	echo "bench-htsim: HTSIM_SRC '$HTSIM_SRC': no htsim source there (a CMakeLists.txt" \
	     "beside datacenter/connection_matrices, in it, in htsim/sim or in sim)" >&2
	exit 2
fi
[ -x "$QB" ] || { echo "bench-htsim: $QB not built" >&2; exit 1; }
command -v cmake >/dev/null 2>&1 || { echo "bench-htsim: cmake not found (apt-get install cmake)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-htsim: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
HB=$(cd "$BUILD" && pwd)/htsim
echo "bench-htsim: building htsim from $src into $HB"
cmake -S "$src" -B "$HB" -DCMAKE_BUILD_TYPE=Release >"$HB.cmake.log" 2>&1 &&
	cmake --build "$HB" -j2 --target htsim_roce htsim_hpcc >>"$HB.cmake.log" 2>&1 || {
	tail -20 "$HB.cmake.log"
	echo "bench-htsim: htsim did not build (its log: $HB.cmake.log)" >&2
	exit 1
}
ROCE=$(find "$HB" -name htsim_roce -type f | head -1)
HPCC=$(find "$HB" -name htsim_hpcc -type f | head -1)
CM=$src/datacenter/connection_matrices
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"

# timed NAME CMD...: run it under /usr/bin/time into $OUT/NAME.{out,err,time}; the time
# file's last line is "wall user sys maxrss_kb"
timed() {
	name=$1
	shift
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/$name.time" $pin "$@" >"$OUT/$name.out" \
		2>"$OUT/$name.err"
}
field() {   # field NAME N: the N-th figure of NAME's time line
	awk -v n="$2" 'END { print $n }' "$OUT/$1.time"
}
# the last flow's end, in ms of simulated time
htsim_end() {
	sed -n 's/.*finished at \([0-9.]*\).*/\1/p' "$OUT/$1.out" |
		awk 'BEGIN { m = -1 } { if ($1 + 0 > m) m = $1 + 0 } END { if (m < 0) print "-"; else printf "%.3f", m / 1000 }'
}
qpace_end() {
	f=$(grep -o '"fct_us":{[^}]*}' "$OUT/$1.out" | grep -o '"max":[0-9.]*' | cut -d: -f2)
	[ -n "$f" ] && awk -v f="$f" 'BEGIN { printf "%.3f", f / 1000 }' || echo "-"
}
htsim_done() { grep -c "finished at" "$OUT/$1.out"; }
qpace_done() { grep -o '"flows_done":[0-9]*' "$OUT/$1.out" | cut -d: -f2; }

htsim_run() {   # htsim_run NAME BIN FILE
	timed "$1" "$2" -tm "$CM/$3" -nodes 128 -strat ecmp_host -paths 1 -mtu 1000 -q 200 \
		-end 30000 -o "$OUT/$1.dat"
}
qpace_run() {   # qpace_run NAME FILE CC [PFC]
	n=$1 f=$2 cc=$3
	shift 3
	timed "$n" "$QB" run --gen fat-tree:k=8,rate=100G --workload "$CM/$f" --cc "$cc" \
		--icrc skip "$@" -j --no-plots --no-progress -o "$OUT/$n.d"
}

printf '%-6s %-7s %6s %8s %8s %9s %9s %8s %10s %10s\n' row side flows wall_s cpu_s rss_MB \
	end_ms wall_x cpu_x rss_x
line() {   # line ROW SIDE NAME DONE END REF
	row=$1 side=$2 n=$3 done=$4 end=$5 ref=$6
	w=$(field "$n" 1) c=$(awk -v u="$(field "$n" 2)" -v s="$(field "$n" 3)" 'BEGIN { print u + s }')
	m=$(field "$n" 4)
	if [ -n "$ref" ]; then
		rw=$(field "$ref" 1) rc=$(awk -v u="$(field "$ref" 2)" -v s="$(field "$ref" 3)" 'BEGIN { print u + s }')
		rm=$(field "$ref" 4)
		awk -v r="$row" -v s="$side" -v d="$done" -v w="$w" -v c="$c" -v m="$m" -v e="$end" \
		    -v rw="$rw" -v rc="$rc" -v rm="$rm" 'BEGIN {
			printf "%-6s %-7s %6s %8.2f %8.2f %9.1f %9s %7.2fx %9.2fx %9.1fx\n", r, s, d, w,
			       c, m / 1024, e, w / rw, c / rc, m / rm }'
	else
		awk -v r="$row" -v s="$side" -v d="$done" -v w="$w" -v c="$c" -v m="$m" -v e="$end" 'BEGIN {
			printf "%-6s %-7s %6s %8.2f %8.2f %9.1f %9s\n", r, s, d, w, c, m / 1024, e }'
	fi
}

rep=1
while [ "$rep" -le "$REPS" ]; do
	htsim_run roce-htsim-$rep "$ROCE" incast_128.cm
	qpace_run roce-qpace-$rep incast_128.cm none --pfc "$PFC"
	htsim_run hpcc-htsim-$rep "$HPCC" incast_128.cm
	qpace_run hpcc-qpace-$rep incast_128.cm hpcc --pfc "$PFC"
	qpace_run lossy-qpace-$rep incast_128.cm none
	htsim_run perm-htsim-$rep "$ROCE" perm_128n_128c_2MB.cm
	qpace_run perm-qpace-$rep perm_128n_128c_2MB.cm none --pfc "$PFC"
	line roce htsim roce-htsim-$rep "$(htsim_done roce-htsim-$rep)" "$(htsim_end roce-htsim-$rep)" ""
	line roce qpace roce-qpace-$rep "$(qpace_done roce-qpace-$rep)" "$(qpace_end roce-qpace-$rep)" roce-htsim-$rep
	line hpcc htsim hpcc-htsim-$rep "$(htsim_done hpcc-htsim-$rep)" "$(htsim_end hpcc-htsim-$rep)" ""
	line hpcc qpace hpcc-qpace-$rep "$(qpace_done hpcc-qpace-$rep)" "$(qpace_end hpcc-qpace-$rep)" hpcc-htsim-$rep
	line lossy qpace lossy-qpace-$rep "$(qpace_done lossy-qpace-$rep)" "$(qpace_end lossy-qpace-$rep)" roce-qpace-$rep
	line perm htsim perm-htsim-$rep "$(htsim_done perm-htsim-$rep)" "$(htsim_end perm-htsim-$rep)" ""
	line perm qpace perm-qpace-$rep "$(qpace_done perm-qpace-$rep)" "$(qpace_end perm-qpace-$rep)" perm-htsim-$rep
	rep=$((rep + 1))
done
echo "(x: qpace / htsim on the row, lossy / roce for the lossy row; outputs in $OUT)"
