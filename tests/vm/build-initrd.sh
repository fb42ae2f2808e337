#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Build what a Soft-RoCE guest boots, from Debian packages only, cached under build/vm/:
#
#   build/vm/vmlinuz           Debian's kernel (package downloaded with `apt-get download`,
#                              unpacked with dpkg-deb into a scratch folder; never installed)
#   build/vm/base.cpio.gz      busybox, the kernel modules in insmod order, rdma-core's
#                              libraries and rxe provider, perftest, iproute2's ip and rdma,
#                              every shared library `ldd` lists for them, and tests/vm/init
#   build/vm/qpace.cpio.gz     build/bin/* (qpace's own programs) and their libraries, when
#                              build/bin has any; absent otherwise
#
# Each piece is rebuilt only when its inputs change (a stamp file holds a hash of them).
# A guest's initrd is these archives concatenated with a small per-guest job archive
# (tests/vm/lib.sh does that); Linux unpacks concatenated cpio archives in order.
#
#   tests/vm/build-initrd.sh            build what is missing or stale
#   QPACE_VM_KERNEL_PKG=linux-image-6.1.0-57-amd64 tests/vm/build-initrd.sh   pin the kernel
set -eu
cd "$(dirname "$0")/../.."
TOP=$(pwd)
OUT=$TOP/build/vm
HERE=$TOP/tests/vm
mkdir -p "$OUT"

say() { echo "qpace-vm: $*"; }
die() { echo "qpace-vm: error: $*" >&2; exit 1; }

# Modules the guest needs; modprobe --show-depends expands each into its insmod chain, and
# the union (first occurrence wins) is the load order. crc32_generic is no symbol
# dependency of rdma_rxe (rxe asks the crypto API for "crc32" at run time), so it is
# listed before it explicitly.
# sch_fq, cls_bpf and sch_ingress (clsact): qpaced --enforce tc (docs/enforce.md); sch_htb
# and sch_fq_codel: the operator's trees tests/vm/qdisc-rxe.sh starts from.
TOP_MODULES="virtio_pci virtio_net crc32_generic ib_uverbs rdma_rxe rdma_ucm vxlan sch_fq cls_bpf \
sch_ingress sch_htb sch_fq_codel"

# Userspace copied into the guest (absolute host paths; the guest gets the same paths).
BINS="/usr/bin/ib_write_bw /usr/bin/ib_write_lat /usr/bin/ib_send_bw /usr/bin/ib_send_lat
/usr/bin/ib_atomic_bw /usr/bin/ib_atomic_lat
/usr/bin/ib_read_bw /usr/bin/ib_read_lat /usr/bin/ibv_devinfo /usr/bin/ibv_devices
/usr/bin/ibv_rc_pingpong /usr/bin/rping /usr/bin/ucmatose /usr/bin/rdma /usr/bin/ip /usr/sbin/tc"
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
HOST_PKGS="busybox-static perftest ibverbs-providers ibverbs-utils rdmacm-utils libibverbs1
librdmacm1 iproute2 libc6"

hash_of() { sha256sum | cut -c1-16; }

# ---- kernel: resolve the package, download, unpack, keep vmlinuz and the modules -------
kernel_pkg() {
	if [ -n "${QPACE_VM_KERNEL_PKG:-}" ]; then
		echo "$QPACE_VM_KERNEL_PKG"
		return
	fi
	p=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	if [ -z "$p" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -qq >&2
		p=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
	fi
	[ -n "$p" ] || die "cannot resolve linux-image-amd64 to a kernel package (apt-get update?)"
	echo "$p"
}

KPKG=$(kernel_pkg)
KV=${KPKG#linux-image-}
KVER=$(apt-cache policy "$KPKG" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
KSTAMP=$(printf '%s %s %s\n' "$KPKG" "$KVER" "$TOP_MODULES" | hash_of)
MODS=$OUT/mods

if [ "$(cat "$OUT/kernel.stamp" 2>/dev/null)" != "$KSTAMP" ] || [ ! -f "$OUT/vmlinuz" ]; then
	say "kernel: downloading $KPKG ($KVER)"
	scratch=$OUT/kernel-unpack
	rm -rf "$scratch" "$MODS" "$OUT/vmlinuz" "$OUT/kernel.stamp"
	mkdir -p "$scratch/dl" "$MODS"
	# apt drops privileges to _apt for downloads; a root-owned folder makes it warn only.
	(cd "$scratch/dl" && apt-get download -q "$KPKG" >/dev/null 2>&1) ||
		(cd "$scratch/dl" && apt-get download "$KPKG") || die "apt-get download $KPKG failed"
	dpkg-deb -x "$scratch"/dl/*.deb "$scratch/root"
	depmod -b "$scratch/root" "$KV"
	: >"$MODS/order"
	for top in $TOP_MODULES; do
		modprobe -d "$scratch/root" -S "$KV" --show-depends "$top" >"$scratch/deps" ||
			die "module $top not found in $KPKG"
		for ko in $(awk '$1 == "insmod" { print $2 }' "$scratch/deps"); do
			name=$(basename "$ko" .ko)
			grep -qx "$name" "$MODS/order" && continue
			cp "$ko" "$MODS/$name.ko"
			echo "$name" >>"$MODS/order"
		done
	done
	cp "$scratch/root/boot/vmlinuz-$KV" "$OUT/vmlinuz"
	rm -rf "$scratch"
	echo "$KSTAMP" >"$OUT/kernel.stamp"
	say "kernel: $KV, modules: $(tr '\n' ' ' <"$MODS/order")"
fi

# Copy every shared library that ldd lists for the files "$@" into root $1, at the same
# path under /usr (the guest has merged /usr), unless the file $2 lists it as present.
copy_libs() {
	root=$1
	have=$2
	shift 2
	ldd "$@" 2>/dev/null | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' |
		sort -u | while read -r lib; do
		case $lib in /lib/* | /lib64/*) dest=/usr$lib ;; *) dest=$lib ;; esac
		grep -qx "$dest" "$have" 2>/dev/null && continue
		mkdir -p "$root$(dirname "$dest")"
		cp -L "$lib" "$root$dest"
		echo "$dest"
	done
}

make_cpio() { (cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -1 >"$2"; }

# ---- base archive ------------------------------------------------------------------------
pkg_versions=$(dpkg-query -W -f='${Package} ${Version}\n' $HOST_PKGS 2>/dev/null || true)
BSTAMP=$( (cat "$HERE/build-initrd.sh" "$HERE/init" "$OUT/kernel.stamp"; echo "$pkg_versions") | hash_of)
if [ "$(cat "$OUT/base.stamp" 2>/dev/null)" != "$BSTAMP" ] || [ ! -f "$OUT/base.cpio.gz" ]; then
	for b in /bin/busybox $BINS $PROVIDER; do
		[ -e "$b" ] || die "$b is missing: run tests/vm/deps.sh"
	done
	R=$OUT/base-root
	rm -rf "$R"
	mkdir -p "$R"/usr/bin "$R"/usr/lib/x86_64-linux-gnu "$R"/usr/lib64 \
		"$R"/proc "$R"/sys "$R"/dev "$R"/run "$R"/tmp "$R"/etc/libibverbs.d "$R"/var "$R"/job
	ln -s usr/bin "$R/bin"
	ln -s usr/bin "$R/sbin"
	ln -s bin "$R/usr/sbin"
	ln -s usr/lib "$R/lib"
	ln -s usr/lib64 "$R/lib64"
	ln -s ../run "$R/var/run"
	cp /bin/busybox "$R/usr/bin/busybox"
	ln -s busybox "$R/usr/bin/sh"
	for b in $BINS $PROVIDER; do
		mkdir -p "$R$(dirname "$b")"
		cp -L "$b" "$R$b"
	done
	copy_libs "$R" /dev/null $BINS $PROVIDER >"$OUT/base.libs"
	cp /etc/libibverbs.d/rxe.driver "$R/etc/libibverbs.d/"
	mkdir -p "$R/mods"
	cp "$MODS"/*.ko "$MODS/order" "$R/mods/"
	cp "$HERE/init" "$R/init"
	chmod 755 "$R/init"
	make_cpio "$R" "$OUT/base.cpio.gz"
	rm -rf "$R"
	echo "$BSTAMP" >"$OUT/base.stamp"
	say "base initrd: $(du -k "$OUT/base.cpio.gz" | cut -f1) KiB"
fi

# ---- qpace's programs ----------------------------------------------------------------------
set -- "$TOP"/build/bin/*
if [ -e "$1" ]; then
	QSTAMP=$( (cat "$@" "$OUT/base.stamp"; ls "$@") | hash_of)
	if [ "$(cat "$OUT/qpace.stamp" 2>/dev/null)" != "$QSTAMP" ] || [ ! -f "$OUT/qpace.cpio.gz" ]; then
		R=$OUT/qpace-root
		rm -rf "$R"
		mkdir -p "$R/usr/bin"
		cp "$@" "$R/usr/bin/"
		copy_libs "$R" "$OUT/base.libs" "$@" >/dev/null
		make_cpio "$R" "$OUT/qpace.cpio.gz"
		rm -rf "$R"
		echo "$QSTAMP" >"$OUT/qpace.stamp"
		say "qpace initrd: $(ls "$TOP"/build/bin | tr '\n' ' ')"
	fi
else
	rm -f "$OUT/qpace.cpio.gz" "$OUT/qpace.stamp"
fi
