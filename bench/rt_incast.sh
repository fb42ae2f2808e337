#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The real-time incast, both clocks in one run: the 16 -> 1 at 1 Gb/s (the IA-TCP and
# FFDTCP papers' link rate, 16 x 256 KiB, 5 rounds) in real time, RUNS times per
# algorithm (hpcc; none with IA credits), the algorithms alternated run by run, and once
# in virtual time. Per run: goodput (of payload), how many points it is from virtual
# time's, the loop's lateness at its worst, RTO timeouts and drops; then per algorithm how
# many runs were within 5 points and how many kept the loop within 2 ms. Before and after
# the runs, bench-gaps (2 s a CPU): how long the machine itself takes a CPU from a loop
# that never sleeps; a real-time loop cannot be less late than that.
#   real:    qpace-bench incast --clock real -N 16 -s 256K -R 5 --rate 1G --transport T -u U
#   virtual: the same with --clock virtual (which has no transport; -u is the same)
# Environment: BUILD (default build), RT_INCAST_RUNS (default 5), RT_INCAST_TRANSPORT
# (default shm: udp carries half of none+ia's payload, docs/performance.md),
# RT_INCAST_U (default 11: 8.4 ms, twice a full 512 KiB buffer's drain at 1 Gb/s, where
# perftest's 14 is 67 ms, longer than a round). Read it on an idle machine: the real-time
# figures measure the machine as well as the code. Its figures are also printed as FIGURE
# lines (bench/figure.sh) for docs/figures.md.
set -u
. "$(dirname "$0")/figure.sh"
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
RUNS=${RT_INCAST_RUNS:-5}
TR=${RT_INCAST_TRANSPORT:-shm}
U=${RT_INCAST_U:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
command -v jq >/dev/null 2>&1 || { echo "rt_incast: needs jq" >&2; exit 2; }
[ -x "$B" ] || { echo "rt_incast: no $B (make all first)" >&2; exit 2; }

scen="-N 16 -s 256K -R 5 --rate 1G -u $U -j --no-plots"
cc_args() { [ "$1" = hpcc ] && echo "--cc hpcc" || echo "--cc none --credits ia"; }

gaps() {   # the machine's own gaps, one line
	"$BUILD/bin/bench-gaps" --time 2 -j | tee -a "$tmp/gaps" | jq -r '"# machine, a loop that never sleeps (bench-gaps --time 2): " +
		([.cpus[] | "cpu \(.cpu) max gap \(.max_gap_ms) ms, \(.gaps_over_2ms) over 2 ms"] |
		join("; "))'
}
uptime | sed 's/^/# /'
[ -x "$BUILD/bin/bench-gaps" ] && gaps
echo "# 16 -> 1, 256 KiB x 5 rounds at 1 Gb/s, -u $U; real time over $TR, $RUNS runs each"
for a in hpcc ia; do
	# shellcheck disable=SC2046,SC2086
	"$B" incast --clock virtual $scen $(cc_args $a) >"$tmp/v.$a" 2>/dev/null ||
		{ echo "rt_incast: virtual $a failed" >&2; exit 1; }
	jq -r .goodput_ratio "$tmp/v.$a" >"$tmp/vg.$a"
done
printf "%-8s %-4s %8s %8s %9s %9s %6s\n" scenario run goodput points late_ms timeouts drops
i=1
while [ "$i" -le "$RUNS" ]; do
	for a in hpcc ia; do
		# shellcheck disable=SC2046,SC2086
		if ! "$B" incast --clock real $scen --transport "$TR" $(cc_args $a) \
			-o "$tmp/o" >"$tmp/r" 2>"$tmp/e"; then
			echo "$a $i: failed: $(tail -1 "$tmp/e")"
			continue
		fi
		jq -r --argjson v "$(cat "$tmp/vg.$a")" --arg a "$a" --arg i "$i" \
			'[(if $a == "ia" then "none+ia" else $a end), $i, .goodput_ratio,
			  (($v - .goodput_ratio) * 100), (.loop_late_max_ns / 1e6), .timeouts,
			  .drops] | @tsv' "$tmp/r" |
			awk -F'\t' '{ printf "%-8s %-4s %8.4f %8.1f %9.2f %9d %6d\n", $1, $2, $3,
				$4, $5, $6, $7 }' | tee -a "$tmp/rows"
	done
	i=$((i + 1))
done
for a in hpcc ia; do
	name=$a
	[ "$a" = ia ] && name=none+ia
	printf "%-8s virt %8.4f\n" "$name" "$(cat "$tmp/vg.$a")"
done
[ -x "$BUILD/bin/bench-gaps" ] && gaps
[ -s "$tmp/rows" ] || exit 1
awk '{ n[$1]++; if ($4 <= 5 && $4 >= -5) ok[$1]++; if ($5 <= 2) on[$1]++ }
	END { for (s in n) printf "%s: %d of %d runs within 5 points of virtual time, %d of %d " \
		"with the loop at most 2 ms late\n", s, ok[s], n[s], on[s], n[s] }' "$tmp/rows" | sort

# The figures (docs/figures.md)
[ "$TR" = shm ] && [ "$U" = 11 ] || exit 0
within() { awk -v s="$1" '$1 == s { n++; if ($4 <= 5 && $4 >= -5) ok++ }
	END { if (n) printf "%d of %d runs", ok, n }' "$tmp/rows"; }
late() { awk -v s="$1" '$1 == s { n++; if ($5 <= 2) ok++ }
	END { if (n) printf "%d of %d runs", ok, n }' "$tmp/rows"; }
range() { awk -v s="$1" '$1 == s { if (n == 0 || $3 < lo) lo = $3; if (n == 0 || $3 > hi) hi = $3; n++ }
	END { if (n) printf "%.3f-%.3f", lo, hi }' "$tmp/rows"; }
S="*16 → 1 at 1 Gb/s* in real time (16 × 256 KiB, 5 rounds, shm, -u 11)"
figure rt.incast.hpcc.goodput "$(range hpcc)" "make bench-rt" \
	"$S, hpcc: goodput of payload (virtual time: $(cat "$tmp/vg.hpcc"))"
figure rt.incast.hpcc.within5 "$(within hpcc)" "make bench-rt" \
	"$S, hpcc: runs within 5 points of virtual time"
figure rt.incast.hpcc.loop2ms "$(late hpcc)" "make bench-rt" \
	"$S, hpcc: runs whose event loop was never more than 2 ms late"
figure rt.incast.none-ia.goodput "$(range none+ia)" "make bench-rt" \
	"$S, none+ia: goodput of payload (virtual time: $(cat "$tmp/vg.ia"))"
figure rt.incast.none-ia.within5 "$(within none+ia)" "make bench-rt" \
	"$S, none+ia: runs within 5 points of virtual time"
figure rt.incast.none-ia.loop2ms "$(late none+ia)" "make bench-rt" \
	"$S, none+ia: runs whose event loop was never more than 2 ms late"
[ -s "$tmp/gaps" ] && figure rt.gaps.max "$(jq -s -r '[.[].cpus[].max_gap_ms] | max |
	"\(.) ms"' "$tmp/gaps")" "make bench-rt" \
	"the machine: the longest time a pinned loop that never sleeps was not run (*bench-gaps --time 2*, before and after the incasts, every CPU)"
exit 0
