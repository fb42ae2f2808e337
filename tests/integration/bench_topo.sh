#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench topo: each generated kind is a file qpace-switch loads unchanged and runs on
# (the counts the summary states are the kind's); frames cross a generated leaf-spine
# through the real switch along the broadcast tree, three INT hops and no flooding loop
# (a storm would flood the sockets and fail the count); bad parameters exit non-zero
# with the value and the accepted range.
set -u
. "$(dirname "$0")/switch_common.inc"
B=$BUILD/bin/qpace-bench

# kind, flags, "switches ports links hosts" (5k^2/4, 5k^3/4, k^3/2, k^3/4 for fat-tree)
check_kind() {
	kind=$1
	flags=$2
	want=$3
	# shellcheck disable=SC2086
	"$B" topo "$kind" $flags --base-port 17500 -o "$tmp/$kind.topo" -j > "$tmp/$kind.json" ||
		fail "topo $kind $flags"
	got=$(for k in switches ports links hosts; do
		sed -n "s/.*\"$k\":\([0-9]*\).*/\1/p" "$tmp/$kind.json"; done | tr '\n' ' ')
	[ "$got" = "$want " ] || fail "topo $kind $flags: counts '$got', expected '$want'"
	timeout 20 "$SW" -c "$tmp/$kind.topo" --duration 300ms --quiet 2> "$tmp/sw.log" || {
		cat "$tmp/sw.log"
		fail "qpace-switch -c on the generated $kind"
	}
	echo "ok: topo $kind $flags: $got(switches ports links hosts), qpace-switch runs on it"
}

check_kind star "--hosts 16" "1 16 0 16"
check_kind dumbbell "--hosts 3 --fabric-rate 1G" "2 8 1 6"
check_kind leaf-spine "--leaves 4 --spines 2 --hosts-per-leaf 3 --oversub 3" "6 28 8 12"
grep -q "^link leaf1:up1 spine1:down1 rate=5G$" "$tmp/leaf-spine.topo" ||
	fail "leaf-spine: 3 x 10G over 2 spines at 3:1 is 5G links"
check_kind fat-tree "--k 4" "20 80 32 16"
check_kind fat-tree "--k 8 --rate 100G" "80 640 256 128"
check_kind two-site "--hosts 2 --wan-rate 100M --wan-delay 5ms" "2 6 1 4"
grep -q "^link siteA:wan siteB:wan rate=100M delay=5ms buffer=16M$" "$tmp/two-site.topo" ||
	fail "two-site: the WAN link line"

# Real frames across a generated leaf-spine: h0 on leaf1 (port 17500), h1 on leaf2 (17502).
# The test hosts' MACs are not the generated static ones, so their frames flood: along the
# spanning tree only (leaf1, spine1, leaf2), and every report must carry three hops.
"$B" topo leaf-spine --hosts-per-leaf 1 --rate 1G --delay 5us --base-port 17500 \
	-o "$tmp/ls.topo" > /dev/null || fail "topo leaf-spine"
grep -q "flood=off" "$tmp/ls.topo" || fail "leaf-spine: no link off the broadcast tree"
sw_start -c "$tmp/ls.topo" --int direct --int-flows all --duration 20s
timeout 10 $T hops --base-port 17500 3 || fail "INT hops across the generated leaf-spine"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=""
[ "$rc" -eq 0 ] || fail "switch exit status $rc after SIGTERM"

expect() {  # expect "WANT" ARGS...: non-zero exit and WANT in stderr
	want=$1
	shift
	err=$("$B" topo "$@" 2>&1 >/dev/null) && fail "qpace-bench topo $*: exit 0"
	case $err in
	*"$want"*) echo "ok: qpace-bench topo $* -> $(echo "$err" | head -1)" ;;
	*) fail "qpace-bench topo $*: '$want' not in: $err" ;;
	esac
}
expect "KIND 'ring': accepted star, dumbbell, leaf-spine, fat-tree, two-site" ring
expect "fat-tree: base-port 65500 with 54 hosts: accepted 1..65428 (two UDP ports a host)" \
	fat-tree --k 6 --base-port 65500
expect "--k '10': not a whole number in 2..8" fat-tree --k 10
expect "fat-tree: k 5: accepted an even number in 2..8" fat-tree --k 5
expect "--oversub 'x': not a ratio in (0, 1000]" leaf-spine --oversub x
expect "leaf-spine: 68 ports on one switch" leaf-spine --hosts-per-leaf 60 --spines 8
expect "--rate '5': not a rate" star --rate 5
expect "-o '$tmp/no/such.topo': No such file or directory" star -o "$tmp/no/such.topo"
expect "unexpected argument 'extra'" star extra
"$B" topo --help | grep -q "fat-tree" || fail "topo --help"
echo "bench_topo: ok"
