#!/bin/sh
# make demo: the same 16 -> 1 incast on a 250 Mb/s emulated switch (100 us links, 512 KiB
# buffer: qpace-bench's defaults), once per algorithm, on
# this machine, with no root and no kernel RDMA (soft backend: userspace RoCEv2 hosts).
#   bench/demo.sh [BUILD_DIR]     (make demo installs the packages and builds first)
# Environment: DEMO_OUT (default results/demo), DEMO_ARGS (extra qpace-bench compare options).
set -eu
build=${1:-build}
out=${DEMO_OUT:-results/demo}
bench="$build/bin/qpace-bench"

[ -x "$bench" ] || { echo "demo: $bench is missing; run make first" >&2; exit 1; }
echo "qpace demo: $(nproc) CPU(s), $(uname -sr); one incast per algorithm (about 15 s on an idle 2-core machine)"
start=$(date +%s)
# shellcheck disable=SC2086
"$bench" compare -N 16 -s 256K -R 5 --rate 250M --buffer 512K --delay 100us --window 128 \
	--algos none,dcqcn,hpcc,acc,ffd,idcc,none+ia,hpcc+ia --out "$out" ${DEMO_ARGS:-}
echo "demo: done in $(( $(date +%s) - start )) s; summary: $out/summary.json"
