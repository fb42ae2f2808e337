#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Two Soft-RoCE guests run perftest, unchanged: ib_write_bw then ib_write_lat, server in
# g1 (10.0.0.1), client in g2 (10.0.0.2, to g1). Prints the figures and fails (with each
# guest's console tail) unless both tests ran and reported numbers.
#
#   tests/vm/perftest-pair.sh [--via direct|relay|switch] [--short] [--pcap FILE]
#
#   --via direct   the two guests' dgram ports point at each other (default)
#   --via relay    through tests/vm/relay.py on switch ports 0 and 1 (--star convention)
#   --via switch   through build/bin/qpace-switch --star 2 (scenario 1, "transparency");
#                  QPACE_VM_SWITCH names another binary; QPACE_VM_SWITCH_ARGS replaces the
#                  link arguments (default: --rate 1G --buffer 1M --delay 10us)
#   --short        fewer iterations, for `make test`
#   --pcap FILE    (relay only) write every frame the relay forwards to FILE
#   --vectors      instead of the figures, run small SEND/WRITE/READ tests through the
#                  relay, capture the frames, and keep one of each RoCEv2 opcode in
#                  tests/vectors/rxe-rocev2.pcap (tests/vm/pick-vectors.py)
#
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here (a skip).
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

via=direct short=0 pcap="" set=bench
while [ $# -gt 0 ]; do
	case $1 in
	--via) via=${2:-}; shift 2 ;;
	--short) short=1; shift ;;
	--pcap) pcap=${2:-}; shift 2 ;;
	--vectors) set=vectors via=relay; shift ;;
	*) echo "usage: $0 [--via direct|relay|switch] [--short] [--pcap FILE] [--vectors]" >&2; exit 2 ;;
	esac
done
case $via in
direct | relay | switch) ;;
*) echo "$0: --via '$via': want direct, relay or switch" >&2; exit 2 ;;
esac
[ -z "$pcap" ] || [ "$via" = relay ] || { echo "$0: --pcap needs --via relay" >&2; exit 2; }
[ "$set" = bench ] || [ "$via" = relay ] || { echo "$0: --vectors needs the relay" >&2; exit 2; }

vm_skip_unless_runnable
SWITCH=${QPACE_VM_SWITCH:-$VM_TOP/build/bin/qpace-switch}
if [ "$via" = switch ] && [ ! -x "$SWITCH" ]; then
	echo "$0: $SWITCH is not built (make)" >&2
	exit 1
fi

vm_setup || exit 1
[ "$set" = vectors ] && [ -z "$pcap" ] && pcap=$VM_RUN/frames.pcap

# The tests, one per line: TAG PROGRAM ARGS. Both guests run the same list (perftest
# wants the same options on both sides); the client adds the server's address.
if [ "$set" = vectors ]; then
	# Small messages of one and of three packets (RoCE MTU 1024), each verb, so the
	# capture holds every opcode rxe sends for them.
	TESTS="send3 ib_send_bw -s 2500 -n 5
send1 ib_send_bw -s 64 -n 5
write3 ib_write_bw -s 2500 -n 5
write1 ib_write_bw -s 64 -n 5
read3 ib_read_bw -s 2500 -n 5
read1 ib_read_bw -s 64 -n 5"
elif [ $short = 1 ]; then
	TESTS="write_bw ib_write_bw -s 65536 -n 100 --report_gbits
write_lat ib_write_lat -s 2 -n 100"
else
	TESTS="write_bw ib_write_bw -s 65536 -D 3 --report_gbits
write_lat ib_write_lat -s 2 -n 500"
fi

# The client retries while the server is not yet listening (it boots at the same time,
# and restarts between tests).
job() { # job ROLE FILE
	cat >"$2" <<EOF
#!/bin/sh
role=$1 server=$(vm_ip 0)
run() {
	tag=\$1; shift
	echo "QPACE-TEST: begin \$tag"
	if [ \$role = server ]; then
		timeout 120 "\$@" -F -d rxe0 -x \$QPACE_GIDX
		rc=\$?
	else
		i=0
		while :; do
			timeout 120 "\$@" -F -d rxe0 -x \$QPACE_GIDX \$server >/tmp/out 2>&1
			rc=\$?
			grep -q "Couldn't connect" /tmp/out || break
			i=\$((i + 1))
			[ \$i -ge 90 ] && break
			sleep 1
		done
		[ \$i -gt 0 ] && echo "(\$i connection attempts refused before this one)"
		cat /tmp/out
	fi
	echo "QPACE-TEST: end \$tag rc=\$rc"
	return \$rc
}
EOF
	echo "$TESTS" | while read -r tag cmd; do
		echo "run $tag $cmd || exit 1" >>"$2"
	done
}
job server "$VM_RUN/server.sh"
job client "$VM_RUN/client.sh"

case $via in
direct)
	# Each guest sends to the other's local port (the star ports' local halves).
	vm_star_ports 0; p0=$VM_PORT_LOCAL
	vm_star_ports 1; p1=$VM_PORT_LOCAL
	vm_start g1 0 "$p0" "$p1" "$VM_RUN/server.sh"
	vm_start g2 1 "$p1" "$p0" "$VM_RUN/client.sh"
	;;
relay | switch)
	if [ "$via" = relay ]; then
		vm_spawn relay python3 "$VM_TOP/tests/vm/relay.py" --star 2 --base-port "$VM_PORT" \
			--duration $((VM_TIMEOUT + 60)) ${pcap:+--pcap "$pcap"}
	else
		# --spin 0: the TCG guests need both host cores more than the switch needs
		# sub-50 µs departure accuracy at 1 Gb/s.
		# shellcheck disable=SC2086
		vm_spawn switch "$SWITCH" --star 2 --base-port "$VM_PORT" --spin 0 \
			--stats-json "$VM_RUN/switch.json" \
			${QPACE_VM_SWITCH_ARGS:---rate 1G --buffer 1M --delay 10us}
	fi
	vm_star_ports 0
	vm_start g1 0 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/server.sh"
	vm_star_ports 1
	vm_start g2 1 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/client.sh"
	;;
esac

ok=1
for g in g1 g2; do
	vm_wait $g ready 180 || ok=0
done
if [ $ok = 1 ]; then
	for g in g2 g1; do
		vm_wait $g exit "$VM_TIMEOUT" || ok=0
	done
fi
for g in g1 g2; do
	[ "$(vm_exit_code $g)" = 0 ] || ok=0
done

vm_stop_all
if [ "$via" != direct ]; then
	tail -n 1 "$VM_RUN/$via.log"
fi
if [ $ok != 1 ]; then
	vm_fail "perftest pair via $via ($set)"
	exit 1
fi

if [ "$set" = vectors ]; then
	python3 "$VM_TOP/tests/vm/pick-vectors.py" "$pcap" "$VM_TOP/tests/vectors/rxe-rocev2.pcap"
	exit $?
fi

# Client figures. BW row: #bytes #iterations peak avg[Gb/s] msgrate. LAT row: #bytes
# #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9 (µs).
bw=$(vm_section g2 write_bw | awk '$1 == 65536 && NF >= 5 { print $4 }' | tail -n 1)
lat=$(vm_section g2 write_lat | awk '$1 == 2 && NF >= 9 { print $5, $6, $8 }' | tail -n 1)
if [ -z "$bw" ] || [ -z "$lat" ]; then
	vm_fail "perftest printed no figures (bw '$bw', lat '$lat')"
	exit 1
fi
# Through the switch, the frames must really have crossed it, none dropped: its counters.
if [ "$via" = switch ]; then
	if ! python3 - "$VM_RUN/switch.json" <<'EOF'; then
import json, sys
ports = json.load(open(sys.argv[1]))["switches"][0]["ports"]
for p in ports:
    print(f"switch {p['name']}: tx {p['tx_frames']} frames {p['tx_bytes']} bytes, "
          f"drops {p['drop_tail']}, peak queue {p['max_qbytes']} bytes, "
          f"INT reports {p['int_reports']}")
# ib_write_bw moved at least 100 x 64 KiB towards g1 (port 0), in 1024-byte frames; and
# guests that send ~0.1 Gb/s into 1 Gb/s ports with 1 MB buffers (peaks seen: ~50 KB)
# lose nothing there.
crossed = ports[0]["tx_bytes"] >= 100 * 65536 and ports[1]["tx_frames"] > 0
sys.exit(0 if crossed and all(p["drop_tail"] == 0 for p in ports) else 1)
EOF
		vm_fail "qpace-switch did not carry the perftest traffic whole (its counters above)"
		exit 1
	fi
fi
set -- $lat
echo "RESULT via=$via ready_s=$(cat "$VM_RUN/g1/t_ready")/$(cat "$VM_RUN/g2/t_ready")" \
	"ib_write_bw_gbps=$bw ib_write_lat_typical_us=$1 avg_us=$2 p99_us=$3" | tee "$VM_RUN/result"
exit 0
