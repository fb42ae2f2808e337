#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Real-time speed of the soft hosts, both sides of each comparison in one run:
#   1. host to host: qpace-soft-bw (two soft hosts in one process, loopback UDP)
#   2. qpace-bench write_bw --backend soft, server and client processes, through
#      qpace-switch --star 2 --rate 1G, then --rate 10G; each with the soft hosts'
#      cooperative polling (--spin 20us, the default) and with them spinning always
#      (--spin 10s: the polling before cooperative polling)
#   3. switch-bench: the switch against a plain recvmmsg/sendmmsg forwarder
# Per run: Gb/s (the client's BW average), each process's CPU seconds and voluntary /
# involuntary context switches (GNU time), CPU ms per delivered MB, and the switch's
# INT reports. Read it on an idle machine; under load only the CPU and switch counts mean
# something. Environment: BUILD (default build), RT_SIZE (-s, default 64K), RT_ITERS (-n,
# default 4000), RT_CC (default none), RT_SPINS (default "20us 10s"), RT_RATES (default
# "1G 10G"), RT_SWITCH_BENCH=0 to skip part 3, RT_BASE=DIR: also run DIR's binaries (an
# older build) for the write_bw rows, as "base" (with each of RT_SPINS when it knows --spin);
# RT_WINDOW=PKTS: this build's soft hosts keep that many packets unacknowledged (default
# 128, rxe's; the base keeps its default). RT_TRANSPORTS (default "auto udp"): each
# write_bw row of this build once per transport: auto = the plain commands, no transport
# flag on either side (the hosts take the rings the star offers); udp = datagrams
# (write_bw --transport udp, qpace-switch --shm-offer off); shm = the switch's shm ports
# (qpace-switch --shm, write_bw --transport shm --shm). A base build gets the plain
# commands. Each default row's figure is also printed as a FIGURE line (bench/figure.sh)
# for docs/figures.md: make bench-rt | tee rt.out; sh scripts/figures.sh update rt.out
set -u
. "$(dirname "$0")/figure.sh"
BUILD=${BUILD:-build}
SIZE=${RT_SIZE:-64K}
ITERS=${RT_ITERS:-4000}
CC=${RT_CC:-none}
SPINS=${RT_SPINS:-20us 10s}
RATES=${RT_RATES:-1G 10G}
TRANSPORTS=${RT_TRANSPORTS:-auto udp}
P=${RT_PORT:-24600}
TIME=/usr/bin/time
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -x "$TIME" ] || { echo "rt_speed: needs GNU time ($TIME)" >&2; exit 2; }

uptime | sed 's/^/# /'
echo "# write_bw -s $SIZE -n $ITERS --cc $CC; cpu = user+sys s; cs = voluntary/involuntary"

# field FILE NAME: a GNU time field written as NAME=value
field() { sed -n "s/^$2=//p" "$1" | tail -1; }
fmt='cpu=%U+%S
vcs=%w
ics=%c'
cpu() { field "$1" cpu | awk -F+ '{ printf "%.2f", $1 + $2 }'; }

# one BIN LABEL RATE SPIN [TRANSPORT]
one() {
	bin=$1 label=$2 rate=$3 spin=$4 tr=${5:-}
	spinarg="--spin $spin --rate $rate"
	swshm="" shm0="" shm1=""
	case $tr in
	shm)
		swshm="--shm $tmp/ring" shm0="--transport shm --shm $tmp/ring.p0"
		shm1="--transport shm --shm $tmp/ring.p1" ;;
	udp)
		swshm="--shm-offer off" shm0="--transport udp" shm1="--transport udp" ;;
	esac
	[ -n "$tr" ] && label="$label/$tr"
	[ -n "${RT_WINDOW:-}" ] && [ "$label" = this ] && spinarg="$spinarg --window $RT_WINDOW"
	# a build older than cooperative polling knows neither: it always spins, and its line
	# rate is 250M; a newer base gets the same --spin and --rate as this build
	"$bin/qpace-bench" write_bw --help 2>&1 | grep -q -- --spin || spinarg=""
	rm -f "$tmp/sw.json"
	# shellcheck disable=SC2086
	$TIME -f "$fmt" -o "$tmp/sw.t" "$bin/qpace-switch" --star 2 --base-port $P \
		--rate "$rate" --buffer 4M --quiet --stats-json "$tmp/sw.json" $swshm 2>"$tmp/sw.err" &
	swt=$!
	sleep 0.3
	# shellcheck disable=SC2086
	$TIME -f "$fmt" -o "$tmp/srv.t" "$bin/qpace-bench" write_bw --backend soft \
		--attach 127.0.0.1:$P --ip 10.0.0.1 -p $((P + 10)) -s "$SIZE" -n "$ITERS" \
		--cc "$CC" $spinarg $shm0 >"$tmp/srv.out" 2>&1 &
	srv=$!
	# the server listens before the client dials (under load 0.2 s was not always enough)
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		sleep 0.2
		ss -ltn 2>/dev/null | grep -q ":$((P + 10)) " && break
	done
	# shellcheck disable=SC2086
	$TIME -f "$fmt" -o "$tmp/cli.t" "$bin/qpace-bench" write_bw --backend soft \
		--attach 127.0.0.1:$((P + 2)) --ip 10.0.0.2 -p $((P + 10)) -s "$SIZE" \
		-n "$ITERS" --cc "$CC" --report_gbits $spinarg $shm1 127.0.0.1 >"$tmp/cli.out" 2>&1
	rc=$?
	# a client that failed leaves its server waiting for it: end that server
	[ $rc -ne 0 ] && pkill -TERM -P $srv
	wait $srv
	pkill -TERM -P $swt
	wait $swt
	P=$((P + 20))
	if [ $rc -ne 0 ]; then
		echo "$label rate $rate spin $spin: client failed (rc $rc)"
		sed 's/^/  /' "$tmp/cli.out" | tail -3
		return
	fi
	gbps=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $4 } END { print v }' \
		"$tmp/cli.out")
	ints=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(p["int_reports"] for s in d["switches"] for p in s["ports"]))' "$tmp/sw.json" 2>/dev/null || echo "?")
	mb=$(python3 -c 'import sys; u={"K":1<<10,"M":1<<20}; s=sys.argv[1]; b=int(s[:-1])*u[s[-1]] if s[-1] in u else int(s); print(b*int(sys.argv[2])/1e6)' "$SIZE" "$ITERS")
	c=$(cpu "$tmp/cli.t") s=$(cpu "$tmp/srv.t") w=$(cpu "$tmp/sw.t")
	per=$(echo "$c $s $w $mb" | awk '{ printf "%.2f", ($1 + $2 + $3) * 1000 / $4 }')
	printf '%-9s %4s %5s | %6s Gb/s | cli %5s s %6s/%-7s | srv %5s s %6s/%-7s | sw %5s s %6s/%-7s | %6s ms/MB | INT %s\n' \
		"$label" "$rate" "$spin" "$gbps" "$c" "$(field "$tmp/cli.t" vcs)" \
		"$(field "$tmp/cli.t" ics)" "$s" "$(field "$tmp/srv.t" vcs)" \
		"$(field "$tmp/srv.t" ics)" "$w" "$(field "$tmp/sw.t" vcs)" "$(field "$tmp/sw.t" ics)" \
		"$per" "$ints"
	# the plain commands at the default --spin: the figures (docs/figures.md)
	if [ "$label" = this/auto ] && [ "$spin" = 20us ] && [ -z "${RT_WINDOW:-}" ]; then
		case $rate in
		1G) figure rt.write-bw.1g "$gbps Gb/s" "make bench-rt" \
			"*write_bw through qpace-switch --star 2 --rate 1G*, soft hosts, no transport flag (the star's offered rings): the client's BW average; the link's payload rate is 0.946 Gb/s" ;;
		10G) figure rt.write-bw.10g "$gbps Gb/s" "make bench-rt" \
			"*write_bw through qpace-switch --star 2 --rate 10G*, soft hosts, no transport flag: the client's BW average" ;;
		esac
	fi
}

echo "--- 1. host to host (qpace-soft-bw, one process, -s 256M -M 1024)"
"$BUILD/bin/qpace-soft-bw" -s 256M -M 1024 2>&1 | tail -1 | tee "$tmp/softbw"
figure rt.soft-bw "$(awk '{ v = $3 } END { if (v ~ /^[0-9.]+$/) print v " Gb/s" }' "$tmp/softbw")" \
	"make bench-rt" "two soft hosts in one process over loopback UDP (*qpace-soft-bw -s 256M -M 1024*): one WRITE stream"
echo "--- 2. write_bw through qpace-switch --star 2"
printf '%-9s %4s %5s | %11s | %-25s | %-25s | %-25s | %12s |\n' build rate spin BW \
	"client cpu cs" "server cpu cs" "switch cpu cs" "CPU/MB"
for rate in $RATES; do
	for spin in $SPINS; do
		for tr in $TRANSPORTS; do
			one "$BUILD/bin" this "$rate" "$spin" "$tr"
		done
	done
	[ -n "${RT_BASE:-}" ] && for spin in $SPINS; do one "$RT_BASE/bin" base "$rate" "$spin"; done
done
if [ "${RT_SWITCH_BENCH:-1}" != 0 ]; then
	echo "--- 3. switch-bench: qpace-switch against a plain forwarder"
	"$BUILD/bin/switch-bench" --seconds 1 | tee "$tmp/swb"
	# "  qpace-switch, INT every frame   N frames/s  ratio R (LO-HI) ..."
	ratio() { awk -v n="$1" 'index($0, n "  ") || $0 ~ n " +[0-9]" {
		for (i = 1; i < NF; i++) if ($i == "ratio") { print $(i + 1); exit } }' "$tmp/swb"; }
	figure sw.int-ratio "$(ratio 'qpace-switch, INT every frame')" "make bench-rt" \
		"*qpace-switch against a plain forwarder*, INT on every frame: frames/s over the forwarder's (median of 5 interleaved rounds of switch-bench)"
	figure sw.gso-ratio "$(ratio 'qpace-switch, INT every frame, GSO')" "make bench-rt" \
		"*qpace-switch against a plain forwarder*, INT on every frame, --gso on: frames/s over the forwarder's (median of 5 rounds)"
	# frames per CPU-second, signed over unsigned: the cost of --key
	figure sw.signed-cpu "$(awk '/INT every frame  / { u = $(NF - 4) } /INT every frame, signed/ { s = $(NF - 4) }
		END { if (u > 0 && s > 0) printf "%.2f", s / u }' "$tmp/swb")" "make bench-rt" \
		"*qpace-switch with --key*, every INT report signed: frames per CPU-second over the unsigned run's (switch-bench, INT on every frame)"
fi
