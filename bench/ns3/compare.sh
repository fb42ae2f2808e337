#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Virtual time against ns-3: the same incasts, both simulators timed in the same run,
# packet-hops (completed transmissions on any link) per wall-clock second.
#
#   bench/ns3/compare.sh [BUILD]          (make bench-ns3 installs ns-3, builds, runs this)
#
# For each N@RATE of COMPARE_RUNS (default "16@1G 32@1G 96@1G 96@10G") it runs, COMPARE_REPS
# times (default 3) and interleaved, so the machine's state is shared:
#   ns-3 tcp   BUILD/bin/ns3-incast --transport tcp  (BulkSend over TCP NewReno)
#   ns-3 udp   BUILD/bin/ns3-incast --transport udp  (OnOff at line rate)
#   qpace      BUILD/bin/qpace-bench incast --clock virtual -j: its packet_hops / wall_s
# with the same -N -s -R --rate --buffer --delay --mtu (COMPARE_SIZE 256K, COMPARE_ROUNDS 5,
# COMPARE_BUFFER 512K, COMPARE_DELAY 100us, COMPARE_MTU 1024: qpace-bench's defaults), and
# prints the median packet-hops/s of each and qpace's ratio to each ns-3 sender.
# QPACE_ARGS and NS3_ARGS add options to one side. A qpace-bench without --clock, or
# whose JSON lacks packet_hops or wall_s, or that refuses a run, gives "n/a" and a note.
# Every JSON line is kept in COMPARE_OUT (default results/ns3)/runs.jsonl. At the default
# runs, the range of the ratios is also printed as a FIGURE line (bench/figure.sh) for
# docs/figures.md.
set -u
. "$(dirname "$0")/../figure.sh"
BUILD=${1:-build}
NS3=$BUILD/bin/ns3-incast
QB=$BUILD/bin/qpace-bench
RUNS=${COMPARE_RUNS:-16@1G 32@1G 96@1G 96@10G}
REPS=${COMPARE_REPS:-3}
SIZE=${COMPARE_SIZE:-256K}
ROUNDS=${COMPARE_ROUNDS:-5}
BUFFER=${COMPARE_BUFFER:-512K}
DELAY=${COMPARE_DELAY:-100us}
MTU=${COMPARE_MTU:-1024}
OUT=${COMPARE_OUT:-results/ns3}
QPACE_ARGS=${QPACE_ARGS:-}
NS3_ARGS=${NS3_ARGS:-}

[ -x "$NS3" ] || { echo "compare: $NS3 not built (make bench-ns3 builds it)" >&2; exit 1; }
case "$REPS" in '' | *[!0-9]* | 0) echo "compare: COMPARE_REPS '$REPS': a whole number >= 1" >&2; exit 2 ;; esac
mkdir -p "$OUT" || exit 1
JSONL=$OUT/runs.jsonl
: >"$JSONL"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
NOTES=$TMP/notes
: >"$NOTES"

qpace=yes
if ! "$QB" incast --help 2>/dev/null | grep -q -- '--clock'; then
	qpace=no
	echo "qpace: $QB incast has no --clock (virtual time not built yet): its column is n/a" >>"$NOTES"
fi

num() {   # num KEY FILE: a top-level number of the JSON line in FILE
	grep -o "\"$1\":[0-9.e+-]*" "$2" | head -1 | cut -d: -f2
}
note() { grep -qxF "$1" "$NOTES" || echo "$1" >>"$NOTES"; }

# side N RATE REP CMD...: run one side, keep its JSON line, append its packet-hops/s (or
# nothing) to $TMP/SIDE-N-RATE.
side() {
	name=$1 n=$2 rate=$3 rep=$4
	shift 4
	f=$TMP/out
	if ! "$@" >"$f" 2>"$TMP/err"; then
		note "$name, N=$n at $rate: $* failed: $(head -1 "$TMP/err")"
		return 0
	fi
	printf '{"side":"%s","senders":%s,"rate":"%s","rep":%s,"result":%s}\n' \
		"$name" "$n" "$rate" "$rep" "$(tail -1 "$f")" >>"$JSONL"
	hops=$(num packet_hops "$f")
	wall=$(num wall_s "$f")
	if [ -z "$hops" ] || [ -z "$wall" ]; then
		note "$name: its JSON has no packet_hops or wall_s"
		return 0
	fi
	awk -v h="$hops" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f\n", h / w }' \
		>>"$TMP/$name-$n-$rate"
}

median() {   # median FILE: the middle value (lower middle of an even count), or empty
	[ -s "$1" ] || return 0
	sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "ns-3 $("$NS3" --help | sed -n 's/.*in ns-3 \([0-9.]*\).*/\1/p') against qpace's virtual time:" \
	"N -> 1, $SIZE per sender, $ROUNDS rounds, $BUFFER drop-tail, $DELAY links, MTU $MTU"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); medians of $REPS interleaved runs"
rep=1
while [ "$rep" -le "$REPS" ]; do
	for run in $RUNS; do
		n=${run%@*} rate=${run#*@}
		common="-N $n -s $SIZE -R $ROUNDS --rate $rate --buffer $BUFFER --delay $DELAY --mtu $MTU"
		# shellcheck disable=SC2086
		side ns3-tcp "$n" "$rate" "$rep" "$NS3" -j --transport tcp $common $NS3_ARGS
		# shellcheck disable=SC2086
		side ns3-udp "$n" "$rate" "$rep" "$NS3" -j --transport udp $common $NS3_ARGS
		if [ "$qpace" = yes ]; then
			# shellcheck disable=SC2086
			side qpace "$n" "$rate" "$rep" "$QB" incast --clock virtual -j --no-plots \
				$common $QPACE_ARGS
		fi
	done
	rep=$((rep + 1))
done

printf '\n%5s %6s | %16s | %16s | %14s | %10s | %10s\n' N rate "ns-3 tcp hops/s" \
	"ns-3 udp hops/s" "qpace hops/s" "x ns-3 tcp" "x ns-3 udp"
for run in $RUNS; do
	n=${run%@*} rate=${run#*@}
	t=$(median "$TMP/ns3-tcp-$n-$rate")
	u=$(median "$TMP/ns3-udp-$n-$rate")
	q=$(median "$TMP/qpace-$n-$rate")
	awk -v n="$n" -v r="$rate" -v t="$t" -v u="$u" -v q="$q" 'function v(x) {
		return x == "" ? "n/a" : x } function x(a, b) {
		return a == "" || b == "" || b == 0 ? "n/a" : sprintf("%.1f", a / b) } BEGIN {
		printf "%5s %6s | %16s | %16s | %14s | %10s | %10s\n", n, r, v(t), v(u), v(q),
			x(q, t), x(q, u) }' | tee -a "$TMP/table"
done
if [ -z "${COMPARE_RUNS:-}${QPACE_ARGS}${NS3_ARGS}" ]; then
	figure ns3.hops-ratio "$(awk -F'|' '{ for (i = 5; i <= 6; i++) { v = $i + 0
		if ($i ~ /[0-9]/) { if (n == 0 || v < lo) lo = v; if (n == 0 || v > hi) hi = v; n++ } } }
		END { if (n) printf "%.1f-%.1fx", lo, hi }' "$TMP/table")" "make bench-ns3" \
		"packet-hops per wall-clock second of virtual time against ns-3 3.37 on the same *N → 1 incasts* (16, 32, 96 senders at 1 Gb/s, 96 at 10 Gb/s; TCP and UDP senders; medians of 3 interleaved runs)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); JSON lines: $JSONL"
[ -s "$NOTES" ] && sed 's/^/note: /' "$NOTES"
exit 0
