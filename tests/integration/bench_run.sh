#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-bench run, the command a user types: a generated leaf-spine (2 leaves x 2 spines,
# 4 hosts a leaf, 10G) with a Poisson FB-Hadoop workload in virtual time. Every flow
# finishes, every slowdown in flows.csv is at least 1, every file is written, and the same
# command run twice gives byte-identical files (report.json less its three machine lines,
# wall_s, peak_rss_bytes and huge_page_bytes), also when one of the two has its heap on
# transparent huge pages (--huge-pages on: some bytes on them where the kernel's THP is
# "madvise" and no sanitizer's allocator is in; the other, off, none). Bad input: a bad
# workload line stops with FILE:LINE and a non-zero exit, as do a bad --gen, --clock real,
# --icrc off on a link that corrupts frames, --lanes 3, --lanes 2 on links without delay
# (no lookahead) and a run whose flows could not finish by
# --until (the reason named); a bytes=forever flow stopped by --until is no failure.
# --icrc off gives the same flows, rates and queues to the byte and says so in the report.
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
GEN=leaf-spine:leaves=2,spines=2,hosts-per-leaf=4,rate=10G
FILES="report.json flows.csv fct_bins.csv links.csv pfc.csv rates.csv queue.csv switch.csv
switch.json topology.topo"

ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*" >&2; fail=1; }

printf '# FB-Hadoop at 0.5 load for 5 ms\npoisson cdf=fb_hadoop load=0.5 duration=5ms\n' \
	>"$tmp/p.wl"
for run in a b; do
	thp=on
	[ $run = b ] && thp=off
	if "$B" run --gen "$GEN" --workload "$tmp/p.wl" --cc hpcc --no-plots --huge-pages $thp \
		-o "$tmp/$run" -j >"$tmp/$run.out" 2>"$tmp/$run.err"; then
		ok "run $run: exit 0"
	else
		bad "run $run: exit $?: $(cat "$tmp/$run.err")"
	fi
	grep -v '"wall_s"\|"peak_rss_bytes"\|"huge_page_bytes"' "$tmp/$run/report.json" \
		>"$tmp/$run.report"
done
huge() { grep -o '"huge_page_bytes":[0-9]*' "$1" | cut -d: -f2; }
# a sanitizer build (gcc's or clang's ASan, linked either way) has its own allocator
if grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null &&
	! nm "$B" 2>/dev/null | grep -q '__asan_init'; then
	[ "$(huge "$tmp/a.out")" -gt 0 ] && [ "$(huge "$tmp/b.out")" = 0 ] &&
		ok "--huge-pages on: $(huge "$tmp/a.out") bytes on them; off: none" ||
		bad "huge_page_bytes: $(huge "$tmp/a.out") (THP on), $(huge "$tmp/b.out") (off)"
else
	grep -q 'huge-pages on: not had' "$tmp/a.err" &&
		ok "--huge-pages on: not had here, and said why: $(cat "$tmp/a.err")" ||
		bad "--huge-pages on: neither had nor refused with a reason"
fi
flows=$(grep -o '"flows":[0-9]*' "$tmp/a.out" | head -1 | cut -d: -f2)
done_=$(grep -o '"flows_done":[0-9]*' "$tmp/a.out" | cut -d: -f2)
if [ "${flows:-0}" -ge 50 ] && [ "$flows" = "$done_" ]; then
	ok "all $flows flows finished"
else
	bad "flows ${flows:-?}, done ${done_:-?}"
fi
grep -q '"end":"all [0-9]* flows finished"' "$tmp/a.out" && ok "end named" ||
	bad "end: $(grep -o '"end":"[^"]*"' "$tmp/a.out")"
# slowdown (column 10) of every done flow at least 1; rows = flows
awk -F, 'NR > 1 { n++; if ($13 != 1 || $10 < 1) bad++ } END { exit !(n > 0 && !bad) }' \
	"$tmp/a/flows.csv" && ok "every slowdown >= 1 ($(($(wc -l <"$tmp/a/flows.csv") - 1)) rows)" ||
	bad "a slowdown below 1 or a flow not done in flows.csv"
for f in $FILES; do
	if [ ! -s "$tmp/a/$f" ]; then
		bad "$f missing or empty"
		continue
	fi
	[ "$f" = report.json ] && cmpf=report || cmpf=$f
	if [ "$cmpf" = report ]; then
		cmp -s "$tmp/a.report" "$tmp/b.report"
	else
		cmp -s "$tmp/a/$f" "$tmp/b/$f"
	fi && ok "$f identical run twice ($(wc -c <"$tmp/a/$f") bytes)" || bad "$f differs"
done
# the generated file, run as --topo, is the same run
"$B" run --topo "$tmp/a/topology.topo" --workload "$tmp/p.wl" --no-plots -o "$tmp/c" -j \
	>/dev/null 2>"$tmp/c.err" && cmp -s "$tmp/a/flows.csv" "$tmp/c/flows.csv" &&
	ok "--topo topology.topo gives the same flows.csv" || bad "--topo run: $(cat "$tmp/c.err")"
# --icrc off: the same run to the byte (an ICRC changes no timing), the report names the
# skip (the default report has no such key), and no switch checked an ICRC
"$B" run --gen "$GEN" --workload "$tmp/p.wl" --cc hpcc --no-plots -o "$tmp/s" -j --icrc off \
	>"$tmp/s.out" 2>"$tmp/s.err" || bad "--icrc off run: $(cat "$tmp/s.err")"
same=ok
for f in flows.csv fct_bins.csv links.csv pfc.csv rates.csv queue.csv; do
	cmp -s "$tmp/a/$f" "$tmp/s/$f" || same="$f differs"
done
[ "$same" = ok ] && ok "--icrc off: flows.csv .. queue.csv identical to the default run" ||
	bad "--icrc off: $same"
if grep -q '"icrc":"skipped' "$tmp/s.out" && ! grep -q '"icrc"' "$tmp/a.out" &&
	! grep '"icrc_checked"' "$tmp/s/switch.json" | grep -vq '"icrc_checked": 0' &&
	grep '"icrc_checked"' "$tmp/a/switch.json" | grep -vq '"icrc_checked": 0'; then
	ok "--icrc off named in the report; switches checked none (the default run: some)"
else
	bad "--icrc off: report key or switch icrc_checked wrong"
fi

expect_fail() {   # expect_fail WHAT PATTERN ARGS...
	what=$1
	pat=$2
	shift 2
	if "$B" run "$@" >"$tmp/x.out" 2>"$tmp/x.err"; then
		bad "$what: exit 0"
	elif grep -q -- "$pat" "$tmp/x.err"; then
		ok "$what: exit non-zero, '$(grep -- "$pat" "$tmp/x.err" | head -1)'"
	else
		bad "$what: no '$pat' in: $(cat "$tmp/x.err")"
	fi
}
printf 'poisson cdf=websearch load=0.5 duration=1ms\nincast bytes=64K senders=1-99\n' \
	>"$tmp/bad.wl"
expect_fail "bad workload line" "bad.wl:2: incast: senders: host 8 is not in the topology (hosts 0..7)" \
	--gen "$GEN" --workload "$tmp/bad.wl"
printf 'poisson cdf=websearch load=2 duration=1ms\n' >"$tmp/bad2.wl"
expect_fail "bad load" "bad2.wl:1: load '2'" --gen "$GEN" --workload "$tmp/bad2.wl"
expect_fail "bad --gen" "leaves" --gen leaf-spine:leaves=0 --workload "$tmp/p.wl"
expect_fail "--clock real" "virtual time only" --gen "$GEN" --workload "$tmp/p.wl" \
	--clock real
expect_fail "no workload" "--workload FILE" --gen "$GEN"
expect_fail "--lanes 3" "--lanes '3': not a whole number in 1..2" --gen "$GEN" \
	--workload "$tmp/p.wl" --lanes 3
expect_fail "--lanes 2 without link delay" "host 0's link (port h0 of switch leaf1) has no delay" \
	--gen "$GEN,delay=0" --workload "$tmp/p.wl" --lanes 2
sed 's|^port leaf1 h0 udp [^#]*|& impair=corrupt=1% |' "$tmp/a/topology.topo" >"$tmp/corrupt.topo"
expect_fail "--icrc off with corrupt=" "--icrc off: port h0 of switch leaf1 corrupts frames" \
	--topo "$tmp/corrupt.topo" --workload "$tmp/p.wl" --icrc off
printf 'incast bytes=10M senders=1-7 receiver=0\n' >"$tmp/slow.wl"
expect_fail "flows past --until" "stopped at --until 1ms of simulated time: 7 flows had not" \
	--gen "$GEN" --workload "$tmp/slow.wl" --until 1ms --no-plots
printf 'long senders=1 receiver=0\n' >"$tmp/long.wl"
if "$B" run --gen "$GEN" --workload "$tmp/long.wl" --until 2ms -j >"$tmp/l.out" \
	2>"$tmp/l.err" && grep -q 'bytes=forever' "$tmp/l.err"; then
	ok "a forever flow at --until: exit 0, '$(cat "$tmp/l.err")'"
else
	bad "forever flow: $(cat "$tmp/l.err")"
fi
[ $fail = 0 ] && echo "bench_run: ok" || echo "bench_run: FAILED"
exit $fail
