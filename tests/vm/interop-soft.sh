#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scenario 3, interop: qpace's soft backend (a userspace RoCEv2 RC endpoint) on the host and
# kernel rxe in one guest talk RoCEv2 to each other through qpace-switch. build/bin/qp-check
# runs twice, every byte checked on the receiving side:
#
#   host-writes  guest = qp-check server (ibv, rxe0), host = client (--backend soft):
#                host -> guest RDMA WRITE + WRITE_IMM, guest -> host SEND
#   guest-writes host = server (soft), guest = client: the same verbs the other way
#
#   tests/vm/interop-soft.sh [--short] [--pcap FILE] [--vectors] [--impair SPEC]
#
# Wiring: `qpace-switch --star 2`; switch port 0 is the soft host (attach=127.0.0.1:P,
# ip=10.0.0.1), port 1 the guest's eth0 (10.0.0.2, rxe0). The soft host speaks only
# ARP/IPv4/RoCEv2, so qp-check's TCP exchange of QPN/PSN/GID/rkey goes over a second guest
# NIC on QEMU's user network (eth1, 10.0.2.15): host -> guest through a hostfwd port,
# guest -> host as 10.0.2.2. Only the exchange uses it; every RoCE frame crosses the switch
# (checked from the switch's counters). The guest knows the soft host's MAC statically (see
# guest.sh below); the soft host learns the guest's by ARP through the switch.
#
#   --short     fewer, smaller messages (make test)
#   --pcap F    keep the switch's capture in F (default: the run folder)
#   --vectors   also keep one frame of each opcode rxe sent to the soft host in
#               tests/vectors/rxe-soft-interop.pcap (tests/vm/pick-vectors.py); the
#               switch's buffer is 16K then, so frames are lost and rxe answers with NAKs
#   --impair S  the switch impairs both links (qpace-switch --impair S, e.g. loss=1%):
#               the data must still arrive intact both ways, and both RC ends must have
#               recovered: the soft host's retransmissions (qp-check's rc line) and rxe's
#               (its hw_counters completer_retry_err, printed by the guest) above 0
# QPACE_VM_SWITCH_ARGS replaces the switch's link arguments (default --rate 1G --buffer 1M
# --delay 10us).
#
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

short=0 pcap="" vectors=0 impair=""
while [ $# -gt 0 ]; do
	case $1 in
	--short) short=1; shift ;;
	--pcap) pcap=${2:-}; shift 2 ;;
	--vectors) vectors=1; shift ;;
	--impair) impair=${2:-}; shift 2 ;;
	*) echo "usage: $0 [--short] [--pcap FILE] [--vectors] [--impair SPEC]" >&2; exit 2 ;;
	esac
done

vm_skip_unless_runnable
vm_need_built qpace-switch qp-check
SWITCH=$VM_TOP/build/bin/qpace-switch
QPCHECK=$VM_TOP/build/bin/qp-check

vm_setup || exit 1
[ -n "$pcap" ] || pcap=$VM_RUN/switch.pcap
# Ports: the switch's star uses P..P+3; TCP: P+10 forwarded to the guest's 18600, P+11 the
# host's server for the guest's client.
fwd=$((VM_PORT + 10)) hsrv=$((VM_PORT + 11))
if [ $short = 1 ] && [ -n "$impair" ]; then
	ARGS="-s 64K -n 16 --rate 50M"   # ~1000 frames each way: some are lost, surely
elif [ $short = 1 ]; then
	ARGS="-s 64K -n 8 --rate 50M"
else
	ARGS="-s 256K -n 40 --rate 50M"
fi
SOFT_MAC=02:00:0a:00:00:01
SOFT="--backend soft --options attach=127.0.0.1:$VM_PORT,ip=10.0.0.1,mac=$SOFT_MAC"

cat >"$VM_RUN/guest.sh" <<EOF
#!/bin/sh
# eth1 = the NIC whose MAC is 52:54:00:00:01:xx (QEMU's user network): TCP exchange only.
for d in /sys/class/net/eth*; do
	case \$(cat \$d/address) in 52:54:00:00:01:*) nic=\${d##*/} ;; esac
done
/usr/bin/ip addr add 10.0.2.15/24 dev \$nic && /usr/bin/ip link set \$nic up || exit 2
# The soft host's MAC, fixed: qp_dial/qp_accept do not run the soft context while they wait
# for the peer's "ready" byte, so it cannot answer the ARP that rxe's move to RTR sends
# (ETIMEDOUT); see the handoff. The soft host still resolves the guest by ARP.
/usr/bin/ip neigh replace 10.0.0.1 lladdr $SOFT_MAC dev eth0 nud permanent || exit 2
# rxe's own counters of loss recovery, after each transfer (cumulative)
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
rxe_counters() {
	for c in completer_retry_err rcvd_seq_err retry_exceeded_err out_of_seq_request duplicate_request; do
		printf ' %s %s' \$c \$(cat \$hw/\$c 2>/dev/null || echo NA)
	done
}
echo "QPACE-TEST: begin host-writes"
timeout 150 qp-check -d rxe0 -p 18600 $ARGS
rc=\$?
echo "rxe counters:\$(rxe_counters)"
echo "QPACE-TEST: end host-writes rc=\$rc"
[ \$rc = 0 ] || exit 1
echo "QPACE-TEST: begin guest-writes"
i=0
until timeout 150 qp-check -d rxe0 -p $hsrv $ARGS 10.0.2.2; do
	i=\$((i + 1))
	[ \$i -ge 30 ] && { echo "QPACE-TEST: end guest-writes rc=1"; exit 1; }
	sleep 1
done
echo "rxe counters:\$(rxe_counters)"
echo "QPACE-TEST: end guest-writes rc=0"
EOF

# --spin 0: the TCG guest and the soft host's polling want both cores.
links="--rate 1G --buffer 1M --delay 10us"
[ $vectors = 1 ] && links="--rate 1G --buffer 16K --delay 10us"
# shellcheck disable=SC2086
vm_spawn switch "$SWITCH" --star 2 --base-port "$VM_PORT" --spin 0 ${QPACE_VM_SWITCH_ARGS:-$links} \
	--stats-json "$VM_RUN/switch.json" --pcap "$pcap" ${impair:+--impair "$impair"}
vm_star_ports 1
vm_user_nic 1 "$fwd" 18600
vm_start g2 1 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/guest.sh"

# host_qp_check TAG ARGS...: the soft side, bounded in time, its output kept; a client
# retries while the guest's server is not listening yet (slirp accepts, then closes).
host_qp_check() {
	tag=$1
	shift
	i=0
	while :; do
		# shellcheck disable=SC2086
		timeout 150 "$QPCHECK" $SOFT $ARGS "$@" >"$VM_RUN/host-$tag.log" 2>&1
		rc=$?
		[ $rc = 0 ] && break
		grep -q "connected" "$VM_RUN/host-$tag.log" && break
		i=$((i + 1))
		[ $i -ge 60 ] && break
		sleep 1
	done
	echo "host $tag (rc=$rc, $i refused attempts before):"
	sed 's/^/  /' "$VM_RUN/host-$tag.log"
	return $rc
}

ok=1
vm_wait g2 ready 180 || ok=0
if [ $ok = 1 ]; then
	host_qp_check host-writes -p "$fwd" 127.0.0.1 || ok=0
fi
if [ $ok = 1 ]; then
	host_qp_check guest-writes -p "$hsrv" || ok=0
fi
if [ $ok = 1 ]; then
	vm_wait g2 exit 200 || ok=0
	[ "$(vm_exit_code g2)" = 0 ] || ok=0
fi
vm_stop_all
for t in host-writes guest-writes; do
	echo "guest $t:"
	vm_section g2 $t | sed 's/^/  /'
done
if [ $ok != 1 ]; then
	vm_fail "interop soft host <-> rxe guest"
	exit 1
fi

# Every RoCE frame crossed the switch: it carried both transfers' data each way.
bytes=$(echo "$ARGS" | awk '{ n = $4; s = $2; sub(/K/, "", s); print n * s * 1024 }')
if ! python3 - "$VM_RUN/switch.json" "$bytes" <<'EOF'; then
import json, sys
ports = json.load(open(sys.argv[1]))["switches"][0]["ports"]
for p in ports:
    print(f"switch {p['name']}: tx {p['tx_frames']} frames {p['tx_bytes']} bytes, "
          f"drops {p['drop_tail']}, peak queue {p['max_qbytes']} bytes")
want = int(sys.argv[2])
sys.exit(0 if all(p["tx_bytes"] >= want for p in ports) else 1)
EOF
	vm_fail "the switch did not carry both transfers (counters above; want $bytes bytes each way)"
	exit 1
fi
if [ -n "$impair" ]; then
	# Recovery on both ends: the soft host's RC retransmitted (it wrote in host-writes and
	# lost data on the way to the guest), and rxe's completer retried (its writes in
	# guest-writes, its SENDs in host-writes); the switch says what it lost.
	soft_rt=$(awk '/^qp-check client rc:/ { print $4 }' "$VM_RUN/host-host-writes.log")
	rxe_rt=$(vm_section g2 guest-writes | awk '/^rxe counters:/ { for (i = 4; i <= NF; i += 2)
		if ($(i - 1) == "completer_retry_err") print $i }')
	lost=$(python3 -c 'import json, sys
ports = json.load(open(sys.argv[1]))["switches"][0]["ports"]
print(sum(p["impair_loss"] + p["impair_ge_loss"] for p in ports))' "$VM_RUN/switch.json")
	echo "impair $impair: the switch lost $lost frames; soft host retransmitted ${soft_rt:-?} packets, rxe's completer retried ${rxe_rt:-?} times"
	if ! [ "${soft_rt:-0}" -gt 0 ] 2>/dev/null || ! [ "${rxe_rt:-0}" -gt 0 ] 2>/dev/null ||
		! [ "$lost" -gt 0 ]; then
		vm_fail "with --impair $impair: a side did not recover by retransmission (figures above)"
		exit 1
	fi
fi
if command -v tshark >/dev/null 2>&1; then
	echo "capture: $(tshark -r "$pcap" -Y infiniband 2>/dev/null | wc -l) RoCEv2 frames," \
		"opcodes: $(tshark -r "$pcap" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
			sort -n | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }')"
fi
if [ $vectors = 1 ]; then
	python3 "$VM_TOP/tests/vm/pick-vectors.py" --src 10.0.0.2 "$pcap" "$VM_TOP/tests/vectors/rxe-soft-interop.pcap" ||
		exit 1
fi
echo "RESULT interop=pass ${impair:+impair=$impair soft_retrans=$soft_rt rxe_retries=$rxe_rt switch_lost=$lost }ready_s=$(cat "$VM_RUN/g2/t_ready") $(grep -h '^qp-check client:' \
	"$VM_RUN/host-host-writes.log" | sed 's/.*in \([0-9.]*\) s: \([^ ]*\) .*/host_client_s=\1 host_client_rate=\2/')" |
	tee "$VM_RUN/result"
exit 0
