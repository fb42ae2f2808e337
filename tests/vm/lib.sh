# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shell functions that boot and watch Soft-RoCE guests (QEMU TCG). Source it from sh/bash:
#
#   . tests/vm/lib.sh
#   vm_skip_unless_runnable           # exit 77, saying why, when QEMU cannot run here
#   vm_setup                          # run folder, base port, initrd, the EXIT/INT/TERM trap
#   vm_start g1 0 "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" job1.sh
#   vm_wait g1 ready 120 && vm_wait g1 exit 300
#   vm_exit_code g1                   # the job's exit code, from the console
#
# Guest i (0-based) gets eth0 10.0.0.(i+1)/24 and MAC 52:54:00:00:00:(i+1); the address
# lives only inside the emulated links. Its NIC is `-netdev dgram`: one Ethernet frame per
# UDP datagram, sent from 127.0.0.1:LOCAL to 127.0.0.1:REMOTE. qpace-switch's `--star N
# --base-port P` port i receives on P+2i and sends to P+2i+1, so guest i on switch port i
# uses LOCAL=P+2i+1, REMOTE=P+2i (vm_star_ports sets those).
#
# Every QEMU runs under `timeout -s KILL` (its job limit plus a margin), and the EXIT/INT/
# TERM trap kills the ones this shell started, by their pids. On failure, vm_fail prints
# the tail of every guest's console.
#
# Knobs (environment): QPACE_VM_RUN (log folder; default build/vm/run/<pid>), QPACE_VM_PORT
# (base UDP port P; default picked from the pid), QPACE_VM_TIMEOUT (job limit, s; 300),
# QPACE_VM_IPV6 (set: the guests keep IPv6, link-local without DAD: tests/vm/init qipv6).
# VM_EXTRA (shell variable, read by vm_start): more QEMU arguments for the next guest, split
# on blanks, e.g. a second NIC (vm_user_nic below).
# A guest whose eth0 is not a switch port (a routed NIC, as a cloud VM has) gets, for the
# next vm_start only: VM_NET0 (its -netdev, with id=n0, instead of the dgram one; LOCAL and
# REMOTE are then ignored), VM_QIP (eth0's A.B.C.D/N instead of 10.0.0.(i+1)/24) and
# VM_NET_SH (a script that becomes the guest's /job/net.sh and brings rxe0 up itself, on
# 10.0.0.(i+1): see tests/vm/init).

VM_TOP=$(cd "$(dirname "${VM_LIB:-tests/vm/lib.sh}")/../.." && pwd)
VM_OUT=$VM_TOP/build/vm
VM_QEMU=${QPACE_VM_QEMU:-qemu-system-x86_64}
VM_TIMEOUT=${QPACE_VM_TIMEOUT:-300}
VM_PIDS=""
VM_NAMES=""

vm_log() { echo "qpace-vm: $*"; }
vm_now() { date +%s.%N; }
vm_elapsed() { awk -v a="$1" -v b="$(vm_now)" 'BEGIN { printf "%.1f", b - a }'; }

# vm_can_run: 0 when QEMU is installed and starts; prints why not otherwise.
vm_can_run() {
	if ! command -v "$VM_QEMU" >/dev/null 2>&1; then
		echo "$VM_QEMU is not installed (tests/vm/deps.sh installs it as root)"
		return 1
	fi
	if ! "$VM_QEMU" -version >/dev/null 2>&1; then
		echo "$VM_QEMU does not start"
		return 1
	fi
	return 0
}

# vm_skip_unless_runnable: exit 77 (a SKIP, saying why) when QEMU cannot run here.
vm_skip_unless_runnable() {
	if ! why=$(vm_can_run); then
		echo "qpace-vm: SKIP: $why"
		exit 77
	fi
}

# vm_need_built PROG...: exit 1, naming it, when a build/bin/PROG is not built.
vm_need_built() {
	for b in "$@"; do
		[ -x "$VM_TOP/build/bin/$b" ] || { echo "$0: $VM_TOP/build/bin/$b is not built (make)" >&2; exit 1; }
	done
}

# vm_skip_unless_built PROG...: exit 77 (SKIP), naming it, when a build/bin/PROG is not
# built: for the scenarios test-rxe.sh runs, which skip rather than fail.
vm_skip_unless_built() {
	for b in "$@"; do
		if [ ! -x "$VM_TOP/build/bin/$b" ]; then
			echo "qpace-vm: SKIP: build/bin/$b is not built"
			exit 77
		fi
	done
}

# vm_setup: run folder, base port, initrd, and the cleanup trap.
vm_setup() {
	VM_RUN=${QPACE_VM_RUN:-$VM_OUT/run/$$}
	rm -rf "$VM_RUN"
	mkdir -p "$VM_RUN"
	# Keep the logs of the last 8 runs only (each holds two initrds of ~6 MB).
	ls -dt "$VM_OUT"/run/*/ 2>/dev/null | tail -n +9 | while read -r old; do
		rm -rf "$old"
	done
	# Even base port in 20000..59980 from the pid; override with QPACE_VM_PORT.
	VM_PORT=${QPACE_VM_PORT:-$((20000 + ($$ % 2000) * 20))}
	trap 'vm_stop_all' EXIT
	trap 'vm_stop_all; exit 130' INT
	trap 'vm_stop_all; exit 143' TERM
	sh "$VM_TOP/tests/vm/build-initrd.sh"
}

# vm_star_ports I: set VM_PORT_LOCAL/VM_PORT_REMOTE for guest I on star port I.
vm_star_ports() {
	VM_PORT_LOCAL=$((VM_PORT + 2 * $1 + 1))
	VM_PORT_REMOTE=$((VM_PORT + 2 * $1))
}

vm_ip() { echo "10.0.0.$(($1 + 1))"; }

# vm_start NAME INDEX LOCAL_PORT REMOTE_PORT JOB_SCRIPT [TIMEOUT_S]
vm_start() {
	name=$1 idx=$2 lport=$3 rport=$4 job=$5 limit=${6:-$VM_TIMEOUT}
	dir=$VM_RUN/$name
	mkdir -p "$dir/root/job"
	cp "$job" "$dir/root/job/run.sh"
	chmod 755 "$dir/root/job/run.sh"
	qip=$(vm_ip "$idx")/24 roce=""
	if [ -n "${VM_NET_SH:-}" ]; then
		cp "$VM_NET_SH" "$dir/root/job/net.sh"
		qip=${VM_QIP:-$qip} roce=" qroce=$(vm_ip "$idx")"
	fi
	net0=${VM_NET0:-dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$lport,remote.type=inet,remote.host=127.0.0.1,remote.port=$rport}
	(cd "$dir/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$dir/job.cpio.gz"
	cat "$VM_OUT/base.cpio.gz" >"$dir/initrd"
	[ -f "$VM_OUT/qpace.cpio.gz" ] && cat "$VM_OUT/qpace.cpio.gz" >>"$dir/initrd"
	cat "$dir/job.cpio.gz" >>"$dir/initrd"
	mac=$(printf '52:54:00:00:00:%02x' $((idx + 1)))
	: >"$dir/console.log"
	vm_now >"$dir/launched"
	timeout -s KILL $((limit + 120)) "$VM_QEMU" -machine pc -m 512M -smp 1 -nographic \
		-nodefaults -no-user-config -no-reboot \
		-kernel "$VM_OUT/vmlinuz" -initrd "$dir/initrd" \
		-append "console=ttyS0 panic=-1 quiet qname=$name qip=$qip$roce qtimeout=$limit${QPACE_VM_IPV6:+ qipv6=1}" \
		-netdev "$net0" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,romfile=" ${VM_EXTRA:-} \
		-serial "file:$dir/console.log" -monitor none -pidfile "$dir/qemu.pid" \
		</dev/null >"$dir/qemu.out" 2>&1 &
	echo $! >"$dir/pid"
	VM_PIDS="$VM_PIDS $!"
	VM_NAMES="$VM_NAMES $name"
	how="udp 127.0.0.1:$lport -> 127.0.0.1:$rport"
	[ -n "${VM_NET0:-}" ] && how="netdev $VM_NET0"
	VM_EXTRA="" VM_NET0="" VM_QIP="" VM_NET_SH=""
	vm_log "$name: launched (eth0 ${qip%/*}${roce:+, rxe0 on $(vm_ip "$idx")}, $how)"
}

# vm_user_nic INDEX HOSTFWD_PORT GUEST_PORT: set VM_EXTRA to a second NIC (eth1, MAC
# 52:54:00:00:01:(i+1)) on QEMU's user network, for TCP between host programs and the
# guest beside the RoCE link: the guest gives it 10.0.2.15/24 (vm_user_nic_up in its
# job), reaches the host's 127.0.0.1 as 10.0.2.2, and the host reaches the guest's
# GUEST_PORT at 127.0.0.1:HOSTFWD_PORT.
vm_user_nic() {
	VM_EXTRA="-netdev user,id=n1,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:$2-:$3"
	VM_EXTRA="$VM_EXTRA -device virtio-net-pci,netdev=n1,mac=$(printf '52:54:00:00:01:%02x' $(($1 + 1))),romfile="
}

# vm_spawn NAME CMD...: run a host helper (relay, switch) in the background, output to
# $VM_RUN/NAME.log, ended with the guests by vm_stop_all.
vm_spawn() {
	name=$1
	shift
	"$@" </dev/null >"$VM_RUN/$name.log" 2>&1 &
	VM_PIDS="$VM_PIDS $!"
	vm_log "$name: started ($*)"
}

# The console with CRs removed.
vm_console() { tr -d '\r' <"$VM_RUN/$1/console.log"; }

# vm_wait NAME MARKER TIMEOUT_S: wait for "QPACE-VM: MARKER NAME" on NAME's console.
# Returns 1 on timeout or when QEMU ended without it. Prints the time since launch.
vm_wait() {
	name=$1 marker=$2 limit=$3
	dir=$VM_RUN/$name
	start=$(vm_now)
	while :; do
		if grep -q "^QPACE-VM: $marker $name" "$dir/console.log" 2>/dev/null; then
			t=$(vm_elapsed "$(cat "$dir/launched")")
			echo "$t" >"$dir/t_$marker"
			vm_log "$name: $marker after ${t} s from launch"
			return 0
		fi
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			# One last look: QEMU may have written the marker just before exiting.
			grep -q "^QPACE-VM: $marker $name" "$dir/console.log" && continue
			vm_log "$name: QEMU ended before '$marker'"
			return 1
		fi
		if awk -v e="$(vm_elapsed "$start")" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
			vm_log "$name: no '$marker' within $limit s"
			return 1
		fi
		sleep 0.2
	done
}

# vm_wait_ready NAME...: 0 when every guest said ready within 300 s (all are waited for).
vm_wait_ready() {
	rc=0
	for g in "$@"; do
		vm_wait "$g" ready 300 || rc=1
	done
	return $rc
}

# vm_mark NAME MARKER LIMIT: wait for the marker (vm_wait) and write its time since the
# switch started ($t_switch, a vm_now taken then) to $VM_RUN/sw_MARKER, the clock of the
# switch's stats, so a run's rows can be cut from them.
vm_mark() {
	vm_wait "$1" "$2" "$3" || return 1
	awk -v a="$t_switch" -v l="$(cat "$VM_RUN/$1/launched")" -v t="$(cat "$VM_RUN/$1/t_$2")" \
		'BEGIN { printf "%.3f\n", l - a + t }' >"$VM_RUN/sw_$2"
}

# vm_wait_jobs READY_S EXIT_S NAME...: wait until every guest is ready, then until each
# has exited (in the order given); 0 when all jobs exited with code 0.
vm_wait_jobs() {
	ready_s=$1 exit_s=$2 rc=0
	shift 2
	for g in "$@"; do
		vm_wait "$g" ready "$ready_s" || rc=1
	done
	if [ $rc = 0 ]; then
		for g in "$@"; do
			vm_wait "$g" exit "$exit_s" || rc=1
		done
	fi
	for g in "$@"; do
		[ "$(vm_exit_code "$g")" = 0 ] || rc=1
	done
	return $rc
}

# vm_exit_code NAME: the job's exit code from the console ("" if the guest did not say).
vm_exit_code() {
	vm_console "$1" | awk -v n="$1" '$1 == "QPACE-VM:" && $2 == "exit" && $3 == n { print $4 }'
}

# vm_section NAME TAG: the console lines between "QPACE-TEST: begin TAG" and its end.
vm_section() {
	vm_console "$1" | awk -v t="$2" '
		$1 == "QPACE-TEST:" && $2 == "begin" && $3 == t { on = 1; next }
		$1 == "QPACE-TEST:" && $2 == "end" && $3 == t { on = 0 }
		on'
}

# vm_fail WHY: print WHY and the tail of every guest's console and QEMU's own output.
vm_fail() {
	vm_log "FAILED: $*"
	for n in $VM_NAMES; do
		echo "---- $n: last 40 console lines ($VM_RUN/$n/console.log)"
		vm_console "$n" | tail -n 40
		if [ -s "$VM_RUN/$n/qemu.out" ]; then
			echo "---- $n: QEMU said"
			tail -n 10 "$VM_RUN/$n/qemu.out"
		fi
	done
}

# vm_stop_all: end every QEMU this shell started, and its `timeout` wrapper: TERM, then
# KILL after 3 s. QEMU's own pid comes from its -pidfile.
vm_stop_all() {
	[ -n "$VM_PIDS" ] || return 0
	pids=$VM_PIDS
	for n in $VM_NAMES; do
		q=$(cat "$VM_RUN/$n/qemu.pid" 2>/dev/null) || continue
		# Only if that pid is still a QEMU (a pid of an ended one may be reused).
		case $(cat "/proc/$q/comm" 2>/dev/null) in qemu-system*) pids="$pids $q" ;; esac
	done
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	i=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ $i -lt 30 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	VM_PIDS=""
}
