#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Install, when missing, the Debian packages the Soft-RoCE guests need on the host:
# QEMU (TCG is enough), a static busybox for the guest, rdma-core and perftest (copied
# into the guest's initramfs), cpio, kmod (depmod/modprobe on the unpacked kernel), and
# python3 (the test relay, the vector picker, the switch-counter check).
# The guest kernel itself is not installed: tests/vm/build-initrd.sh downloads its
# package with `apt-get download` and unpacks it under build/vm/.
#   tests/vm/deps.sh
set -eu
cd "$(dirname "$0")/../.."
exec sh scripts/deps.sh qemu-system-x86 busybox-static rdma-core ibverbs-providers \
	ibverbs-utils perftest rdmacm-utils cpio kmod python3
