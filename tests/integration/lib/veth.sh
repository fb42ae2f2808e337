# A veth pair between two namespaces for the tc egress tests (sourced, not run).
# veth_pair NSA NSB DEVA DEVB NET: namespaces NSA and NSB, DEVA in NSA at NET.1/24 and DEVB
# in NSB at NET.2/24, both up, with static neighbours each way (no frame waits for ARP and
# is lost before the egress hook). Every step that fails ends the test through fail.
mac() { ip -n "$1" -o link show "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }
veth_pair() {
	ip netns add "$1" && ip netns add "$2" || fail "ip netns add $1 $2"
	ip link add "$3" netns "$1" type veth peer name "$4" netns "$2" || fail "veth $3 $4"
	ip -n "$1" addr add "$5.1/24" dev "$3" && ip -n "$2" addr add "$5.2/24" dev "$4" &&
		ip -n "$1" link set lo up && ip -n "$1" link set "$3" up &&
		ip -n "$2" link set "$4" up || fail "veth $3 $4: addresses, links up"
	ip -n "$1" neigh add "$5.2" lladdr "$(mac "$2" "$4")" dev "$3" nud permanent &&
		ip -n "$2" neigh add "$5.1" lladdr "$(mac "$1" "$3")" dev "$4" nud permanent ||
		fail "veth $3 $4: neighbours"
}
