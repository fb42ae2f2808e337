#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The short Soft-RoCE run for `make test` (and so CI): scenario 1 with few iterations,
# two QEMU guests (TCG) through qpace-switch; scenario 2, the 3 -> 1 incast over ibv
# without and with qpaced (3 rounds of 256 KiB); scenario 3 (soft host <-> one rxe guest,
# 8 x 64 KiB each way, then 16 x 64 KiB through 1% loss: ~45 s more); scenario 4 (the
# cloud-VM VXLAN recipe of docs/soft-roce.md, a slirp guest on a vxlan port); scenario 5
# (enforce-rxe.sh; again on the IPv6 link-local GID), 6 (incast-tc-rxe.sh: 3 unmodified ib_write_bw -> 1 without and
# with qpaced --enforce tc --cc hpcc, 4 guests, ~1.5-2.5 min) and 7 (the same under
# DCQCN through qpace-switch --ecn, ~1.5 min; QPACE_VM_TC_INCAST=0 skips 6 and 7). About
# two and a half minutes for 1-4
# (~100 s here before the lossy run), plus a one-time ~70 MB
# kernel package download and initrd build cached under build/vm/. Skips, saying why,
# when QEMU cannot run here.
if [ "${BUILD:-build}" != build ]; then
	# The guests' initrd is made of build/bin (tests/vm/build-initrd.sh), never another build.
	echo "skip vm_rxe: the guest tests run build/bin, not BUILD=$BUILD"
	exit 0
fi
exec sh "$(dirname "$0")/../vm/test-rxe.sh" --short
