#!/bin/sh
# make reproduce: every reproduction at full size (qpace-bench reproduce NAME), a progress
# line per experiment, results in results/reproduce/NAME/, then the tables pasted into
# docs/reproductions.md (scripts/repro_docs.sh).   sh bench/reproduce.sh [BUILD] [NAME...]
set -u
BUILD=${1:-build}
[ $# -gt 0 ] && shift
names=${*:-ia-tcp ffdtcp hpcc acc idcc}
B=$BUILD/bin/qpace-bench
total=$(echo $names | wc -w)
k=0
fail=0
t_all=$(date +%s)
for name in $names; do
	k=$((k + 1))
	t0=$(date +%s)
	echo "reproduce $k/$total: $name (log: results/reproduce/$name.log)"
	mkdir -p results/reproduce
	if "$B" reproduce "$name" >results/reproduce/$name.log 2>&1; then
		echo "reproduce $k/$total: $name done in $(( $(date +%s) - t0 )) s: $(grep -c '^  yes' results/reproduce/$name/table.txt) agree, $(grep -c '^  partly' results/reproduce/$name/table.txt) partly, $(grep -c '^  no' results/reproduce/$name/table.txt) disagree, $(grep -c '^  not run' results/reproduce/$name/table.txt) not run"
	else
		echo "reproduce $k/$total: $name FAILED after $(( $(date +%s) - t0 )) s:" >&2
		tail -5 results/reproduce/$name.log >&2
		fail=1
	fi
done
echo "reproduce: $total experiments in $(( $(date +%s) - t_all )) s; tables in results/reproduce/NAME/table.md"
[ $fail = 0 ] && sh scripts/repro_docs.sh results/reproduce docs/reproductions.md
exit $fail
