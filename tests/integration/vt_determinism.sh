#!/bin/sh
# Virtual time is deterministic: the same incast with the same seed gives byte-identical
# outputs (the JSON report, flows.csv, rates.csv, queue.csv, the switch's switch.csv and
# switch.json) run after run, and with two CPU hogs on this 2-core machine. The JSON's
# wall_s (wall-clock seconds of the simulation: a figure of the machine, not of the
# network) is the one field taken out before comparing. Three runs: hpcc with IA credits
# (INT reports, grants), dcqcn (switch notices as CNPs, drops, timeouts) and hpcc with
# lossless PFC (291 PAUSE frames to the hosts, which obey them: no drops).
set -u
BUILD=${BUILD:-build}
B=$BUILD/bin/qpace-bench
tmp=$(mktemp -d)
hogs=""
trap 'for p in $hogs; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0

run() {   # run DIR ARGS...
	dir=$1
	shift
	mkdir -p "$dir"
	"$B" incast --clock virtual -N 8 -s 256K -R 3 -j --no-plots -o "$dir" "$@" \
		2>"$dir.err" | sed 's/,"wall_s":[0-9.]*//' >"$dir/report.json" || {
		echo "vt_determinism: qpace-bench failed: $(cat "$dir.err")" >&2
		fail=1
	}
}
same() {  # same WHAT DIR1 DIR2
	for f in report.json flows.csv rates.csv queue.csv switch.csv switch.json; do
		if [ ! -s "$2/$f" ]; then
			echo "  FAIL: $1: $2/$f missing or empty" >&2
			fail=1
		elif cmp -s "$2/$f" "$3/$f"; then
			echo "  ok: $1: $f identical ($(wc -c <"$2/$f") bytes)"
		else
			echo "  FAIL: $1: $f differs" >&2
			cmp "$2/$f" "$3/$f" >&2
			fail=1
		fi
	done
}

for algo in "hpcc --credits ia" "dcqcn" "none --pfc xoff=16K,class=0,lossless"; do
	name=$(echo "$algo" | tr -d ' -' | tr '=,' '__')
	# shellcheck disable=SC2086
	run "$tmp/$name.a" --cc $algo
	# shellcheck disable=SC2086
	run "$tmp/$name.b" --cc $algo
	same "$name, run twice" "$tmp/$name.a" "$tmp/$name.b"
	for i in 1 2; do
		timeout 30 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	# shellcheck disable=SC2086
	run "$tmp/$name.c" --cc $algo
	for p in $hogs; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	hogs=""
	same "$name, under two CPU hogs" "$tmp/$name.a" "$tmp/$name.c"
done
# A different seed is a different run (the comparison can tell runs apart).
run "$tmp/seed2" --cc hpcc --credits ia --seed 2
if cmp -s "$tmp/hpcccreditsia.a/rates.csv" "$tmp/seed2/rates.csv"; then
	echo "  FAIL: --seed 2 gave the same rates.csv as --seed 1" >&2
	fail=1
else
	echo "  ok: --seed 2 differs from --seed 1"
fi
# --pcap in virtual time: a record for every frame the switch sent (its tx_frames), each
# stamped with simulated time, the same stamps and lengths in two runs; the frames differ
# only in the RDMA WRITEs' RETH address (the hosts' buffers are real memory, placed anew
# each run) and so in their ICRC.
for k in 1 2; do
	run "$tmp/pcap$k" --cc hpcc --pcap "$tmp/pcap$k.pcap"
done
if python3 - "$tmp/pcap1" "$tmp/pcap2" <<'PY'
import json, struct, sys
def recs(path):
    d = open(path, "rb").read()
    assert d[:4] == b"\xd4\xc3\xb2\xa1", "not a little-endian pcap"
    out, o = [], 24
    while o + 16 <= len(d):
        s, us, cl, ln = struct.unpack("<IIII", d[o:o + 16])
        out.append((s, us, d[o + 16:o + 16 + cl]))
        o += 16 + cl
    assert o == len(d), "a truncated record"
    return out
a, b = recs(sys.argv[1] + ".pcap"), recs(sys.argv[2] + ".pcap")
sw = json.load(open(sys.argv[1] + "/switch.json"))
sent = sum(p.get("tx_frames", 0) for s in sw["switches"] for p in s["ports"])
pos = set()
for x, y in zip(a, b):
    if x[2] != y[2] and len(x[2]) == len(y[2]):
        pos |= {j if j < len(x[2]) - 4 else "icrc" for j in range(len(x[2])) if x[2][j] != y[2][j]}
same_ts = all(x[:2] == y[:2] and len(x[2]) == len(y[2]) for x, y in zip(a, b))
print(f"  pcap: {len(a)} and {len(b)} records, the switch sent {sent}; stamps and lengths "
      f"{'the same' if same_ts else 'DIFFER'}; bytes that differ: {sorted(pos, key=str)}")
ok = len(a) == len(b) == sent > 0 and same_ts and pos <= {56, 57, 58, 59, 60, 61, "icrc"}
sys.exit(0 if ok else 1)
PY
then
	echo "  ok: --pcap: every frame sent, stamped with simulated time, the same in two runs"
else
	echo "  FAIL: --pcap in virtual time (above)" >&2
	fail=1
fi
[ $fail = 0 ] && echo "vt_determinism: ok"
exit $fail
