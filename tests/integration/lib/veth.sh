# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A veth pair between two namespaces for the tc tests (sourced after lib/agent.sh, not run).
# veth_pair NSA NSB DEVA DEVB NET: namespaces NSA and NSB, DEVA in NSA at NET.1/24 and DEVB
# in NSB at NET.2/24, both up (and both namespaces' lo), with static neighbours each way
# (no frame waits for ARP and is lost before the egress hook). Every step that fails ends
# the test through fail.
# veth_setup NSA NSB DEVA DEVB NET [BPFFS]: the same, and on exit: every pid in $PIDS
# killed (-9), the bpffs unmounted, the namespaces removed, then lib/agent.sh's cleanup.
# With BPFFS, a bpffs of the test's own is mounted there first (maps pinned in it are the
# test's alone); the test is skipped when it cannot be.
mac() { ip -n "$1" -o link show "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }
veth_pair() {
	ip netns add "$1" && ip netns add "$2" || fail "ip netns add $1 $2"
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" || fail "veth $3 $4"
	ip -n "$1" addr add "$5.1/24" dev "$3" && ip -n "$2" addr add "$5.2/24" dev "$4" &&
		ip -n "$1" link set lo up && ip -n "$2" link set lo up && ip -n "$1" link set "$3" up &&
		ip -n "$2" link set "$4" up || fail "veth $3 $4: addresses, links up"
	ip -n "$1" neigh add "$5.2" lladdr "$(mac "$2" "$4")" dev "$3" nud permanent &&
		ip -n "$2" neigh add "$5.1" lladdr "$(mac "$1" "$3")" dev "$4" nud permanent ||
		fail "veth $3 $4: neighbours"
}
veth_cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -z "$VETH_BPFFS" ] || umount "$VETH_BPFFS" 2>/dev/null
	for n in $VETH_NS; do ip netns del "$n" 2>/dev/null; done
	cleanup
}
veth_setup() {
	VETH_NS="$1 $2"
	VETH_BPFFS=${6:-}
	trap veth_cleanup EXIT
	if [ -n "$VETH_BPFFS" ]; then
		mkdir -p "$VETH_BPFFS" && mount -t bpf bpf "$VETH_BPFFS" ||
			{ echo "skip: cannot mount a bpffs"; exit 0; }
	fi
	veth_pair "$1" "$2" "$3" "$4" "$5"
}
