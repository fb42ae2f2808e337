#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Scenario 2, control on rxe: `qpace-bench incast --backend ibv`, 3 Soft-RoCE guests -> 1,
# through qpace-switch on slow links (so the switch, not TCG, is the bottleneck), twice in
# the same boot: first with no agent (the gates pace at their fallback rate, 1 Gb/s: no
# control), then with `qpaced --cc hpcc` in every guest (the QPs register with it; the
# switch's INT reports reach it on UDP 4792). During the hpcc run each sender samples
# `qpacectl list -j` every 0.05 s (a call takes ~0.3 s in a TCG guest). Passes when every flow of the hpcc run completes, the senders' QPs are
# registered with hpcc, got feedback and a rate below the fallback's, and the switch's
# peak queue towards the receiver (port 0) is lower and it drops fewer there with the
# agent.
#
#   tests/vm/incast-rxe.sh [--short]
#
# Switch figures per run come from its --stats CSV (10 ms rows; peak = the largest queue
# sample, drops = the drop_tail difference across the run), split at the times the host
# saw the receiver's markers. QPACE_VM_SWITCH_ARGS replaces the link arguments (default
# --rate 20M --buffer 128K --delay 10us --int-sample interval=100us: INT every 100 us
# keeps the emulated guests' load down; --int-flows is the switch's default, wanted: INT
# only for flows whose agent asked, WANT). The receiver port's data frames without a wish
# in --stats-json are the no-agent run's: the counters add up both runs, and that run
# sends no WANTs; a --pcap of p0 shows each hpcc flow's first WANT reaching p0 before its
# first data frame (docs/enforce-qemu.md#in-qemu-guests-the-incast-of-unmodified-ib_write_bw).
#
# The QPs register the switch's rate as their line rate (qpace-bench --rate, taken from
# the switch's --rate), not rxe's nominal 10G: HPCC starts a flow at its line rate and
# scales its floor (line/1000) and step (line/2500) to it, so at 10G every QP started at
# 500x the port's rate and could not go below 10M (3 x 10M into 20M). qpaced's hpcc gets
# the settings qpace-bench's own incast uses: max_stage=0 (the reference experiments')
# and a floor at which a flow still hears INT every 10 base RTTs, within [line/1000,
# line/4] (line/4 at the registered 100 us base RTT; 3 senders at the floor fill 3/4).
# Exits 0 on success, 1 on failure, 77 when QEMU cannot run here or qpace-bench is not
# built.
set -u
VM_LIB=$0
. "$(dirname "$0")/lib.sh"

short=0
[ "${1:-}" = --short ] && short=1
vm_skip_unless_runnable
vm_skip_unless_built qpace-switch qpace-bench qpaced qpacectl

vm_setup || exit 1
SWITCH_ARGS=${QPACE_VM_SWITCH_ARGS:---rate 20M --buffer 128K --delay 10us --int-sample interval=100us}
RATE=$(echo " $SWITCH_ARGS" | sed -n 's/.* --rate[ =]*\([^ ]*\).*/\1/p')
RATE=${RATE:-1G}   # qpace-switch's default
BUF=$(echo " $SWITCH_ARGS" | sed -n 's/.* --buffer[ =]*\([^ ]*\).*/\1/p')
BUF=${BUF:-128K}
# The bench is told the bottleneck: the QPs register its rate as their line rate, and
# their ACK timeout outlasts twice its buffer's drain time (rxe's go-back-N otherwise
# resends windows that a full queue only delayed).
if [ $short = 1 ]; then
	BENCH="-N 3 -s 256K -R 3 --timeout 60s --rate $RATE --buffer $BUF"
else
	BENCH="-N 3 -s 512K -R 4 --timeout 90s --rate $RATE --buffer $BUF"
fi
# hpcc's floor: the registered line (payload at MTU 1024) / 4, as a plain b/s figure.
FLOOR=$(echo "$RATE" | awk '{ v = $1 + 0; u = toupper(substr($1, length($1)));
	m = u == "K" ? 1e3 : u == "M" ? 1e6 : u == "G" ? 1e9 : 1;
	printf "%d", v * m * 1024 / 1082 / 4 }')
CC_PARAMS="max_stage=0,min_rate=$FLOOR"

# job ROLE FILE: both runs. The receiver (g1) marks each run's start and end on the console
# for the host; the senders retry while the receiver is not listening yet.
job() {
	cat >"$2" <<EOF
#!/bin/sh
role=$1
mkdir -p /dev/shm /run/qpace && mount -t tmpfs shm /dev/shm || exit 2
bench() { # PORT [OPTION...]
	if [ \$role = receiver ]; then
		timeout 300 qpace-bench incast --backend ibv -d rxe0 -x \$QPACE_GIDX -p \$1 $BENCH \$2 -j
		return
	fi
	i=0
	until timeout 300 qpace-bench incast --backend ibv -d rxe0 -x \$QPACE_GIDX -p \$1 $BENCH \$2 $(vm_ip 0) >/tmp/out 2>&1; do
		grep -qi "refused\|connect" /tmp/out || break
		i=\$((i + 1))
		[ \$i -ge 60 ] && break
		sleep 1
	done
	cat /tmp/out
}
run() { # TAG PORT [OPTION...]
	[ \$role = receiver ] && echo "QPACE-VM: start-\$1 \$QPACE_NAME"
	echo "QPACE-TEST: begin \$1"
	bench \$2 "\$3"
	rc=\$?
	echo "QPACE-TEST: end \$1 rc=\$rc"
	# rxe's own counters (cumulative): go-back-N retries, duplicates received.
	echo "QPACE-TEST: begin rxe-\$1"
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		echo "\${f##*/} \$(cat \$f)"
	done
	echo "QPACE-TEST: end rxe-\$1"
	[ \$role = receiver ] && echo "QPACE-VM: done-\$1 \$QPACE_NAME"
	return \$rc
}
# Without an agent the QPs are the uncontrolled baseline, as before the safe fallback: their
# gates pace at 1 Gb/s, far above the 20 Mb/s ports (by default a QP with no agent gets a
# tenth of its registered line, which would make the baseline a paced one). --buffer
# 6400K keeps the QPs' ACK timeout what 128K at 20 Mb/s gives (the same drain time).
run none 18900 "--fallback-safe 1000 --rate 1G --buffer 6400K" || exit 1
sleep 4
qpaced --cc hpcc --cc-params $CC_PARAMS --allow any --metrics off >/tmp/qpaced.log 2>&1 &
sleep 2
if [ \$role = sender ]; then
	(while :; do qpacectl list -j; sleep 0.05; done) >/tmp/list 2>&1 &
	sampler=\$!
fi
run hpcc 18901
rc=\$?
if [ \$role = sender ]; then
	kill \$sampler
	echo "QPACE-TEST: begin list"
	cat /tmp/list
	echo "QPACE-TEST: end list"
fi
echo "QPACE-TEST: begin qpaced"
cat /tmp/qpaced.log
echo "QPACE-TEST: end qpaced"
exit \$rc
EOF
}
job receiver "$VM_RUN/receiver.sh"
job sender "$VM_RUN/sender.sh"

t_switch=$(vm_now)
# shellcheck disable=SC2086
vm_spawn switch "$VM_TOP/build/bin/qpace-switch" --star 4 --base-port "$VM_PORT" --spin 0 \
	$SWITCH_ARGS \
	--stats "$VM_RUN/switch.csv" --stats-interval 10ms --stats-json "$VM_RUN/switch.json"
for i in 0 1 2 3; do
	vm_star_ports $i
	if [ $i = 0 ]; then j=receiver; else j=sender; fi
	vm_start g$((i + 1)) $i "$VM_PORT_LOCAL" "$VM_PORT_REMOTE" "$VM_RUN/$j.sh" 600
done

ok=1
vm_wait_ready g1 g2 g3 g4 || ok=0
if [ $ok = 1 ]; then
	for m in start-none done-none start-hpcc done-hpcc; do
		vm_mark g1 $m 400 || { ok=0; break; }
	done
fi
if [ $ok = 1 ]; then
	for g in g2 g3 g4 g1; do
		vm_wait $g exit 120 || ok=0
		[ "$(vm_exit_code $g)" = 0 ] || ok=0
	done
fi
vm_stop_all
for t in none hpcc; do
	echo "receiver, $t:"
	vm_section g1 $t >"$VM_RUN/g1.$t"
	sed 's/^/  /' "$VM_RUN/g1.$t"
done
if [ $ok != 1 ]; then
	vm_fail "incast on rxe, with and without qpaced"
	exit 1
fi

# The figures and the verdict.
for g in g2 g3 g4; do
	vm_section $g list >"$VM_RUN/$g.list"
done
for g in g1 g2 g3 g4; do
	for t in none hpcc; do
		vm_section $g rxe-$t >"$VM_RUN/$g.rxe-$t"
	done
done
python3 - "$VM_RUN" <<'EOF'
import json, re, sys
run = sys.argv[1]
t = {m: float(open(f"{run}/sw_{m}").read()) for m in
     ("start-none", "done-none", "start-hpcc", "done-hpcc")}
rows = [r.strip().split(",") for r in open(f"{run}/switch.csv")]
head, rows = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
col = {k: i for i, k in enumerate(head)}

def port_figures(t0, t1, port="p0"):
    # Markers reach the host up to ~0.5 s late (console, polling): widen the window.
    rs = [r for r in rows if r[col["port"]] == port and t0 - 0.5 <= float(r[0]) <= t1 + 0.5]
    before = [r for r in rows if r[col["port"]] == port and float(r[0]) < t0 - 0.5]
    d0 = int(before[-1][col["drop_tail"]]) if before else 0
    qs = [int(r[col["queue_bytes"]]) for r in rs]
    return (max(qs), sum(qs) / len(qs),
            int(rs[-1][col["drop_tail"]]) - d0, int(rs[-1][col["tx_bytes"]]) -
            (int(before[-1][col["tx_bytes"]]) if before else 0))

def receiver(tag):
    lines = open(f"{run}/g1.{tag}").read()
    m = re.search(r"\{.*\}", lines, re.S)
    return json.loads(m.group(0)) if m else {}

res, ok = {}, True
for tag in ("none", "hpcc"):
    peak, mean, drops, tx = port_figures(t[f"start-{tag}"], t[f"done-{tag}"])
    r = receiver(tag)
    res[tag] = (peak, drops)
    fct = r.get("fct_us", {})
    print(f"RESULT incast agent={tag} peak_queue_bytes={peak} mean_queue_bytes={mean:.0f} drops={drops} "
          f"tx_bytes={tx} goodput_bps={r.get('goodput_bps')} "
          f"flows={r.get('flows_done')}/{r.get('flows')} fct_us={fct}")
    # Without control a flow may die (rxe's retry limit under go-back-N): that is a
    # figure of the run, not a failure; with the agent every flow must complete.
    if r.get("flows") is None or (tag == "hpcc" and r.get("flows_done") != r.get("flows")):
        print(f"incast-rxe: run {tag}: not every flow completed"); ok = False

# rxe's counters per run (each file is cumulative since boot): what go-back-N did.
def rxe(g, tag):
    try:
        return {k: int(v) for k, v in (l.split() for l in open(f"{run}/{g}.rxe-{tag}") if len(l.split()) == 2)}
    except (OSError, ValueError):
        return {}
for tag, prev in (("none", None), ("hpcc", "none")):
    d = {}
    for g in ("g1", "g2", "g3", "g4"):
        a, b = rxe(g, tag), rxe(g, prev) if prev else {}
        for k in ("sent_pkts", "completer_retry_err", "duplicate_request", "out_of_seq_request",
                  "rcvd_seq_err", "retry_exceeded_err"):
            side = "receiver" if g == "g1" else "senders"
            d[f"{side}.{k}"] = d.get(f"{side}.{k}", 0) + a.get(k, 0) - b.get(k, 0)
    print(f"RXE incast agent={tag} " + " ".join(f"{k}={v}" for k, v in d.items()))

rates, lines, utils = {}, {}, {}
for g in ("g2", "g3", "g4"):
    for line in open(f"{run}/{g}.list"):
        for qp in re.findall(r"\{[^{}]*\}", line):
            try:
                q = json.loads(qp)
            except ValueError:
                continue
            if q.get("algo") == "hpcc" and q.get("feedback", 0) > 0 and not q.get("receiver"):
                rates.setdefault(g, []).append(q.get("rate"))
                utils.setdefault(g, []).append(q.get("util", 0))
                lines[g] = q.get("line")
# The agent must have moved the senders: each sender's QP has feedback and a rate below the
# fallback and below the line rate it registered (HPCC starts there), unless the INT it got
# never showed the bottleneck at HPCC's target utilisation (eta 0.95): then keeping the line
# is HPCC's answer (seen: TCG guests that start seconds apart, one sending while the port
# was at 0.2-0.5 with an empty queue). At least one sender must have been cut.
cut = 0
for g in ("g2", "g3", "g4"):
    rs, line, us = rates.get(g, []), lines.get(g), utils.get(g, [])
    print(f"{g}: registered line {line} b/s; hpcc rate samples with feedback (b/s): "
          f"{rs[:12]}{' ...' if len(rs) > 12 else ''}; utilisation {us[:12]}")
    if rs and min(rs) < 1e9 and min(rs) < line:
        cut += 1
    elif rs and max(us) < 0.95:
        print(f"incast-rxe: {g}: not cut, and its INT never showed the port at 0.95 "
              f"(max {max(us):.3f}): HPCC keeps the line")
    else:
        print(f"incast-rxe: {g}: no hpcc QP with feedback and a rate below the fallback and "
              f"its line rate"); ok = False
if cut == 0:
    print("incast-rxe: no sender was cut below its line rate"); ok = False
# Lower by at least one full frame (1024 B payload + 58 B of headers): two runs that both
# fill the buffer differ by less than that, and that is not "lower".
if not (res["hpcc"][0] + 1082 <= res["none"][0] and res["hpcc"][1] < res["none"][1]):
    print(f"incast-rxe: with the agent, peak queue {res['hpcc'][0]} vs {res['none'][0]} B "
          f"(want a frame lower) and drops {res['hpcc'][1]} vs {res['none'][1]} (want fewer)")
    ok = False
sys.exit(0 if ok else 1)
EOF
rc=$?
[ $rc = 0 ] || vm_fail "incast on rxe: the agent did not control the flows (figures above)"
exit $rc
