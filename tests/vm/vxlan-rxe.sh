#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scenario 4, cloud VMs over VXLAN: the recipe of docs/soft-roce.md, run as written, on
# kernel rxe.
#
#   tests/vm/vxlan-rxe.sh [--short] [--tap]
#
# g2 stands for a cloud VM: its eth0 is no switch port but an ordinary routed NIC, QEMU's
# user network (slirp: eth0 10.0.2.15/24; the host is 10.0.2.2, UDP is NAT'd to the host's
# 127.0.0.1). In g2, /job/net.sh runs the recipe's lines with SWITCH_IP = 10.0.2.2:
#
#   ip link add vx0 type vxlan id 42 remote 10.0.2.2 dstport 4789 dev eth0
#   ip addr add 10.0.0.2/24 dev vx0 && ip link set vx0 up
#   rdma link add rxe0 type rxe netdev vx0
#
# and the job starts `qpaced --allow 10.0.0.254/32` (the switch's telemetry address, the
# source of its INT reports). On the host, qpace-switch -c cloud.topo: port vm2 is a vxlan
# port (local 127.0.0.1:4789, where g2's 10.0.2.2:4789 lands; remote 127.0.0.1:HP, a slirp
# hostfwd to g2's UDP 4789, which plays the VM's public address), port vm1 a plain udp port
# whose peer is g1 (10.0.0.1, rxe on eth0, as in scenario 1). g1 serves ib_write_bw, g2
# (the VM) is the client: the data enters the switch through the vxlan port, and the INT
# reports about it leave through it to g2's qpaced.
#
# --tap (root): g1 is a cloud VM too, so the topology is the recipe's two vxlan ports: g1's
# eth0 is a host tap device (qpvxN, host 10.213.N.254/24, guest 10.213.N.1/24, N from the
# pid), g1 runs the same three lines with SWITCH_IP = 10.213.N.254, and port vm1 is
# `vxlan local=10.213.N.254 remote=10.213.N.1 vni=42` (its own local address: vm2's socket
# already holds 4789 on 127.0.0.1). The tap and its address are removed on exit.
#
# Passes when ib_write_bw reports a bandwidth; the switch's counters show the traffic
# through the vxlan port (>= the test's bytes in; frames, INT reports among them, out) and
# no drop; rxe on vx0 runs at RoCE MTU 1024 (vx0 1450); and g2's qpaced accepted INT
# reports (feedback_accepted > 0, none rejected by source). --short: -n 100 instead of -n 400.
#
# Needs 127.0.0.1:4789 free on the host (waits up to 60 s for it). Exits 0 on success,
# 1 on failure, 77 when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

iters=400 tap="" g1kind=udp
for a in "$@"; do
	case $a in
	--short) iters=100 ;;
	--tap) tap=qpvx$(($$ % 200)) g1kind=vxlan-tap ;;
	*) echo "usage: $0 [--short] [--tap]" >&2; exit 2 ;;
	esac
done

vm_skip_unless_runnable
vm_need_built qpace-switch qpaced qpacectl
SWITCH=$VM_TOP/build/bin/qpace-switch

vm_setup || exit 1
hp=$((VM_PORT + 2))   # slirp hostfwd towards g2's UDP 4789
SWITCH_IP=10.0.2.2    # the host as g2 sees it
SW_TELEM=10.0.0.254   # the switch's own address in the overlay (INT reports' source)

if [ -n "$tap" ]; then
	tnet=10.213.$(($$ % 200))
	trap 'vm_stop_all; ip link del "$tap" 2>/dev/null' EXIT
	trap 'vm_stop_all; ip link del "$tap" 2>/dev/null; exit 130' INT
	trap 'vm_stop_all; ip link del "$tap" 2>/dev/null; exit 143' TERM
	{ ip tuntap add dev "$tap" mode tap && ip addr add "$tnet.254/24" dev "$tap" &&
		ip link set "$tap" up; } || { vm_log "FAILED: tap $tap (root?)"; exit 1; }
	G1PORT="port sw vm1 vxlan local=$tnet.254 remote=$tnet.1 vni=42"
else
	G1PORT="port sw vm1 udp local=127.0.0.1:$VM_PORT remote=127.0.0.1:$((VM_PORT + 1))"
fi
cat >"$VM_RUN/cloud.topo" <<EOF
switch sw ip=$SW_TELEM rate=1G buffer=1M delay=10us
$G1PORT
port sw vm2 vxlan local=127.0.0.1 remote=127.0.0.1:$hp vni=42
EOF

# net_sh SWITCH_IP VX0_ADDR FILE: the recipe's lines. ip() runs iproute2's ip, as on a
# cloud VM: the guest's busybox sh prefers its own ip applet to PATH (that one accepts these
# lines too, but it is not what the recipe's readers run).
net_sh() {
	cat >"$3" <<EOF
ip() { /usr/bin/ip "\$@"; }
set -x
ip link add vx0 type vxlan id 42 remote $1 dstport 4789 dev eth0
ip addr add $2/24 dev vx0 && ip link set vx0 up
rdma link add rxe0 type rxe netdev vx0
EOF
}
net_sh "$SWITCH_IP" 10.0.0.2 "$VM_RUN/net2.sh"
[ -n "$tap" ] && net_sh "$tnet.254" 10.0.0.1 "$VM_RUN/net1.sh"

BW="ib_write_bw -s 65536 -n $iters --report_gbits -F -d rxe0 -x"
cat >"$VM_RUN/server.sh" <<EOF
#!/bin/sh
echo "QPACE-TEST: begin write_bw"
timeout 150 $BW \$QPACE_GIDX
rc=\$?
echo "QPACE-TEST: end write_bw rc=\$rc"
exit \$rc
EOF
cat >"$VM_RUN/client.sh" <<EOF
#!/bin/sh
mkdir -p /dev/shm /run/qpace && mount -t tmpfs shm /dev/shm || exit 2
qpaced --allow $SW_TELEM/32 --metrics off >/tmp/qpaced.log 2>&1 &
echo "QPACE-TEST: begin link"
/usr/bin/ip -d link show vx0
ibv_devinfo -d rxe0 | grep -E 'state|active_mtu'
echo "QPACE-TEST: end link"
echo "QPACE-TEST: begin write_bw"
# g1 boots at the same time: retry while its server is not listening yet.
for i in \$(seq 90); do
	timeout 150 $BW \$QPACE_GIDX 10.0.0.1 >/tmp/out 2>&1
	rc=\$?
	grep -q "Couldn't connect" /tmp/out || break
	sleep 1
done
cat /tmp/out
echo "QPACE-TEST: end write_bw rc=\$rc"
echo "QPACE-TEST: begin agent"
qpacectl status
cat /tmp/qpaced.log
echo "QPACE-TEST: end agent"
exit \$rc
EOF

# 127.0.0.1:4789 is where g2's VXLAN arrives: another run of this test may hold it.
i=0
while ss -Hlun 'sport = :4789' | grep -q '127.0.0.1:4789\|0.0.0.0:4789\|\*:4789'; do
	i=$((i + 1))
	if [ $i -gt 60 ]; then
		vm_log "FAILED: UDP 127.0.0.1:4789 stays taken (ss -lun)"
		exit 1
	fi
	sleep 1
done
# --int-flows all: ib_write_bw registers no QP with the VM's qpaced, so no agent asks for
# INT on its flow (docs/switch.md#int-only-where-it-is-used); the check below is that INT
# crosses vx0 to that agent at all.
vm_spawn switch "$SWITCH" -c "$VM_RUN/cloud.topo" --spin 0 --int-flows all \
	--stats-json "$VM_RUN/switch.json"
vm_star_ports 0
if [ -n "$tap" ]; then
	VM_NET0="tap,id=n0,ifname=$tap,script=no,downscript=no"
	VM_QIP=$tnet.1/24
	VM_NET_SH=$VM_RUN/net1.sh
fi
vm_start g1 0 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/server.sh"
VM_NET0="user,id=n0,net=10.0.2.0/24,hostfwd=udp:127.0.0.1:$hp-:4789"
VM_QIP=10.0.2.15/24
VM_NET_SH=$VM_RUN/net2.sh
vm_start g2 1 0 0 "$VM_RUN/client.sh"

vm_wait_jobs 180 "$VM_TIMEOUT" g2 g1
ok=$?
vm_stop_all
tail -n 1 "$VM_RUN/switch.log"
if [ $ok != 0 ]; then
	vm_fail "ib_write_bw between a vxlan guest and a $g1kind guest"
	exit 1
fi

vm_section g2 link
bw=$(vm_section g2 write_bw | awk '$1 == 65536 && NF >= 5 { print $4 }' | tail -n 1)
mtu=$(vm_section g2 link | awk '$1 == "active_mtu:" { print $2 }')
vx=$(vm_section g2 link | awk '$2 == "vx0:" { for (i = 3; i < NF; i++) if ($i == "mtu") print $(i + 1) }')
agent=$(vm_section g2 agent)
echo "$agent" | grep -E 'feedback_(datagrams|accepted|rejected_source|unknown_flow)'
acc=$(echo "$agent" | awk '$1 == "feedback_accepted" { print $2 }')
rej=$(echo "$agent" | awk '$1 == "feedback_rejected_source" { print $2 }')
if [ -z "$bw" ]; then
	vm_fail "ib_write_bw printed no figure"
	exit 1
fi
if [ "$mtu" != "1024" ]; then
	vm_fail "rxe0 on vx0: active_mtu '$mtu', expected 1024 (vx0 mtu $vx)"
	exit 1
fi
if ! python3 - "$VM_RUN/switch.json" $((iters * 65536)) <<'EOF'; then
import json, sys
ports = {p["name"]: p for p in json.load(open(sys.argv[1]))["switches"][0]["ports"]}
for n, p in ports.items():
    print(f"switch {n} ({p['kind']}): rx {p['rx_frames']} frames {p['rx_bytes']} bytes, "
          f"tx {p['tx_frames']} frames {p['tx_bytes']} bytes, drops {p['drop_tail']}, "
          f"peak queue {p['max_qbytes']} bytes, INT reports made {p['int_reports']}, "
          f"control frames sent {p['ctrl_frames']}, "
          f"skipped {p['rx_skipped']}")
vm, g1p = ports["vm2"], ports["vm1"]
# The WRITEs came in through the vxlan port and left towards g1; the ACKs and the INT
# reports (telemetry frames) went back out through it; nothing dropped.
ok = (vm["kind"] == "vxlan" and vm["rx_bytes"] >= int(sys.argv[2]) and vm["tx_frames"] > 0
      and vm["ctrl_frames"] > 0
      and g1p["tx_bytes"] >= int(sys.argv[2]) and all(p["drop_tail"] == 0 for p in ports.values()))
sys.exit(0 if ok else 1)
EOF
	vm_fail "qpace-switch did not carry the traffic through its vxlan port whole (counters above)"
	exit 1
fi
if [ -z "$acc" ] || [ "$acc" -eq 0 ] || [ "${rej:-0}" -ne 0 ]; then
	vm_fail "g2's qpaced: feedback_accepted '$acc', feedback_rejected_source '$rej' (INT over vx0)"
	exit 1
fi
echo "RESULT vxlan g1=$g1kind ready_s=$(cat "$VM_RUN/g1/t_ready")/$(cat "$VM_RUN/g2/t_ready")" \
	"ib_write_bw_gbps=$bw rxe_mtu=$mtu vx0_mtu=$vx int_accepted=$acc" | tee "$VM_RUN/result"
exit 0
