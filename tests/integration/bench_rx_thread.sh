#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The real-time incast with the receiving host in its own thread (--rx-thread on) against
# the one loop (--rx-thread off, the default), 4 -> 1 at 100 Mb/s, 3 rounds of 256 KiB
# a sender: with the thread every flow of every round finishes with all its bytes
# acknowledged (an RC completion: the receiver took every packet in order), flows.csv has
# one row per flow, each done with 262144 bytes, and both ways report the same flow count.
# Run for hpcc (the receiver echoes INT) and for none+ia (the receiver's agent paces
# credits and registers and drops each flow as it ends: the locked hand-over of host 0).
# A bad --rx-thread value stops with the flag, the value and the choices, exit non-zero.
# Behaviour, not speed: the figures are docs/performance.md's.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
N=4
R=3
BYTES=262144

ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*" >&2; fail=1; }
num() {   # num KEY FILE
	grep -o "\"$1\":[0-9.e+-]*" "$2" | head -1 | cut -d: -f2
}

for algo in hpcc ia; do
	case $algo in
	hpcc) args="--cc hpcc" ;;
	ia) args="--cc none --credits ia" ;;
	esac
	for mode in on off; do
		name=$algo-$mode
		# shellcheck disable=SC2086
		if "$B" incast --clock real -N $N -s 256K -R $R --rate 100M $args --rx-thread $mode \
			--base-port 23400 --no-plots -j -o "$tmp/$name" >"$tmp/$name.json" \
			2>"$tmp/$name.err"; then
			ok "$name: exit 0"
		else
			bad "$name: exit $?: $(cat "$tmp/$name.err")"
			continue
		fi
		flows=$(num flows "$tmp/$name.json")
		done_=$(num flows_done "$tmp/$name.json")
		if [ "${flows:-0}" = $((N * R)) ] && [ "$done_" = "$flows" ]; then
			ok "$name: $flows flows, all done"
		else
			bad "$name: flows ${flows:-?}, done ${done_:-?}, want $((N * R))"
		fi
		eval "flows_$mode=\${flows:-?}"
		# algorithm,round,sender,bytes,fct_us,slowdown,retransmits,timeouts,done
		rows=$(awk -F, -v b=$BYTES 'NR > 1 && $4 == b && $9 == 1 && $5 > 0' \
			"$tmp/$name/flows.csv" | wc -l)
		if [ "$rows" -eq $((N * R)) ]; then
			ok "$name: flows.csv: $rows flows done with $BYTES bytes each"
		else
			bad "$name: flows.csv: $rows of $((N * R)) flows done with $BYTES bytes"
			cat "$tmp/$name/flows.csv" >&2
		fi
	done
	# shellcheck disable=SC2154
	if [ "$flows_on" = "$flows_off" ]; then
		ok "$algo: the same flow count both ways ($flows_on)"
	else
		bad "$algo: $flows_on flows with the thread, $flows_off without"
	fi
done

if "$B" incast --rx-thread maybe -N 2 >/dev/null 2>"$tmp/bad.err"; then
	bad "--rx-thread maybe: exit 0"
elif grep -q "rx-thread" "$tmp/bad.err" && grep -q "maybe" "$tmp/bad.err"; then
	ok "--rx-thread maybe: refused ($(head -1 "$tmp/bad.err"))"
else
	bad "--rx-thread maybe: $(cat "$tmp/bad.err")"
fi

[ "$fail" = 0 ] && echo "bench_rx_thread: ok"
exit "$fail"
