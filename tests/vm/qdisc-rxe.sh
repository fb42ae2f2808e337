#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Leave the host as found (docs/enforce.md, "What qpaced changes on a host"): one guest,
# `qpaced --enforce tc` on a device whose qdiscs start as the kernel made them or as an
# operator set them; `tc qdisc show` and `tc class show` are taken before, while qpaced
# runs and after, and compared. Starting roots:
#   fq_codel    eth0's own (the kernel's default, handle 0:): fq in its place while qpaced
#               runs, the default back after
#   mq          eth1, a virtio NIC with 4 queues on a host multi-queue tap (QEMU's dgram
#               netdev has one queue; tap with queues=4 gives the guest its mq root): an mq
#               stays the root (one of qpaced's, 5150:, since the kernel's 0: names no
#               class), fq under each queue tc shows, the kernel's tree back after
#   htb         the operator's tree on eth0 (a 100 Mbit class 1:10 over an fq_codel leaf
#               10:, a common shaping tree): refused, nothing touched; with --wire-fq-parent
#               1:10 fq is that class's leaf, the tree (classes too) as before after
#   fq_codel    the operator's (handle 8001:, limit 5000): refused; with --wire-qdisc
#               replace fq in its place, the same fq_codel 8001: limit 5000 back after
#   crash       kill -9 while fq sits under htb 1:10, then `qpaced --enforce off --dev
#               eth0`: the tree as before
# Passes when every "after" equals its "before" byte for byte, every "during" shows what
# the case wants, and each refusal exits non-zero naming the root and the flag.
#
#   tests/vm/qdisc-rxe.sh          (root: the multi-queue tap; without it the mq case is
#                                   skipped, said)
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

vm_skip_unless_runnable
vm_skip_unless_built qpaced qpacectl
vm_setup || exit 1

TAP=""
if [ "$(id -u)" = 0 ] && ip tuntap add dev "qpq$$" mode tap multi_queue 2>/dev/null; then
	TAP=qpq$$
	trap 'vm_stop_all; ip link del "$TAP" 2>/dev/null' EXIT
	VM_EXTRA="-netdev tap,id=n1,ifname=$TAP,script=no,downscript=no,queues=4"
	VM_EXTRA="$VM_EXTRA -device virtio-net-pci,netdev=n1,mq=on,vectors=10,mac=52:54:00:00:02:01,romfile="
else
	echo "qdisc-rxe: no multi-queue tap (needs root and tun): the mq case is skipped"
fi

cat >"$VM_RUN/job.sh" <<'EOF'
#!/bin/sh
mkdir -p /dev/shm /run/qpace && mount -t tmpfs shm /dev/shm || exit 2
mount -t bpf bpf /sys/fs/bpf || exit 2   # the pins: what --enforce off reads after a crash
TC=/usr/sbin/tc
rc=0
Q="qpaced --wire-rate 20M --metrics off --enforce tc"
show() { # DEV: the qdiscs and classes as tc shows them
	$TC qdisc show dev $1
	echo "--"
	$TC class show dev $1
}
# case TAG DEV FLAGS WANT: before, qpaced with FLAGS, during (must match the grep WANT),
# SIGTERM, after (must equal before)
case_run() {
	tag=$1 dev=$2 flags=$3 want=$4
	show $dev >/tmp/before
	$Q --dev $dev $flags >/tmp/q.log 2>&1 &
	qp=$!
	sleep 3
	show $dev >/tmp/during
	kill $qp
	wait $qp
	show $dev >/tmp/after
	echo "QPACE-TEST: begin $tag"
	echo "before:"; cat /tmp/before
	echo "during:"; cat /tmp/during
	echo "after:"; cat /tmp/after
	echo "qpaced:"; grep -E "fq on|could not|tc egress: $dev" /tmp/q.log
	echo "QPACE-TEST: end $tag"
	if ! grep -Eq "$want" /tmp/during; then echo "FAIL $tag: during lacks /$want/"; rc=1; fi
	if ! cmp -s /tmp/before /tmp/after; then echo "FAIL $tag: after differs from before"; rc=1; fi
}
# refuse TAG DEV FLAGS NAME: qpaced must exit non-zero naming NAME and leave DEV alone
refuse() {
	tag=$1 dev=$2 flags=$3 name=$4
	show $dev >/tmp/before
	timeout 20 $Q --dev $dev $flags >/tmp/q.log 2>&1
	st=$?
	show $dev >/tmp/after
	echo "QPACE-TEST: begin $tag"
	echo "exit $st"; cat /tmp/q.log
	echo "QPACE-TEST: end $tag"
	if [ $st = 0 ] || [ $st = 124 ] || ! grep -q "$name" /tmp/q.log; then
		echo "FAIL $tag: exit $st, or no '$name' in its message"; rc=1
	fi
	if ! cmp -s /tmp/before /tmp/after; then echo "FAIL $tag: the device changed"; rc=1; fi
}
htb() {
	$TC qdisc del dev eth0 root 2>/dev/null
	$TC qdisc add dev eth0 root handle 1: htb default 10 &&
	$TC class add dev eth0 parent 1: classid 1:10 htb rate 100mbit &&
	$TC qdisc add dev eth0 parent 1:10 handle 10: fq_codel
}

case_run fq_codel-default eth0 "" "qdisc fq 5150: root"
if [ -e /sys/class/net/eth1 ]; then
	/usr/bin/ip link set eth1 up
	case_run mq-default eth1 "" "qdisc fq 5151: parent 5150:1"
	# one fq for each queue the dump shows (a queue the kernel does not use, beyond the
	# guest's CPUs, has a hidden qdisc of its own that tc does not show)
	want=$(grep -c "^qdisc .* parent :" /tmp/before)
	n=$(grep -c "qdisc fq 515[1-9a-f]: parent 5150:" /tmp/during)
	[ "$n" -ge 1 ] && [ "$n" = "$want" ] || { echo "FAIL mq-default: $n fq under mq, want $want"; rc=1; }
	grep -q "qdisc mq 5150: root" /tmp/during || { echo "FAIL mq-default: mq not the root"; rc=1; }
fi
htb || { echo "FAIL: the htb tree"; rc=1; }
refuse htb-refused eth0 "" "htb 1:"
grep -q -- "--wire-fq-parent" /tmp/q.log || { echo "FAIL htb-refused: no flag named"; rc=1; }
case_run htb-class eth0 "--wire-fq-parent 1:10" "qdisc fq 5150: parent 1:10"
grep -q "qdisc htb 1: root" /tmp/during || { echo "FAIL htb-class: htb not the root"; rc=1; }
# a crash: kill -9 with fq under 1:10, then --enforce off
show eth0 >/tmp/before
$Q --dev eth0 --wire-fq-parent 1:10 >/tmp/q.log 2>&1 &
qp=$!
sleep 3
kill -9 $qp
wait $qp 2>/dev/null
show eth0 >/tmp/during
qpaced --metrics off --enforce off --dev eth0 >/tmp/off.log 2>&1 &
off=$!
sleep 2
kill $off
wait $off
show eth0 >/tmp/after
echo "QPACE-TEST: begin crash"
echo "after kill -9:"; cat /tmp/during
echo "after --enforce off:"; cat /tmp/after; cat /tmp/off.log
echo "QPACE-TEST: end crash"
grep -q "qdisc fq 5150: parent 1:10" /tmp/during || { echo "FAIL crash: fq gone before --enforce off"; rc=1; }
cmp -s /tmp/before /tmp/after || { echo "FAIL crash: after --enforce off differs"; rc=1; }
$TC qdisc del dev eth0 root
$TC qdisc replace dev eth0 root handle 8001: fq_codel limit 5000
refuse fq_codel-operator eth0 "" "fq_codel 8001:"
grep -q -- "--wire-qdisc replace" /tmp/q.log || { echo "FAIL fq_codel-operator: no flag named"; rc=1; }
case_run fq_codel-replace eth0 "--wire-qdisc replace" "qdisc fq 5150: root"
exit $rc
EOF

vm_star_ports 0      # eth0 is no switch port here: nothing answers on it
vm_start g1 0 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/job.sh" 300
if ! vm_wait g1 ready 200 || ! vm_wait g1 exit 300; then
	vm_fail "qdisc-rxe: the guest did not finish"
	exit 1
fi
vm_console g1 | sed -n '/^QPACE-TEST: begin/,/^QPACE-TEST: end/p; /^FAIL/p'
code=$(vm_exit_code g1)
echo "RESULT qdisc-rxe: exit $code"
[ "$code" = 0 ]
