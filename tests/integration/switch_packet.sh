#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Two namespace hosts through qpace-switch's packet ports on veth (the switch in a third
# namespace). The hosts' veths keep checksum offload on, so the switch must complete the
# UDP checksums (virtio-net header) or the receiver would drop every frame. A UDP sender
# at twice the 100 Mb/s link rate: received rate within 2%, drops = sent - received,
# queue never above the buffer.
set -u
. "$(dirname "$0")/switch_ns.inc"

ns_create
veth qps-h1 h1 s1
veth qps-h2 h2 s2
ip -n qps-h1 addr add 10.77.0.1/24 dev h1
ip -n qps-h2 addr add 10.77.0.2/24 dev h2
neighbours qps-h1 h1 10.77.0.1 qps-h2 h2 10.77.0.2

cat > "$tmp/t.topo" <<TOPO
switch sw rate=100M buffer=1M delay=10us
port sw h1 packet dev=s1
port sw h2 packet dev=s2
TOPO
start_switch
overload 100000000 10.77.0.2
echo "switch_packet: ok"
