#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace's virtual time against htsim (the UEC's packet-level simulator) on the same
# experiment files: htsim's own connection matrices, read by both unchanged, on the same
# fabric (a k = 8 fat-tree of 128 hosts, 100 Gb/s, 1 us links), one process each on one
# core (taskset -c 0), run alternately in the same run, COMPARE_REPS times (default 1).
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
#           roce row: the target, within 2x of the PFC run's wall time
#   perm    perm_128n_128c_2MB.cm (a permutation, 128 x 2 MB): htsim_roce against --cc none
#           with PFC
# htsim runs `-nodes 128 -strat ecmp_host -paths 1 -mtu 1000 -q 200 -end 30000`
# (anchors/README.md's arguments); qpace `--gen fat-tree:k=8,rate=100G --icrc off`.
# Two large rows follow (COMPARE_LARGE=off skips them; about 4 minutes of one core here):
#   ws1024  a 1,024-host fat-tree (k = 16, 100 Gb/s), WebSearch at 0.5 load, 1 ms of
#           arrivals (the flows qpace-bench run's poisson generator draws with its default
#           seed, written as a connection matrix), htsim_roce against --cc none with PFC,
#           both stopped at 1 ms of simulated time (-end 1000, --until 1ms): flows done by
#           then, wall, CPU and memory. htsim_roce reads a start time as microseconds
#           (its RoceSrc::connect calls timeFromUs on the picoseconds its parser gives), so
#           its copy of the file says the start in whole microseconds and qpace's the same
#           instants in picoseconds; htsim_hpcc starts every flow at 0 whatever the file
#           says, so it has no row with arrivals.
#   perm8k  an 8,192-host fat-tree (k = 32), a permutation of flows that never end (host i
#           to (4093 i + 1234) mod 8192), htsim_roce against --cc none with PFC, to 10 us.
# Printed per row and side: wall and CPU seconds, peak RSS (/usr/bin/time), the simulated
# time the last flow finished (htsim's "finished at", qpace's last FCT end), and the
# ratios qpace / htsim (or lossy / roce). Every output is kept in COMPARE_OUT (default
# results/htsim). COMPARE_RUN=off runs nothing and prints the rows and figures of the
# outputs already in COMPARE_OUT.
set -u
. "$(dirname "$0")/figure.sh"
BUILD=${1:-build}
QB=$BUILD/bin/qpace-bench
REPS=${COMPARE_REPS:-1}
OUT=${COMPARE_OUT:-results/htsim}
PFC=xoff=32K,headroom=auto,class=0,lossless

RUN=${COMPARE_RUN:-on}
if [ "$RUN" = on ] && [ -z "${HTSIM_SRC:-}" ]; then
	echo "bench-htsim: skipped: HTSIM_SRC is not set (HTSIM_SRC=DIR, htsim's source folder)"
	exit 0
fi
case "$REPS" in '' | *[!0-9]* | 0) echo "bench-htsim: COMPARE_REPS '$REPS': a whole number >= 1" >&2; exit 2 ;; esac
if [ "$RUN" = on ]; then
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
CM=$(cd "$src/datacenter/connection_matrices" && pwd)
fi
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

htsim_run() {   # htsim_run NAME BIN FILE (in OUT: htsim writes idmap.txt where it runs)
	cd "$OUT" || exit 1
	timed "$1" "$2" -tm "$CM/$3" -nodes 128 -strat ecmp_host -paths 1 -mtu 1000 -q 200 \
		-end 30000 -o "$OUT/$1.dat"
	cd - >/dev/null || exit 1
}
qpace_run() {   # qpace_run NAME FILE CC [PFC]
	n=$1 f=$2 cc=$3
	shift 3
	timed "$n" "$QB" run --gen fat-tree:k=8,rate=100G --workload "$CM/$f" --cc "$cc" \
		--icrc off "$@" -j --no-plots --no-progress -o "$OUT/$n.d"
}
# the large rows: htsim_big NAME BIN FILE NODES END_US; qpace_big NAME FILE K UNTIL
htsim_big() {
	cd "$OUT" || exit 1
	timed "$1" "$2" -tm "$3" -nodes "$4" -strat ecmp_host -paths 1 -mtu 1000 -q 200 \
		-end "$5" -o "$OUT/$1.dat"
	cd - >/dev/null || exit 1
}
qpace_big() {
	timed "$1" "$QB" run --gen "fat-tree:k=$3,rate=100G" --workload "$2" --cc none \
		--pfc "$PFC" --icrc off --until "$4" -j --no-plots --no-progress -o "$OUT/$1.d"
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
	if [ "$RUN" = on ]; then
		htsim_run roce-htsim-$rep "$ROCE" incast_128.cm
		qpace_run roce-qpace-$rep incast_128.cm none --pfc "$PFC"
		htsim_run hpcc-htsim-$rep "$HPCC" incast_128.cm
		qpace_run hpcc-qpace-$rep incast_128.cm hpcc --pfc "$PFC"
		qpace_run lossy-qpace-$rep incast_128.cm none
		htsim_run perm-htsim-$rep "$ROCE" perm_128n_128c_2MB.cm
		qpace_run perm-qpace-$rep perm_128n_128c_2MB.cm none --pfc "$PFC"
	fi
	line roce htsim roce-htsim-$rep "$(htsim_done roce-htsim-$rep)" "$(htsim_end roce-htsim-$rep)" ""
	line roce qpace roce-qpace-$rep "$(qpace_done roce-qpace-$rep)" "$(qpace_end roce-qpace-$rep)" roce-htsim-$rep
	line hpcc htsim hpcc-htsim-$rep "$(htsim_done hpcc-htsim-$rep)" "$(htsim_end hpcc-htsim-$rep)" ""
	line hpcc qpace hpcc-qpace-$rep "$(qpace_done hpcc-qpace-$rep)" "$(qpace_end hpcc-qpace-$rep)" hpcc-htsim-$rep
	line lossy qpace lossy-qpace-$rep "$(qpace_done lossy-qpace-$rep)" "$(qpace_end lossy-qpace-$rep)" roce-qpace-$rep
	line perm htsim perm-htsim-$rep "$(htsim_done perm-htsim-$rep)" "$(htsim_end perm-htsim-$rep)" ""
	line perm qpace perm-qpace-$rep "$(qpace_done perm-qpace-$rep)" "$(qpace_end perm-qpace-$rep)" perm-htsim-$rep
	rep=$((rep + 1))
done

if [ "${COMPARE_LARGE:-on}" != off ]; then
	if [ "$RUN" = on ]; then
		# WebSearch's flows on 1,024 hosts: qpace draws them (a run of 1 us writes flows.csv
		# with every flow), the two files say the same starts in each side's unit
		printf 'poisson cdf=websearch load=0.5 duration=1ms\n' >"$OUT/ws1024.wl"
		"$QB" run --gen fat-tree:k=16,rate=100G --workload "$OUT/ws1024.wl" --until 1us \
			--no-plots --no-progress -o "$OUT/ws1024-gen.d" >/dev/null 2>&1
		awk -F, 'NR > 1 { n++; l[n] = $4 "->" $5 " start " int($7 + 0.5) " size " $6 }
			END { print "Nodes 1024"; print "Connections " n; for (i = 1; i <= n; i++) print l[i] }' \
			"$OUT/ws1024-gen.d/flows.csv" >"$OUT/ws1024-htsim.cm"
		awk 'NR <= 2 { print; next } { $3 = $3 * 1000000; print }' "$OUT/ws1024-htsim.cm" \
			>"$OUT/ws1024-qpace.cm"
		awk 'BEGIN { n = 8192; print "Nodes " n; print "Connections " n
			for (i = 0; i < n; i++) printf "%d->%d start 0 size 0\n", i, (i * 4093 + 1234) % n }' \
			>"$OUT/perm8k.cm"
		htsim_big ws1024-htsim "$ROCE" "$OUT/ws1024-htsim.cm" 1024 1000
		qpace_big ws1024-qpace "$OUT/ws1024-qpace.cm" 16 1ms
		htsim_big perm8k-htsim "$ROCE" "$OUT/perm8k.cm" 8192 10
		qpace_big perm8k-qpace "$OUT/perm8k.cm" 32 10us
	fi
	line ws1024 htsim ws1024-htsim "$(htsim_done ws1024-htsim)" - ""
	line ws1024 qpace ws1024-qpace "$(qpace_done ws1024-qpace)" - ws1024-htsim
	line perm8k htsim perm8k-htsim - - ""
	line perm8k qpace perm8k-qpace - - perm8k-htsim
fi
echo "(x: qpace / htsim on the row, lossy / roce for the lossy row; outputs in $OUT)"

# The figures (docs/figures.md), from the last repetition
r=$REPS
cpu() {   # the CPU seconds (user + system) of NAME's run
	[ -s "$OUT/$1.time" ] &&
		awk -v u="$(field "$1" 2)" -v s="$(field "$1" 3)" 'BEGIN { printf "%.2f s", u + s }'
}
rss() { [ -s "$OUT/$1.time" ] && awk -v m="$(field "$1" 4)" 'BEGIN { printf "%.0f MB", m / 1024 }'; }
ratio() {   # ratio A B: A's CPU seconds over B's
	[ -s "$OUT/$1.time" ] && [ -s "$OUT/$2.time" ] &&
		awk -v a="$(cpu "$1")" -v b="$(cpu "$2")" 'BEGIN { if (b > 0) printf "%.2fx", a / b }'
}
C="make bench-htsim HTSIM_SRC=DIR"
figure htsim.incast-roce.htsim-cpu "$(cpu roce-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, no CC: htsim_roce's CPU seconds, one core"
figure htsim.incast-roce.qpace-cpu "$(cpu roce-qpace-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, no CC: qpace's CPU seconds (--cc none), one core"
figure htsim.incast-roce.cpu-x "$(ratio roce-qpace-$r roce-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, no CC: qpace's CPU seconds over htsim_roce's"
figure htsim.incast-roce.htsim-rss "$(rss roce-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, no CC: htsim_roce's peak resident memory"
figure htsim.incast-roce.qpace-rss "$(rss roce-qpace-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, no CC: qpace's peak resident memory"
figure htsim.incast-hpcc.htsim-cpu "$(cpu hpcc-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, HPCC: htsim_hpcc's CPU seconds, one core"
figure htsim.incast-hpcc.qpace-cpu "$(cpu hpcc-qpace-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, HPCC: qpace's CPU seconds (--cc hpcc), one core"
figure htsim.incast-hpcc.cpu-x "$(ratio hpcc-qpace-$r hpcc-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, HPCC: qpace's CPU seconds over htsim_hpcc's"
figure htsim.incast-hpcc.htsim-rss "$(rss hpcc-htsim-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, HPCC: htsim_hpcc's peak resident memory"
figure htsim.incast-hpcc.qpace-rss "$(rss hpcc-qpace-$r)" "$C" \
	"*incast_128.cm* on a k = 8 fat-tree, PFC, HPCC: qpace's peak resident memory"
figure htsim.incast-lossy.cpu-x "$(ratio lossy-qpace-$r roce-qpace-$r)" "$C" \
	"*incast_128.cm* without PFC (drops, timeouts), qpace --cc none: CPU seconds over the same with PFC"
figure htsim.perm.htsim-cpu "$(cpu perm-htsim-$r)" "$C" \
	"the *128-host permutation* (htsim's perm_128n_128c_2MB.cm) on a k = 8 fat-tree, PFC, no CC: htsim_roce's CPU seconds, one core"
figure htsim.perm.qpace-cpu "$(cpu perm-qpace-$r)" "$C" \
	"the *128-host permutation* (htsim's perm_128n_128c_2MB.cm) on a k = 8 fat-tree, PFC, no CC: qpace's CPU seconds, one core"
figure htsim.perm.htsim-rss "$(rss perm-htsim-$r)" "$C" \
	"the *128-host permutation* (htsim's perm_128n_128c_2MB.cm) on a k = 8 fat-tree, PFC, no CC: htsim_roce's peak resident memory"
figure htsim.perm.qpace-rss "$(rss perm-qpace-$r)" "$C" \
	"the *128-host permutation* (htsim's perm_128n_128c_2MB.cm) on a k = 8 fat-tree, PFC, no CC: qpace's peak resident memory"
[ "${COMPARE_LARGE:-on}" != off ] || exit 0
figure htsim.ws1024.htsim-cpu "$(cpu ws1024-htsim)" "$C" \
	"*1,024-host fat-tree* (k = 16), WebSearch at 0.5, 1 ms of arrivals, PFC, no CC, to 1 ms: htsim_roce's CPU seconds, one core"
figure htsim.ws1024.qpace-cpu "$(cpu ws1024-qpace)" "$C" \
	"*1,024-host fat-tree* (k = 16), WebSearch at 0.5, 1 ms of arrivals, PFC, no CC, to 1 ms: qpace's CPU seconds, one core"
figure htsim.ws1024.cpu-x "$(ratio ws1024-qpace ws1024-htsim)" "$C" \
	"*1,024-host fat-tree* (k = 16), WebSearch at 0.5 to 1 ms, PFC, no CC: qpace's CPU seconds over htsim_roce's"
figure htsim.ws1024.htsim-rss "$(rss ws1024-htsim)" "$C" \
	"*1,024-host fat-tree* (k = 16), WebSearch at 0.5 to 1 ms: htsim_roce's peak resident memory"
figure htsim.ws1024.qpace-rss "$(rss ws1024-qpace)" "$C" \
	"*1,024-host fat-tree* (k = 16), WebSearch at 0.5 to 1 ms: qpace's peak resident memory"
figure htsim.perm8k.htsim-cpu "$(cpu perm8k-htsim)" "$C" \
	"*8,192-host fat-tree* (k = 32), a permutation, PFC, no CC, to 10 µs: htsim_roce's CPU seconds, one core"
figure htsim.perm8k.qpace-cpu "$(cpu perm8k-qpace)" "$C" \
	"*8,192-host fat-tree* (k = 32), a permutation, PFC, no CC, to 10 µs: qpace's CPU seconds, one core"
figure htsim.perm8k.cpu-x "$(ratio perm8k-qpace perm8k-htsim)" "$C" \
	"*8,192-host fat-tree* (k = 32), a permutation to 10 µs, PFC, no CC: qpace's CPU seconds over htsim_roce's"
figure htsim.perm8k.htsim-rss "$(rss perm8k-htsim)" "$C" \
	"*8,192-host fat-tree* (k = 32), a permutation to 10 µs: htsim_roce's peak resident memory"
figure htsim.perm8k.qpace-rss "$(rss perm8k-qpace)" "$C" \
	"*8,192-host fat-tree* (k = 32), a permutation to 10 µs: qpace's peak resident memory"
