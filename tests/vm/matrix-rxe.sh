#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The do-no-harm matrix (docs/enforce-qemu.md, "The matrix"): unmodified perftest programs
# in QEMU guests on kernel rxe, through qpace-switch --star 5 --rate 20M --buffer 128K
# (INT, and ECN marking of ECT frames), each case run twice in one boot: with no agent,
# then with qpaced --enforce tc in every guest. The rule, asserted for every case: each
# program that completes without the agent completes with it, and the switch drops no
# more with it (fewer, where the case drops any without it).
#
#   tests/vm/matrix-rxe.sh [--short]     (--short: the cases marked short, for make test)
#
# A case: NAME PROG SIZE TIMEOUT SENDERS LATE BIDIR CC SHORT
#   PROG     write|read|send: ib_write_bw, ib_read_bw, ib_send_bw. The data flows into g1
#            (for read, g1 runs the readers and the senders' guests answer)
#   SIZE     -s; the iterations keep ~2.5 MB a sender
#   TIMEOUT  -u (IB's local ACK timeout exponent; perftest's default is 14)
#   SENDERS  2..4 guests sending to g1
#   LATE     1: the last sender starts a second after the others
#   BIDIR    1: perftest -b (both directions)
#   CC       hpcc (INT from the switch), dcqcn (ECT(0) frames, CE marks, CNPs from g1's
#            qpaced), ia (--cc none --credits ia: g1's qpaced grants credits)
# qpaced in every guest: qpaced --enforce tc --dev eth0 --wire-rate 20M --wire-timeout T
# --cc CC --allow 10.0.0.0/24,169.254.255.0/24 (the README's command with the link's rate
# and the programs' timeout). Exits 0 when the rule holds in every case, 1 otherwise, 77
# when QEMU cannot run here.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

short=0
[ "${1:-}" = --short ] && short=1
vm_skip_unless_runnable
vm_skip_unless_built qpace-switch qpaced qpacectl
vm_setup || exit 1

CASES="$VM_RUN/cases"
cat >"$CASES" <<'EOF'
write64k-u14-3-hpcc write 65536 14 3 0 0 hpcc 1
read64k-u14-3-hpcc read 65536 14 3 0 0 hpcc 1
write4k-u12-2-hpcc write 4096 12 2 0 0 hpcc 1
write64k-u14-3-dcqcn write 65536 14 3 0 0 dcqcn 0
write64k-u14-3-ia write 65536 14 3 0 0 ia 0
write1m-u14-3-hpcc write 1048576 14 3 0 0 hpcc 0
write4k-u14-3-hpcc write 4096 14 3 0 0 hpcc 0
write64k-u12-3-hpcc write 65536 12 3 0 0 hpcc 0
write64k-u18-3-hpcc write 65536 18 3 0 0 hpcc 0
write64k-u14-2-hpcc write 65536 14 2 0 0 hpcc 0
write64k-u14-4-hpcc write 65536 14 4 0 0 hpcc 0
write64k-u14-3late-hpcc write 65536 14 3 1 0 hpcc 0
write64k-u14-3bidir-hpcc write 65536 14 3 0 1 hpcc 0
send64k-u14-3-hpcc send 65536 14 3 0 0 hpcc 0
send64k-u14-3-dcqcn send 65536 14 3 0 0 dcqcn 0
read64k-u14-3-dcqcn read 65536 14 3 0 0 dcqcn 0
read1m-u12-4-hpcc read 1048576 12 4 0 0 hpcc 0
send4k-u12-3-ia send 4096 12 3 0 0 ia 0
EOF
[ -n "${QPACE_VM_MATRIX_CASES:-}" ] && printf '%s\n' "$QPACE_VM_MATRIX_CASES" >"$CASES"
[ $short = 1 ] && awk '$9 == 1' "$CASES" >"$CASES.s" && mv "$CASES.s" "$CASES"
NG=$(awk 'BEGIN { m = 2 } $5 + 1 > m { m = $5 + 1 } END { print m }' "$CASES")
LIMIT=240   # one perftest run's limit, s

# The guests' job: every guest walks the same cases; g1 is the data's receiver.
cat >"$VM_RUN/job.sh" <<EOF
#!/bin/sh
me=\${QPACE_NAME#g}
export PATH=/usr/sbin:\$PATH
mkdir -p /dev/shm /run/qpace && mount -t tmpfs shm /dev/shm || exit 2
hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
counters() { for f in \$hw/*; do echo "\${f##*/} \$(cat \$f)"; done; }
i=0
while read -r name prog size to n late bidir cc short <&3; do
	i=\$((i + 1))
	iters=\$((2500000 / size))
	[ \$iters -lt 3 ] && iters=3
	bw="ib_\${prog}_bw -s \$size -n \$iters -u \$to -F -d rxe0 -x \$QPACE_GIDX --report_gbits"
	[ \$bidir = 1 ] && bw="\$bw -b"
	for mode in none tc; do
		port=\$((20000 + i * 20))
		[ \$mode = tc ] && port=\$((port + 10))
		qp=""
		if [ \$mode = tc ] && [ \$me -le \$((n + 1)) ]; then
			case \$cc in
			hpcc) f="--cc hpcc" ;;
			dcqcn) f="--cc dcqcn --ecn-mark on" ;;
			ia) f="--cc none --credits ia" ;;
			esac
			qpaced --enforce tc --dev eth0 --wire-rate 20M --wire-timeout \$to \$f \\
				--allow 10.0.0.0/24,169.254.255.0/24 --metrics 127.0.0.1:9477 \\
				>/tmp/qpaced.log 2>&1 &
			qp=\$!
		fi
		sleep 3
		[ \$me = 1 ] && echo "QPACE-VM: start-\$i-\$mode g1"
		rc=0
		if [ \$me = 1 ]; then
			# g1: the servers (write, send) or the readers (read), one per sender
			pids=""
			for k in \$(seq 1 \$n); do
				if [ \$prog = read ]; then
					( j=0; while :; do
						timeout $LIMIT \$bw -p \$((port + k)) 10.0.0.\$((k + 1)) >/tmp/c\$k 2>&1
						r=\$?; grep -q "Couldn't connect" /tmp/c\$k || break
						j=\$((j + 1)); [ \$j -ge 400 ] && break; sleep 0.2; done; exit \$r ) &
				else
					timeout $LIMIT \$bw -p \$((port + k)) >/tmp/c\$k 2>&1 &
				fi
				pids="\$pids \$!"
			done
			k=0
			for p in \$pids; do
				k=\$((k + 1))
				wait \$p; r=\$?
				echo "QPACE-TEST: run \$i \$mode \$k rc=\$r"
				sed 's/^/  /' /tmp/c\$k | grep -E "^  +[0-9]+ +[0-9]+ |Failed|error" | head -4
			done
		elif [ \$me -le \$((n + 1)) ]; then
			k=\$((me - 1))
			[ \$late = 1 ] && [ \$k = \$n ] && sleep 1
			if [ \$prog = read ]; then
				timeout $LIMIT \$bw -p \$((port + k)) >/tmp/s 2>&1; r=\$?
			else
				j=0
				while :; do
					timeout $LIMIT \$bw -p \$((port + k)) 10.0.0.1 >/tmp/s 2>&1; r=\$?
					grep -q "Couldn't connect" /tmp/s || break
					j=\$((j + 1)); [ \$j -ge 400 ] && break; sleep 0.2
				done
			fi
			echo "QPACE-TEST: run \$i \$mode \$k rc=\$r"
			sed 's/^/  /' /tmp/s | grep -E "^  +[0-9]+ +[0-9]+ |Failed|error" | head -4
		fi
		echo "QPACE-TEST: counters \$i \$mode \$me"
		counters | grep -E "^(sent_pkts|completer_retry_err|rcvd_seq_err|retry_exceeded_err|duplicate_request|out_of_seq_request) "
		if [ -n "\$qp" ]; then
			timeout 10 busybox wget -qO- http://127.0.0.1:9477/metrics |
				grep -E 'event="(ackreq_set|resent)"|wire_qps_floored' | sed "s/^/  metric \$i /"
			kill \$qp; wait \$qp
			grep -iE "warn|floor|refus" /tmp/qpaced.log | head -5 | sed "s/^/  qpaced \$i: /"
		fi
		[ \$me = 1 ] && echo "QPACE-VM: done-\$i-\$mode g1"
		sleep 2
	done
done 3</job/cases </dev/null
echo "QPACE-VM: matrix-end \$QPACE_NAME"
exit 0
EOF

t_switch=$(vm_now)
vm_spawn switch "$VM_TOP/build/bin/qpace-switch" --star "$NG" --base-port "$VM_PORT" --spin 0 \
	--rate 20M --buffer 128K --delay 10us --int-sample interval=100us --ecn 4K,16K,0.2 \
	--stats "$VM_RUN/switch.csv" --stats-interval 10ms --stats-json "$VM_RUN/switch.json"
for i in $(seq 0 $((NG - 1))); do
	vm_star_ports "$i"
	mkdir -p "$VM_RUN/g$((i + 1))/root/job"
	cp "$CASES" "$VM_RUN/g$((i + 1))/root/job/cases"
	vm_start "g$((i + 1))" "$i" "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/job.sh" 3600
done
ok=1
for i in $(seq 1 "$NG"); do vm_wait "g$i" ready 300 || ok=0; done
n=$(wc -l <"$CASES")
if [ $ok = 1 ]; then
	for c in $(seq 1 "$n"); do
		for m in none tc; do
			vm_mark g1 "start-$c-$m" $((LIMIT + 200)) && vm_mark g1 "done-$c-$m" $((LIMIT * 2 + 200)) ||
				{ ok=0; break 2; }
		done
	done
fi
for i in $(seq 1 "$NG"); do vm_wait "g$i" exit 120 || ok=0; done
vm_stop_all
[ $ok = 1 ] || { vm_fail "matrix: the guests did not walk every case"; exit 1; }
for i in $(seq 1 "$NG"); do vm_console "g$i" >"$VM_RUN/g$i.out"; done

python3 - "$VM_RUN" "$CASES" "$NG" <<'PY'
import re, sys
run, cases, ng = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [l.split() for l in open(cases) if l.strip()]
rows = [r.strip().split(",") for r in open(f"{run}/switch.csv")]
head, rows = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
col = {k: i for i, k in enumerate(head)}
def mark(m):
    return float(open(f"{run}/sw_{m}").read())
def window(t0, t1, ports):
    drops, peak = 0, 0
    for p in ports:
        rs = [r for r in rows if r[col["port"]] == p and t0 - 0.5 <= float(r[0]) <= t1 + 0.5]
        if not rs:
            continue
        before = [r for r in rows if r[col["port"]] == p and float(r[0]) < t0 - 0.5]
        d0 = int(before[-1][col["drop_tail"]]) if before else 0
        drops += int(rs[-1][col["drop_tail"]]) - d0
        peak = max(peak, max(int(r[col["queue_bytes"]]) for r in rs))
    return drops, peak
res = {}   # (case, mode) -> {guest k: rc}
ctr = {}   # (case, mode, guest) -> counters
for g in range(1, ng + 1):
    cur = None
    for l in open(f"{run}/g{g}.out"):
        m = re.match(r"QPACE-TEST: run (\d+) (\w+) (\d+) rc=(\d+)", l)
        if m:
            res.setdefault((int(m[1]), m[2]), {})[(g, int(m[3]))] = int(m[4])
        m = re.match(r"QPACE-TEST: counters (\d+) (\w+) (\d+)", l)
        if m:
            cur = (int(m[1]), m[2], int(m[3])); ctr[cur] = {}
            continue
        p = l.split()
        if cur and len(p) == 2 and p[1].isdigit():
            ctr[cur][p[0]] = int(p[1])
        elif not l.startswith(" "):
            cur = None
ok = True
print("| case | completed, no agent | completed, qpaced | drops, no agent -> qpaced | peak queue, no agent -> qpaced | rxe timer retries, no agent -> qpaced |")
print("|---|---|---|---|---|---|")
for i, c in enumerate(cases, 1):
    name, prog, n = c[0], c[1], int(c[4])
    ports = ["p0"] + ([f"p{k}" for k in range(1, n + 1)] if c[6] == "1" or prog == "read" else [])
    if prog == "read":
        ports = ["p0"]
    fig = {}
    for mode in ("none", "tc"):
        d, pk = window(mark(f"start-{i}-{mode}"), mark(f"done-{i}-{mode}"), ports)
        r = res.get((i, mode), {})
        done = sum(1 for v in r.values() if v == 0)
        tr = 0
        for g in range(1, n + 2):
            a = ctr.get((i, mode, g), {})
            b = ctr.get((i, "none", g), {}) if mode == "tc" else \
                ctr.get((i - 1, "tc", g), {}) if i > 1 else {}
            rr = a.get("completer_retry_err", 0) - b.get("completer_retry_err", 0)
            nk = a.get("rcvd_seq_err", 0) - b.get("rcvd_seq_err", 0)
            tr += max(0, rr - nk)
        fig[mode] = (done, len(r), d, pk, tr, r)
    nd, nt = fig["none"], fig["tc"]
    bad = []
    for key, v in nd[5].items():
        if v == 0 and nt[5].get(key, 1) != 0:
            bad.append(f"{key} completed without the agent, not with it (rc {nt[5].get(key)})")
    if nt[2] > nd[2] or (nd[2] > 0 and nt[2] >= nd[2]):
        bad.append(f"drops {nd[2]} -> {nt[2]}")
    print(f"| {name} | {nd[0]}/{nd[1]} | {nt[0]}/{nt[1]} | {nd[2]} -> {nt[2]} | {nd[3]} -> {nt[3]} B | {nd[4]} -> {nt[4]} |")
    for b in bad:
        print(f"matrix: FAIL {name}: {b}")
        ok = False
print("RESULT matrix:", "the rule holds in every case" if ok else "the rule is broken")
sys.exit(0 if ok else 1)
PY
