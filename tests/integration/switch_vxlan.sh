#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Two namespace hosts, each with a kernel vxlan netdev (VNI 42) whose remote is
# qpace-switch's vxlan port in a third namespace (underlay over veth). A UDP sender at
# twice the 100 Mb/s link rate over the overlay: received rate within 2%, drops = sent -
# received, queue never above the buffer. The vxlan netdevs leave the inner UDP checksum
# to an offload that never happens (outer checksum off, veth underlay): the switch has to
# complete it, or the receiver drops every frame.
set -u
. "$(dirname "$0")/switch_ns.inc"

ns_create
veth qps-h1 u1 s1
veth qps-h2 u2 s2
ip -n qps-h1 addr add 10.78.1.1/24 dev u1
ip -n qps-h2 addr add 10.78.2.1/24 dev u2
ip -n qps-sw addr add 10.78.1.254/24 dev s1
ip -n qps-sw addr add 10.78.2.254/24 dev s2
for i in 1 2; do
	ip -n qps-h$i link add vx0 type vxlan id 42 remote 10.78.$i.254 dstport 4789 dev u$i ||
		fail "vxlan netdev"
	ip -n qps-h$i addr add 192.168.77.$i/24 dev vx0
	ip -n qps-h$i link set vx0 up
done
neighbours qps-h1 vx0 192.168.77.1 qps-h2 vx0 192.168.77.2

cat > "$tmp/t.topo" <<TOPO
switch sw rate=100M buffer=1M delay=10us
port sw h1 vxlan local=10.78.1.254 remote=10.78.1.1 vni=42
port sw h2 vxlan local=10.78.2.254 remote=10.78.2.1 vni=42
TOPO
start_switch
overload 100000000 192.168.77.2
echo "switch_vxlan: ok"
