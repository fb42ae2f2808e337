#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The READ incast (qpace-bench incast --op read): one host READs 256 KiB a round from each
# of 16 others, whose responses converge on its 250 Mb/s port (512 KiB buffer, 100 us
# links, 3 rounds; the bench's defaults otherwise). In virtual time:
#   none      the requester's QPs keep up to 128 READs outstanding each (rxe's limit):
#             the buffer overflows (drops, retransmission timeouts)
#   none+ia   its agent's IA credits are its own READ requests' grants: 0 drops, goodput
#             at least 0.9 of the link's payload rate, Jain at least 0.95
#   hpcc      the requester's hpcc, fed the INT the switch sends it about the responses,
#             paces the bytes it asks for: the same three figures
# and the same shape in real time on loopback (none overflows; none+ia and hpcc: 0 drops,
# goodput at least 0.85, Jain at least 0.95: a loop late by up to 6 ms costs hpcc's
# requester a few points its virtual-time run does not lose, 0.89-0.90 of the payload
# rate where virtual time gives 0.94), judged only where the run kept up: the bench's
# loop and the switch's each late by at most 6 ms, together at most 4% of the run in all
# (as tests/integration/vt_agreement.sh; none: at most 20 ms late). Up to 3 tries a case,
# else it is printed, not judged.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
fail=0
judged=0

. "$(dirname "$0")/lib/kept_up.sh"
run() {   # run CLOCK ARGS...: one JSON line
	clock=$1
	shift
	"$B" incast --op read --clock "$clock" -N 16 -s 256K -R 3 -j --no-plots \
		--base-port 25400 "$@" 2>/dev/null
}
check() {  # check WHAT EXPR
	if awk "BEGIN { exit !($2) }"; then echo "  ok: $1 ($2)"; else
		echo "  FAIL: $1 ($2)" >&2
		fail=1
	fi
}
controlled() {   # controlled NAME JSON MIN_GOODPUT
	g=$(num "$2" goodput_ratio) j=$(num "$2" jain) d=$(num "$2" drops)
	check "$1: 0 drops ($d)" "$d == 0"
	check "$1: goodput at least $3 of the payload rate ($g)" "$g >= $3"
	check "$1: Jain at least 0.95 ($j)" "$j >= 0.95"
}
overflows() {    # overflows NAME JSON
	d=$(num "$2" drops)
	check "$1: the buffer overflows ($d drops)" "$d > 0"
}
for clock in virtual real; do
	for a in none none+ia hpcc; do
		case $a in
		none) args="--cc none" stall=20000000 frac=1 ;;
		none+ia) args="--cc none --credits ia" stall=6000000 frac=0.04 ;;
		hpcc) args="--cc hpcc" stall=6000000 frac=0.04 ;;
		esac
		# shellcheck disable=SC2086
		if [ $clock = virtual ]; then
			r=$(run virtual $args) || { echo "bench_incast_read: $a virtual failed" >&2; fail=1; continue; }
		else
			r=$(kept_up "$a" "$stall" "$frac" run real $args)
			[ -n "$r" ] || { echo "  $a real: no run kept up; not judged"; continue; }
		fi
		echo "$a $clock: $r"
		judged=$((judged + 1))
		if [ $a = none ]; then overflows "$a $clock" "$r"
		elif [ $clock = virtual ]; then controlled "$a $clock" "$r" 0.9
		else controlled "$a $clock" "$r" 0.85; fi
	done
done
echo "bench_incast_read: $judged of 6 cases judged"
[ "$fail" = 0 ] && echo "bench_incast_read: ok"
exit "$fail"
