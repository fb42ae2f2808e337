#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Checks of ns3-incast's counts, so the ns-3 side of the comparison counts what it says
# (make check-ns3; a few seconds). Each check can fail:
#   udp, no drops  4 x 64K into 512K of buffer: every flow done, packet-hops = exactly
#                  2 x the packets sent (host -> switch -> receiver), no drops
#   udp, incast    16 x 256K at line rate: drops > 0, and packet-hops = 2 x sent - drops
#                  (a dropped packet made its first hop only); flows lose packets
#   tcp, incast    16 x 256K at 1 Gb/s: every flow done, drops > 0 (the 512K queue
#                  overflows), peak queue <= the buffer, packet-hops >= 2 x the data
#                  packets, goodput <= the bottleneck's payload rate
#   determinism    the same run twice: the same packet-hops and events
#   time limit     --timeout 1ms: exit 1, timed_out true and the reason on stderr
#   bad flags      -N 0, --rate 1x, --transport sctp: exit 2 and
#                  `ns3-incast: FLAG 'VALUE': why, range`
#   bench/ns3/check.sh [BUILD]
set -u
BUILD=${1:-build}
B=$BUILD/bin/ns3-incast
passed=0
failed=0

[ -x "$B" ] || { echo "check-ns3: $B not built (make check-ns3 builds it)" >&2; exit 1; }

num() {   # num KEY: a top-level number (or true/false) of the JSON line in $out
	echo "$out" | grep -o "\"$1\":[0-9a-z.e+-]*" | head -1 | cut -d: -f2
}
ok() {    # ok NAME CONDITION (awk): count and print one check
	if awk "BEGIN { exit !($2) }"; then
		passed=$((passed + 1))
		echo "  ok    $1"
	else
		failed=$((failed + 1))
		echo "  FAIL  $1 ($2)"
	fi
}
run() {   # run ARGS...: one JSON line into $out
	out=$("$B" -j "$@" 2>/dev/null) || out=""
	echo "ns3-incast $*: $out"
}

run --transport udp -N 4 -s 64K -R 2 --rate 1G
sent=$((4 * 2 * 64))
ok "udp, no drops: all 8 flows done" "$(num flows_done) == 8"
ok "udp, no drops: packet-hops = 2 x $sent" "$(num packet_hops) == 2 * $sent"
ok "udp, no drops: no drops" "$(num drops) + $(num host_drops) == 0"

run --transport udp -N 16 -s 256K -R 2 --rate 1G
sent=$((16 * 2 * 256))
d=$(num drops)
ok "udp, incast: drops > 0" "$d > 0"
ok "udp, incast: packet-hops = 2 x $sent - drops" "$(num packet_hops) == 2 * $sent - $d"
ok "udp, incast: flows lose packets" "$(num flows_done) < 32"

run -N 16 -s 256K -R 3 --rate 1G
first=$out
data=$((16 * 3 * 256))
ok "tcp, incast: all 48 flows done" "$(num flows_done) == 48 && $(num flows) == 48"
ok "tcp, incast: drops > 0" "$(num drops) > 0"
ok "tcp, incast: peak queue <= 512K" "$(num max_queue_bytes) <= 524288"
ok "tcp, incast: packet-hops >= 2 x $data" "$(num packet_hops) >= 2 * $data"
ok "tcp, incast: goodput <= payload rate" \
	"$(num goodput_bps) <= 1e9 * 1024 / (1024 + 54) && $(num goodput_bps) > 0"

run -N 16 -s 256K -R 3 --rate 1G
hops=$(num packet_hops)
events=$(num events)
out=$first
ok "determinism: packet-hops and events as the first run" \
	"$hops == $(num packet_hops) && $events == $(num events)"

err=$("$B" -j -N 16 --rate 1G --timeout 1ms 2>&1 >/dev/null)
rc=$?
out=$("$B" -j -N 16 --rate 1G --timeout 1ms 2>/dev/null)
ok "time limit: exit 1 and timed_out" "$rc == 1 && \"$(num timed_out)\" == \"true\""
case "$err" in
*"did not finish within --timeout 1ms of simulated time"*) ok "time limit: the reason" 1 ;;
*) ok "time limit: the reason ($err)" 0 ;;
esac

for bad in "-N/--senders -N 0 1..4096" "--rate --rate 1x 1M..400G" \
	"--transport --transport sctp tcp, udp"; do
	set -- $bad
	label=$1 flag=$2 value=$3
	shift 3
	err=$("$B" "$flag" "$value" 2>&1 >/dev/null)
	rc=$?
	case "$err" in
	"ns3-incast: $label '$value': "*"$*"*"try: ns3-incast --help")
		ok "bad flag $flag $value: exit 2" "$rc == 2" ;;
	*) ok "bad flag $flag $value: the message ($err)" 0 ;;
	esac
done

echo "check-ns3: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
