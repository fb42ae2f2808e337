#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The ibv backend on real Soft-RoCE: two QEMU guests (TCG, Debian 12 kernel, rdma_rxe on
# eth0, wired to each other with -netdev dgram) run build/bin/qp-check as server and
# client: TCP exchange, rdma_cm, split and paced WRITE_IMMs with small send queues, SENDs.
# Every run must finish with rc=0 on both sides (every byte verified).
#
#   tests/vm/qp-check-rxe.sh [WORKDIR]     (default /tmp/qpace-vm; needs qemu-system-x86,
#                                           busybox-static, rdma-core, ibverbs-providers)
# The guest kernel comes from Debian (apt-get download linux-image-<kver>) into WORKDIR;
# nothing is installed. About a minute on a 2-core machine.
set -euo pipefail
W=${1:-/tmp/qpace-vm}
QPCHECK=$(cd "$(dirname "$0")/../.." && pwd)/build/bin/qp-check
[ -x "$QPCHECK" ] || { echo "qp-check-rxe: build first (make): $QPCHECK missing" >&2; exit 1; }
mkdir -p "$W"
cd "$W"

KPKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
KV=${KPKG#linux-image-}
if [ ! -d kernel/lib/modules/$KV ]; then
	apt-get download "$KPKG" >/dev/null
	dpkg-deb -x "$KPKG"_*.deb kernel
	depmod -b kernel "$KV"
fi

# ---- the guest's /init ----
cat > init <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin 2>/dev/null
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
ip() { /usr/sbin/ip "$@"; }
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs run /run; mount -t tmpfs tmp /tmp
for kv in $(cat /proc/cmdline); do case $kv in rrole=*|rip=*|rpeer=*) eval "$kv";; esac; done
for m in $(cat /mods/order); do insmod /mods/$m.ko || echo "insmod $m FAILED"; done
ip link set lo up; sleep 1
ip addr add $rip dev eth0; ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0
sleep 3   # IPv6 DAD, GIDs
echo "=== RXE_READY"
TESTS="-p 18600 -n 40 -s 256K --rate 50M
-p 18601 --rdma_cm -n 40 -s 256K --rate 50M
-p 18602 -n 10 -s 1M --rate 20M -t 8
-p 18603 -n 2000 -s 64 --rate 1G -t 4"
echo "$TESTS" | while read -r t; do
	if [ "$rrole" = server ]; then
		echo "=== SERVER: qp-check $t"; timeout 120 qp-check -d rxe0 $t; echo "=== rc=$?"
	else
		sleep 3; echo "=== CLIENT: qp-check $t"; i=0
		until timeout 120 qp-check -d rxe0 $t $rpeer; do
			i=$((i+1)); [ $i -ge 20 ] && { echo "=== rc=1"; break; }; sleep 1
		done
		[ $i -lt 20 ] && echo "=== rc=0"
	fi
done
echo "=== DONE"; sync; poweroff -f
EOF

# ---- the initrd ----
R=$W/root
rm -rf "$R"; mkdir -p $R/usr/{bin,sbin,lib/x86_64-linux-gnu/libibverbs,lib64} $R/{proc,sys,dev,run,tmp,etc/libibverbs.d,mods}
ln -s usr/bin $R/bin; ln -s usr/sbin $R/sbin; ln -s usr/lib $R/lib; ln -s usr/lib64 $R/lib64
cp /bin/busybox $R/usr/bin/busybox; ln -s busybox $R/usr/bin/sh
MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover net_failover virtio_net udp_tunnel ip6_udp_tunnel crc32_generic ib_core ib_uverbs rdma_rxe configfs ib_cm iw_cm rdma_cm rdma_ucm"
for m in $MODS; do
	f=$(modprobe -d kernel -S "$KV" --show-depends $m | awk '$1=="insmod"{print $2}' | tail -1)
	cp "$f" $R/mods/$m.ko
done
echo "$MODS" > $R/mods/order
BINS="/usr/bin/rdma /usr/sbin/ip"
for b in $BINS; do cp $b $R$b; done
cp "$QPCHECK" $R/usr/bin/qp-check
PROV=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
cp $PROV $R/usr/lib/x86_64-linux-gnu/libibverbs/
cp /etc/libibverbs.d/rxe.driver $R/etc/libibverbs.d/
for lib in $(ldd $BINS "$QPCHECK" $PROV | awk '$3 ~ /^\//{print $3}' | sort -u); do
	cp -L "$lib" $R/usr/lib/x86_64-linux-gnu/
done
cp -L /lib64/ld-linux-x86-64.so.2 $R/usr/lib64/
cp init $R/init; chmod +x $R/init
(cd $R && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > initrd.gz

# ---- two guests, wired to each other ----
guest() { # log role ip peer lport rport mac
	timeout 600 qemu-system-x86_64 -machine pc -m 512M -smp 1 -nographic -no-reboot \
		-kernel kernel/boot/vmlinuz-$KV -initrd initrd.gz \
		-append "console=ttyS0 panic=-1 quiet rrole=$2 rip=$3/24 rpeer=$4" \
		-netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$5,remote.type=inet,remote.host=127.0.0.1,remote.port=$6 \
		-device virtio-net-pci,netdev=n0,mac=$7 > "$1" 2>&1
}
P=$((47000 + RANDOM % 1000))
guest server.log server 10.0.0.1 10.0.0.2 $P $((P + 1)) 52:54:00:00:00:11 &
guest client.log client 10.0.0.2 10.0.0.1 $((P + 1)) $P 52:54:00:00:00:12 &
wait

grep -hE "^(qp-check|qpace|=== (SERVER|CLIENT|rc))" server.log client.log | tr -d '\r'
ok=$(cat server.log client.log | tr -d '\r' | grep -c "^=== rc=0" || true)
echo "qp-check-rxe: $ok of 8 runs passed (logs in $W)"
[ "$ok" -eq 8 ]
