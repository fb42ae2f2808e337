#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `make test-rxe`: the Soft-RoCE scenarios, on kernel rxe in QEMU guests.
#   tests/vm/test-rxe.sh [--short]
# --short is the version `make test` runs (tests/integration/vm_rxe.sh): fewer iterations.
# Each scenario prints its figures; the last line counts scenarios. Needs root for the
# package install (tests/vm/deps.sh) unless the packages are there already.
set -u
cd "$(dirname "$0")/../.."
short=""
[ "${1:-}" = --short ] && short=--short

if ! sh tests/vm/deps.sh; then
	echo "test-rxe: SKIP: the QEMU/rdma-core packages are missing and cannot be installed"
	echo "test-rxe: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

passed=0 failed=0 skipped=0
scenario() { # scenario TITLE CMD...
	echo "=== $1"
	shift
	"$@"
	case $? in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
}

# with_agent TITLE CMD...: scenario TITLE CMD..., or a skip when qpace-switch, qpaced or
# qpacectl is not built (the guests run build/bin's).
with_agent() {
	if [ -x build/bin/qpace-switch ] && [ -x build/bin/qpaced ] && [ -x build/bin/qpacectl ]; then
		scenario "$@"
	else
		echo "=== $1: SKIP: build/bin/qpace-switch, qpaced or qpacectl is not built"
		skipped=$((skipped + 1))
	fi
}

via=switch
if [ ! -x build/bin/qpace-switch ] && [ -n "$short" ]; then
	echo "test-rxe: build/bin/qpace-switch is not built: scenario 1 goes through tests/vm/relay.py"
	via=relay
fi
scenario "scenario 1, transparency: ib_write_bw and ib_write_lat through $via" \
	sh tests/vm/perftest-pair.sh --via $via $short
# Scenario 2 boots 4 guests and runs the incast twice (~1 min; --short: fewer rounds).
if [ -x build/bin/qpace-bench ] || [ -z "$short" ]; then
	scenario "scenario 2, control on rxe: incast 3 -> 1 over ibv, without and with qpaced (hpcc)" \
		sh tests/vm/incast-rxe.sh $short
fi
if [ -x build/bin/qpace-switch ] && [ -x build/bin/qp-check ]; then
	scenario "scenario 3, interop: soft backend on the host <-> kernel rxe in a guest, WRITE and SEND both ways" \
		sh tests/vm/interop-soft.sh $short
	scenario "scenario 3, interop through 1% loss: every byte intact both ways, the soft host and rxe retransmit" \
		sh tests/vm/interop-soft.sh --short --impair loss=1%,seed=7
else
	echo "=== scenario 3, interop: SKIP: build/bin/qpace-switch or build/bin/qp-check is not built"
	skipped=$((skipped + 1))
fi
# Scenario 3b boots 1 guest: qpace-bench's read_bw and atomic_bw against perftest's
# ib_read_bw and ib_atomic_bw on rxe, each side client and server, soft backend through the
# switch and ibv on rxe0 in the guest.
if [ -x build/bin/qpace-switch ] && [ -x build/bin/qpace-bench ]; then
	scenario "scenario 3b, perftest: qpace-bench read_bw and atomic_bw against ib_read_bw and ib_atomic_bw, both ways" \
		sh tests/vm/perftest-qpace.sh $short
else
	echo "=== scenario 3b, perftest: SKIP: build/bin/qpace-switch or build/bin/qpace-bench is not built"
	skipped=$((skipped + 1))
fi
# Scenario 4 boots 2 guests joined by the VXLAN recipe of docs/soft-roce.md (15-30 s, so in
# both modes):
# --short, one on QEMU's user network (slirp) and one on a plain udp port; the full run
# (as root) puts the other on a host tap device, so both are vxlan ports.
vxtap=""
[ -z "$short" ] && [ "$(id -u)" = 0 ] && vxtap=--tap
with_agent "scenario 4, cloud VMs: guests on routed NICs join qpace-switch over VXLAN, rxe on vx0" \
	sh tests/vm/vxlan-rxe.sh $short $vxtap

# Scenario 5 boots 2 guests (~100 s): unmodified ib_write_bw paced by qpaced --enforce tc;
# then again over IPv6: ib_write_bw on rxe0's GID 0, the IPv6 link-local address (what
# ib_write_bw uses without -x), the QP found on the wire with its fe80:: peer (~40 s).
with_agent "scenario 5, unmodified programs: ib_write_bw alone, then paced by qpaced --enforce tc" \
	sh tests/vm/enforce-rxe.sh $short
with_agent "scenario 5, over IPv6: ib_write_bw on GID 0 (fe80::), paced by qpaced --enforce tc" \
	env QPACE_VM_GIDX=0 sh tests/vm/enforce-rxe.sh $short

# Scenario 6 boots 4 guests (~1.5 min --short): the incast of unmodified ib_write_bw,
# 3 -> 1 through a 20 Mb/s port, without and with qpaced --enforce tc --cc hpcc; its
# targets: drops cut, the peak queue bounded, Jain, no retransmission timeout
# (docs/enforce-qemu.md#in-qemu-guests-the-incast-of-unmodified-ib_write_bw).
# Scenario 7 boots 4 guests (~1.5 min --short): the same incast under DCQCN through
# qpace-switch --ecn 4K,16K,0.2 (no INT): the switch marks, the receiver's qpaced answers
# CE with CNPs, the senders' qpaced cut; drops cut as in 6, the queue's mean at most Kmin
# (docs/enforce-qemu.md#in-qemu-guests-the-incast-under-dcqcn-through-qpace-switch---ecn).
# QPACE_VM_TC_INCAST=0 skips both.
# Scenario 6 over IPv6 (~1.5 min --short): the same incast on rxe0's GID 0 (fe80::), the
# switch marking and reporting on IPv6 frames (--int-flows all: IPv6 flows send no WANT).
if [ "${QPACE_VM_TC_INCAST:-1}" = 0 ]; then
	echo "=== scenarios 6 and 7, unmodified incast: SKIP: QPACE_VM_TC_INCAST=0"
	skipped=$((skipped + 3))
else
	with_agent "scenario 6, unmodified incast: 3 x ib_write_bw -> 1, without and with qpaced --enforce tc --cc hpcc" \
		sh tests/vm/incast-tc-rxe.sh $short
	with_agent "scenario 6, over IPv6: the same incast on GID 0 (fe80::), hpcc fed by the switch's IPv6 INT" \
		env QPACE_VM_GIDX=0 sh tests/vm/incast-tc-rxe.sh $short
	with_agent "scenario 7, unmodified incast under DCQCN: qpace-switch --ecn, CNPs from the receiver's qpaced" \
		env QPACE_VM_TC_CC=dcqcn sh tests/vm/incast-tc-rxe.sh $short
	# the full set only: scenario 7 over IPv6 (CE in the traffic class, IPv6 CNPs)
	[ -n "$short" ] ||
		with_agent "scenario 7, over IPv6: the DCQCN incast on GID 0 (fe80::)" \
			env QPACE_VM_GIDX=0 QPACE_VM_TC_CC=dcqcn sh tests/vm/incast-tc-rxe.sh
fi

# Scenario 8 boots 1 guest: qpaced --enforce tc on a device that starts with the kernel's
# fq_codel, the kernel's mq (a multi-queue tap; root), an operator's htb tree and an
# operator's fq_codel: tc qdisc/class show before, while it runs and after, compared.
with_agent "scenario 8, leave the host as found: the qdiscs before, during and after qpaced" \
	sh tests/vm/qdisc-rxe.sh
# Scenario 9 boots 4 guests: the do-no-harm matrix's short set (make test-rxe-matrix runs
# every case): each program that completes without qpaced completes with it, drops fall.
with_agent "scenario 9, do no harm: unmodified perftest programs without and with qpaced" \
	sh tests/vm/matrix-rxe.sh $short

echo "test-rxe: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
