#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench --impair: the switch's impairments (the same code as qpace-switch --impair,
# switchsim/impair.c) on the links of the switch a bench run builds, in virtual time:
#   - 4 -> 1 at 100 Mb/s, hpcc, loss=1%,reorder=1%,dup=0.1%: every flow completes (RC
#     recovers), the switch lost frames on the receiver's link and the senders retransmitted;
#   - the same run twice: the same report, byte for byte (the impairments are seeded);
#     another seed: another run;
#   - corrupt=0.5%: every flow completes (the receivers refuse bad ICRCs, RC re-sends);
#   - a bad spec: a message naming --impair and the value, a non-zero exit.
# The real-time path passes the same words to qpace-switch (bench/swproc.c); its RC
# recovery through the switch is tested in switch_impair.sh.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
fail=0
num() { echo "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2; }
ok() { if [ "$2" = 0 ]; then echo "  ok: $1"; else echo "  FAIL: $1" >&2; fail=1; fi; }
run() { "$B" incast --clock virtual -N 4 -s 256K -R 2 --rate 100M -j --no-plots "$@" 2>/dev/null |
	sed 's/"wall_s":[0-9.]*//'; }

a=$(run --impair loss=1%,reorder=1%,dup=0.1%,seed=3)
b=$(run --impair loss=1%,reorder=1%,dup=0.1%,seed=3)
c=$(run --impair loss=1%,reorder=1%,dup=0.1%,seed=4)
echo "seed 3: $a"
ok "all 8 flows done ($(num "$a" flows_done))" "$([ "$(num "$a" flows_done)" = 8 ]; echo $?)"
ok "frames lost on the receiver's link ($(num "$a" impair_lost))" \
	"$([ "$(num "$a" impair_lost)" -gt 0 ]; echo $?)"
ok "retransmissions ($(num "$a" retransmits))" "$([ "$(num "$a" retransmits)" -gt 0 ]; echo $?)"
ok "the same seed twice: identical reports" "$([ "$a" = "$b" ]; echo $?)"
ok "another seed: another run" "$([ "$a" != "$c" ]; echo $?)"

d=$(run --impair corrupt=0.5%,seed=5)
echo "corrupt: $d"
ok "corrupt=0.5%: all 8 flows done ($(num "$d" flows_done))" \
	"$([ "$(num "$d" flows_done)" = 8 ]; echo $?)"
ok "corrupt=0.5%: retransmissions ($(num "$d" retransmits))" \
	"$([ "$(num "$d" retransmits)" -gt 0 ]; echo $?)"

msg=$("$B" incast --clock virtual -N 2 --impair loss=200% 2>&1 >/dev/null); rc=$?
echo "bad spec: $msg"
ok "a bad spec exits non-zero ($rc)" "$([ "$rc" != 0 ]; echo $?)"
ok "and names --impair and the value" \
	"$(echo "$msg" | grep -q -- "--impair 'loss=200%'"; echo $?)"
[ "$fail" = 0 ] && echo "bench_impair: ok"
exit "$fail"
