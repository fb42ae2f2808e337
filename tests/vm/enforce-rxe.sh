#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scenario 5, unmodified programs: `qpaced --enforce tc` paces an unmodified ib_write_bw
# on kernel rxe. Two guests through qpace-switch --star 2 (1G: not the bottleneck); the
# client (g2) runs ib_write_bw twice in one boot: first alone, then with
# `qpaced --enforce tc --dev eth0 --cc none --wire-rate R --wire-timeout 18` (cc none: the
# QP it finds on the wire keeps its line rate R). Passes when the paced run's goodput is
# R x 65536 / (64 x 1082 + 16) (payload over the Ethernet frames of a 64 KiB write at MTU
# 1024; over IPv6 each frame is 20 bytes longer, 1102) within 5%, rxe counts no
# retransmission timeout while paced (completer_retry_err beyond the retries its PSN-gap
# NAKs explain, rcvd_seq_err), the QP shows in qpacectl as discovered with wire_set R,
# the unpaced run was faster than 1.5 x that, fq was installed on eth0, and RTT samples
# (ACKs matched with their frames' departures) reached the QP, none below the links' RTT.
# QPACE_VM_SET=1: qpaced's line is 1G instead (the QP it finds runs unpaced), and R comes
# from `qpacectl set QPN rate R` as soon as the QP is there; the QP must show the override.
#
#   tests/vm/enforce-rxe.sh [--short]        (QPACE_VM_ECN_MARK=1: frames sent ECT(0))
#
# QPACE_VM_GIDX=0: ib_write_bw on rxe0's GID index 0, the IPv6 link-local address (what
# it uses without -x): RoCEv2 over IPv6, which qpaced must find and pace the same way
# (the QP's peer then shows as fe80::...). qpace-switch forwards IPv6 frames by MAC.
#
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

short=0
[ "${1:-}" = --short ] && short=1
vm_skip_unless_runnable
vm_skip_unless_built qpace-switch qpaced qpacectl
vm_setup || exit 1
RATE=${QPACE_VM_ENFORCE_RATE:-10M}
RATE_BPS=$(echo "$RATE" | awk '{ v = $1 + 0; u = toupper(substr($1, length($1)));
	m = u == "K" ? 1e3 : u == "M" ? 1e6 : u == "G" ? 1e9 : 1; printf "%d", v * m }')
DUR=8
[ $short = 1 ] && DUR=5
# QPACE_VM_ECN_MARK=1: the client's qpaced also runs --ecn-mark on, so every RoCEv2 frame
# it sends leaves ECT(0) (TOS changed, IPv4 checksum fixed, ICRC as rxe computed it): the
# server's rxe must take them all (the same goodput, no retransmission timeouts).
ECN=off
[ "${QPACE_VM_ECN_MARK:-0}" = 1 ] && ECN=on
GIDX='$QPACE_GIDX'            # the guest's IPv4 RoCEv2 GID (tests/vm/init)
[ -n "${QPACE_VM_GIDX:-}" ] && GIDX=$QPACE_VM_GIDX
[ "$GIDX" = 0 ] && export QPACE_VM_IPV6=1   # the guests keep IPv6 (tests/vm/init)
SET=${QPACE_VM_SET:-0}
LINE=$RATE
[ "$SET" = 1 ] && LINE=1G

# The guests' jobs: both run ib_write_bw twice; between the runs the client starts qpaced.
job() { # job ROLE FILE
	cat >"$2" <<JOB
#!/bin/sh
role=$1 server=$(vm_ip 0)
export PATH=/usr/sbin:\$PATH   # iproute2's tc for qpaced, not busybox's
mkdir -p /dev/shm /run/qpace && mount -t tmpfs shm /dev/shm || exit 2
bw() { # TAG
	echo "QPACE-TEST: begin \$1"
	if [ \$role = server ]; then
		timeout 120 ib_write_bw -s 65536 -D $DUR -u 18 -F -d rxe0 -x $GIDX --report_gbits
		rc=\$?
	else
		i=0
		while :; do
			timeout 120 ib_write_bw -s 65536 -D $DUR -u 18 -F -d rxe0 -x $GIDX --report_gbits \$server >/tmp/out 2>&1
			rc=\$?
			grep -q "Couldn't connect" /tmp/out || break
			i=\$((i + 1))
			[ \$i -ge 90 ] && break
			sleep 1
		done
		cat /tmp/out
	fi
	echo "QPACE-TEST: end \$1 rc=\$rc"
	return \$rc
}
bw alone || exit 1
if [ \$role = server ]; then
	bw paced
	exit \$?
fi
qpaced --enforce tc --dev eth0 --cc none --wire-rate $LINE --wire-timeout 18 \
	--metrics 127.0.0.1:9477 --ecn-mark $ECN --feedback 127.0.0.1:4792 2>/tmp/qpaced.log &
qp=\$!
sleep 2
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
echo "QPACE-TEST: begin hw_before"
for f in \$hw/*; do echo "\$(basename \$f) \$(cat \$f)"; done
echo "QPACE-TEST: end hw_before"
echo "QPACE-TEST: begin qdisc"
tc qdisc show dev eth0
echo "QPACE-TEST: end qdisc"
(sleep $((DUR / 2 + 2)); echo "QPACE-TEST: begin list"; qpacectl list -j; echo
 echo "QPACE-TEST: end list") &
if [ $SET = 1 ]; then   # the first QP found on the wire is 0xf00000
	(i=0; until qpacectl set 0xf00000 rate $RATE >/tmp/set 2>&1; do
		i=\$((i + 1)); [ \$i -ge 500 ] && break; sleep 0.02; done
	 echo "QPACE-TEST: begin set"; echo "tries \$i"; cat /tmp/set; echo "QPACE-TEST: end set") &
fi
bw paced
rc=\$?
echo "QPACE-TEST: begin metrics"
busybox wget -qO- http://127.0.0.1:9477/metrics | grep -E '^qpace_(tc|ecn|rtt)'
echo "QPACE-TEST: end metrics"
echo "QPACE-TEST: begin hw_after"
for f in \$hw/*; do echo "\$(basename \$f) \$(cat \$f)"; done
echo "QPACE-TEST: end hw_after"
sleep 1
kill \$qp
wait \$qp
echo "QPACE-TEST: begin log"
cat /tmp/qpaced.log
tc qdisc show dev eth0
echo "QPACE-TEST: end log"
exit \$rc
JOB
}
job server "$VM_RUN/server.sh"
job client "$VM_RUN/client.sh"

# --spin 0: the TCG guests need both host cores more than the switch needs accuracy.
vm_spawn switch "$VM_TOP/build/bin/qpace-switch" --star 2 --base-port "$VM_PORT" --spin 0 \
	--rate 1G --buffer 1M --delay 10us
vm_star_ports 0
vm_start g1 0 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/server.sh"
vm_star_ports 1
vm_start g2 1 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/client.sh"
ok=0
vm_wait_jobs 180 "$VM_TIMEOUT" g1 g2 && ok=1
vm_stop_all
if [ $ok != 1 ]; then
	vm_fail "ib_write_bw alone and under qpaced --enforce tc"
	exit 1
fi

# BW row: #bytes #iterations peak avg[Gb/s] msgrate
alone=$(vm_section g2 alone | awk '$1 == 65536 && NF >= 5 { print $4 }' | tail -n 1)
paced=$(vm_section g2 paced | awk '$1 == 65536 && NF >= 5 { print $4 }' | tail -n 1)
FRAME=1082                    # Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 1024 + ICRC 4
[ "$GIDX" = 0 ] && FRAME=1102   # IPv6's header is 40
want=$(awk -v r="$RATE_BPS" -v f=$FRAME 'BEGIN { printf "%.6f", r * 65536 / (64 * f + 16) / 1e9 }')
vm_section g2 qdisc
vm_section g2 list
vm_section g2 log
how="--wire-rate $RATE"
[ "$SET" = 1 ] && how="qpacectl set $RATE (line 1G)"
echo "RESULT enforce: alone ${alone} Gb/s, paced ${paced} Gb/s at $how" \
	"(goodput wanted ${want} Gb/s)" | tee "$VM_RUN/result"
fails=""
[ -n "$alone" ] && [ -n "$paced" ] || fails="$fails; ib_write_bw printed no figures"
awk -v p="${paced:-0}" -v w="$want" 'BEGIN { exit !(p >= w * 0.95 && p <= w * 1.05) }' ||
	fails="$fails; paced goodput $paced Gb/s, not within 5% of $want"
awk -v a="${alone:-0}" -v w="$want" 'BEGIN { exit !(a > w * 1.5) }' ||
	fails="$fails; unpaced goodput $alone Gb/s is not above 1.5 x $want: no contrast"
# rxe's own counters across the paced run: packets sent, and retransmissions
hw_delta() { # NAME
	b=$(vm_section g2 hw_before | awk -v n="$1" '$1 == n { print $2 }')
	a=$(vm_section g2 hw_after | awk -v n="$1" '$1 == n { print $2 }')
	echo $(( ${a:-0} - ${b:-0} ))
}
# rxe's completer_retry_err counts every retry it starts: those after its ACK timer fired
# and those after a NAK for a PSN gap (rcvd_seq_err: the responder saw a frame missing,
# i.e. one was lost or reordered on the way), at most one per NAK (rxe_comp.c). So the
# retries no NAK explains, retry - rcvd_seq_err, are the timer's: those are what a rate
# set too low would cause (docs/enforce.md#the-floor-no-spurious-retransmissions).
retry=$(hw_delta completer_retry_err)
seqerr=$(hw_delta rcvd_seq_err)
timer=$((retry > seqerr ? retry - seqerr : 0))
echo "rxe (client) over the paced run: sent_pkts +$(hw_delta sent_pkts)," \
	"completer_retry_err +$retry, retry_exceeded_err +$(hw_delta retry_exceeded_err)," \
	"send_err +$(hw_delta send_err), rcvd_seq_err +$seqerr: $timer retries by the timer"
[ -n "$(vm_section g2 hw_after)" ] || fails="$fails; no rxe hw_counters"
[ "$timer" = 0 ] || fails="$fails; $timer retransmission timeouts while paced (retries $retry, NAKs $seqerr)"
vm_section g2 qdisc | grep -q "qdisc fq" || fails="$fails; no fq on eth0"
vm_section g2 list | grep -q '"discovered":true' || fails="$fails; no discovered QP in qpacectl"
vm_section g2 list | grep -q "\"wire_set\":$RATE_BPS" || fails="$fails; wire_set is not $RATE_BPS"
[ "$SET" != 1 ] || { vm_section g2 set; vm_section g2 list | grep -q '"override":true'; } ||
	fails="$fails; QPACE_VM_SET=1: the QP shows no override"
[ "${QPACE_VM_GIDX:-}" != 0 ] || vm_section g2 list | grep -q '"peer":"fe80:' ||
	fails="$fails; GID 0: the QP's peer is not an IPv6 link-local address"
vm_section g2 metrics
marked=$(vm_section g2 metrics | sed -n 's/^qpace_tc_frames_total{event="ect_marked"} //p')
if [ $ECN = on ]; then
	echo "RESULT enforce --ecn-mark on: ${marked:-0} frames sent as ECT(0), the server's rxe took them"
	[ "${marked:-0}" -gt 1000 ] || fails="$fails; --ecn-mark on marked ${marked:-0} frames"
fi
# RTT samples from the wire (docs/enforce.md): the egress program stamps the frames that
# ask for an ACK, the ingress program matches the ACKs; qpaced gives the samples to the
# QP it found. At least one; the least no shorter than the links' 40 us (4 x 10 us).
rmetric() { vm_section g2 metrics | sed -n "s/^$1 //p"; }
samples=$(rmetric 'qpace_rtt_total{event="rtt_events"}')
rmin=$(rmetric 'qpace_rtt_sample_ns{which="min"}')
rmax=$(rmetric 'qpace_rtt_sample_ns{which="max"}')
echo "RESULT enforce RTT samples: ${samples:-0} to the QP (stamped" \
	"$(rmetric 'qpace_tc_frames_total{event="rtt_stamped"}'), matched" \
	"$(rmetric 'qpace_tc_ingress_frames_total{event="rtt_samples"}')), least" \
	"$(( ${rmin:-0} / 1000 )) us, largest $(( ${rmax:-0} / 1000 )) us (links: 40 us)"
[ "${samples:-0}" -gt 0 ] || fails="$fails; no RTT sample reached the QP"
[ "${rmin:-0}" -ge 40000 ] || fails="$fails; an RTT sample of ${rmin:-0} ns, below the links' 40 us"
if [ -n "$fails" ]; then
	vm_fail "${fails#; }"
	exit 1
fi
exit 0
