#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench against perftest itself: its read_bw and atomic_bw (and with --full the
# latency ones) talk perftest's out-of-band exchange and RoCEv2 to unmodified
# ib_read_bw / ib_atomic_bw on kernel rxe in a guest, through qpace-switch, both ways:
#
#   rxe-server  guest: ib_X -d rxe0 (server); host: qpace-bench X --backend soft (client)
#   rxe-client  host: qpace-bench X --backend soft (server); guest: ib_X ... 10.0.2.2
#   ibv         in the guest, on rxe0 both: ib_X server and qpace-bench X --backend ibv
#               client, then qpace-bench server and ib_X client (rxe's loopback)
#
#   tests/vm/perftest-qpace.sh [--short] [--full]
#
# Wiring as tests/vm/interop-soft.sh: `qpace-switch --star 2`, port 0 the soft host
# (10.0.0.1), port 1 the guest's eth0 (10.0.0.2, rxe0); the TCP exchange goes over the
# guest's second NIC on QEMU's user network (host -> guest through a hostfwd port, guest
# -> host as 10.0.2.2). Passes when every run exits 0 and prints its result table's row
# (#bytes and #iterations as asked: READs of 64 KiB, atomics of 8 bytes), on both sides.
#
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

short=0 full=0
while [ $# -gt 0 ]; do
	case $1 in
	--short) short=1; shift ;;
	--full) full=1; shift ;;
	*) echo "usage: $0 [--short] [--full]" >&2; exit 2 ;;
	esac
done

vm_skip_unless_runnable
vm_need_built qpace-switch qpace-bench
SWITCH=$VM_TOP/build/bin/qpace-switch
BENCH=$VM_TOP/build/bin/qpace-bench

vm_setup || exit 1
fwd=$((VM_PORT + 10)) hsrv=$((VM_PORT + 11))
N_READ=200 N_ATOMIC=2000
[ $short = 1 ] && N_READ=50 N_ATOMIC=500
TESTS="read_bw atomic_bw"
[ $full = 1 ] && TESTS="$TESTS read_lat atomic_lat"
args_of() { # args_of TEST
	case $1 in
	read_*) echo "-n $N_READ" ;;
	atomic_*) echo "-n $N_ATOMIC" ;;
	esac
}
SOFT_MAC=02:00:0a:00:00:01   # qpace-bench's soft host at 10.0.0.1 (its MAC from its IP)
SOFT="--backend soft --attach 127.0.0.1:$VM_PORT --ip 10.0.0.1"

{
	cat <<EOF
#!/bin/sh
for d in /sys/class/net/eth*; do
	case \$(cat \$d/address) in 52:54:00:00:01:*) nic=\${d##*/} ;; esac
done
/usr/bin/ip addr add 10.0.2.15/24 dev \$nic && /usr/bin/ip link set \$nic up || exit 2
/usr/bin/ip neigh replace 10.0.0.1 lladdr $SOFT_MAC dev eth0 nud permanent || exit 2
fails=0
section() { # section TAG CMD...
	echo "QPACE-TEST: begin \$1"
	tag=\$1
	shift
	"\$@"
	rc=\$?
	echo "QPACE-TEST: end \$tag rc=\$rc"
	[ \$rc = 0 ] || fails=\$((fails + 1))
}
client() { # client CMD...: retried while the server is not listening yet
	i=0
	while :; do
		timeout 150 "\$@" >/tmp/out 2>&1
		rc=\$?
		grep -q "Couldn't connect\|Unable to connect\|Connection refused" /tmp/out || break
		i=\$((i + 1))
		[ \$i -ge 60 ] && break
		sleep 1
	done
	cat /tmp/out
	return \$rc
}
loop() { # loop TEST ARGS...: ib_TEST and qpace-bench TEST --backend ibv on rxe0, both ways
	t=\$1
	shift
	timeout 150 ib_\$t -d rxe0 -x \$QPACE_GIDX -p 18700 "\$@" >/tmp/srv 2>&1 &
	s=\$!
	client qpace-bench \$t --backend ibv -d rxe0 -x \$QPACE_GIDX -p 18700 "\$@" 127.0.0.1
	rc=\$?
	wait \$s || rc=1
	echo "--- ib_\$t server:"; cat /tmp/srv
	timeout 150 qpace-bench \$t --backend ibv -d rxe0 -x \$QPACE_GIDX -p 18701 "\$@" >/tmp/srv 2>&1 &
	s=\$!
	client ib_\$t -d rxe0 -x \$QPACE_GIDX -p 18701 "\$@" 127.0.0.1 || rc=1
	wait \$s || rc=1
	echo "--- qpace-bench \$t server:"; cat /tmp/srv
	return \$rc
}
EOF
	for t in $TESTS; do
		a=$(args_of "$t")
		cat <<EOF
section rxe-server-$t timeout 150 ib_$t -d rxe0 -x \$QPACE_GIDX -p 18600 $a
section rxe-client-$t client ib_$t -d rxe0 -x \$QPACE_GIDX -p $hsrv $a 10.0.2.2
section ibv-$t loop $t $a
EOF
	done
	echo 'exit $fails'
} >"$VM_RUN/guest.sh"

# --spin 0: the TCG guest and the soft host's polling want both cores.
vm_spawn switch "$SWITCH" --star 2 --base-port "$VM_PORT" --spin 0 --rate 1G --buffer 1M \
	--delay 10us --stats-json "$VM_RUN/switch.json"
vm_star_ports 1
vm_user_nic 1 "$fwd" 18600
vm_start g2 1 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/guest.sh" 600

# host_bench TAG TEST ARGS...: the soft side, its output kept; a client retries while the
# guest's server is not listening yet (slirp accepts, then closes).
host_bench() {
	tag=$1 t=$2
	shift 2
	i=0
	while :; do
		# shellcheck disable=SC2086
		timeout 150 "$BENCH" "$t" $SOFT "$@" >"$VM_RUN/host-$tag.log" 2>&1
		rc=$?
		[ $rc = 0 ] && break
		case " $* " in *" 127.0.0.1 "*) ;; *) break ;; esac   # a server: no retry
		grep -q "remote address" "$VM_RUN/host-$tag.log" && break
		i=$((i + 1))
		[ $i -ge 200 ] && break
		sleep 1
	done
	echo "host $tag (rc=$rc, $i refused attempts before):"
	sed 's/^/  /' "$VM_RUN/host-$tag.log"
	return $rc
}

# row_of FILE TEST: the result row's first two columns (#bytes #iterations), or nothing
row_of() {
	awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $1, $2; exit }' "$1"
}

ok=1
fails=""
vm_wait g2 ready 180 || ok=0
for t in $TESTS; do
	[ $ok = 1 ] || break
	a=$(args_of "$t")
	# shellcheck disable=SC2086
	host_bench "rxe-server-$t" "$t" -p "$fwd" $a 127.0.0.1 || fails="$fails; host client $t (to ib_$t)"
	# shellcheck disable=SC2086
	host_bench "rxe-client-$t" "$t" -p "$hsrv" $a || fails="$fails; host server $t (for ib_$t)"
done
[ $ok = 1 ] && { vm_wait g2 exit 500 || ok=0; }
vm_stop_all
[ $ok = 1 ] || fails="$fails; the guest did not finish"
for t in $TESTS; do
	a=$(args_of "$t")
	size=65536
	case $t in atomic_*) size=8 ;; esac
	n=${a#-n }
	for tag in rxe-server-$t rxe-client-$t ibv-$t; do
		vm_section g2 "$tag" >"$VM_RUN/guest-$tag.log"
		echo "guest $tag:"
		sed 's/^/  /' "$VM_RUN/guest-$tag.log"
		vm_console g2 | grep -q "^QPACE-TEST: end $tag rc=0" || fails="$fails; guest $tag failed"
	done
	case $t in *_lat) continue ;; esac
	for f in "$VM_RUN/host-rxe-server-$t.log" "$VM_RUN/host-rxe-client-$t.log" \
		"$VM_RUN/guest-rxe-server-$t.log" "$VM_RUN/guest-rxe-client-$t.log"; do
		[ "$(row_of "$f")" = "$size $n" ] || fails="$fails; no '$size $n' row in ${f##*/}"
	done
	[ "$(vm_section g2 "ibv-$t" | grep -c "^ $size  *$n ")" -ge 2 ] ||
		fails="$fails; ibv-$t: not both sides' rows"
done
if [ -n "$fails" ]; then
	vm_fail "qpace-bench against perftest: ${fails#; }"
	exit 1
fi
echo "RESULT perftest-qpace=pass tests=$(echo $TESTS | tr ' ' ,) read=${N_READ}x64K atomic=${N_ATOMIC}" |
	tee "$VM_RUN/result"
exit 0
