#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpace-switch's command line: bad values name the flag, the value and what is accepted;
# a port that cannot bind names the address and the reason; a topology error names the
# file, the line and the key; --help teaches; the exit status says which.
set -u
BUILD=${BUILD:-build}
SW=$BUILD/bin/qpace-switch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
: > "$tmp/plain.p0"   # a file where an shm port's link would go

# expect STATUS PATTERN ARGS...: run, compare exit status and stderr
expect() {
	want=$1 pat=$2
	shift 2
	timeout 5 $SW "$@" --duration 200ms --quiet > "$tmp/out" 2> "$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ] || ! grep -q -- "$pat" "$tmp/err" "$tmp/out"; then
		echo "FAIL: qpace-switch $* -> exit $got: $(cat "$tmp/err")"
		fails=$((fails + 1))
	else
		echo "ok: $* -> $(head -1 "$tmp/err" "$tmp/out" | grep -v '^==>' | grep . | head -1)"
	fi
}

expect 2 "--rate '1X': not a rate in 1K..10T" --star 2 --rate 1X
expect 2 "--buffer '10': not a size in 1514..1G" --star 2 --buffer 10
expect 2 "--star '199': not a whole number in 1..128" --star 199
expect 2 "--ecn '80K,20K,0.2': accepted KMIN,KMAX,PMAX" --star 2 --ecn 80K,20K,0.2
expect 2 "--int 'maybe': accepted direct, echo, off" --star 2 --int maybe
expect 2 "--shm is for --star" -c switchsim/examples/star.topo --shm /tmp/x
expect 1 "exists and is not a link" --star 1 --base-port 24990 --shm "$tmp/plain"
expect 2 "--int-sample 'often'" --star 2 --int-sample often
expect 2 "--pfc 'xoff=40K,xon=50K': xon 51200 must be below xoff 40960" \
	--star 2 --pfc xoff=40K,xon=50K
expect 2 "--pfc 'xon=1K': xoff=BYTES is required" --star 2 --pfc xon=1K
expect 2 "--pfc 'xoff=40K,class=8': class '8': accepted a priority in 0..7" \
	--star 2 --pfc xoff=40K,class=8
expect 2 "unknown option '--bogus'" --star 2 --bogus
expect 2 "give exactly one of --star N or -c FILE" --rate 1G
expect 1 "ecn: Kmax 1048576 is above the buffer of 131072 bytes" --star 1 --base-port 19200 --ecn 10K,1M,0.1
printf 'switch s\nport s p udp local=127.0.0.1:19210\nport s q udp local=127.0.0.1:19212 delay=forever\n' > "$tmp/bad.topo"
expect 2 "bad.topo:3: delay 'forever': not a time" -c "$tmp/bad.topo"
printf 'switch s\nport s p udp local=127.0.0.1:19214 pfc=xoff=40K,headroom=huge\n' > "$tmp/pfc.topo"
expect 2 "pfc.topo:2: pfc 'xoff=40K,headroom=huge': headroom 'huge': accepted bytes" \
	-c "$tmp/pfc.topo"
expect 0 "Options:" --help
# one grammar: on|off, the old spellings refused with the new one named; --version
expect 2 "--gso 'yes': one of: off, on ('yes' is written 'on')" --star 2 --gso yes
expect 2 "--learn 'no': one of: on, off ('no' is written 'off')" --star 2 --learn no
printf 'switch s\nport s p udp local=127.0.0.1:19216 learn=no\n' > "$tmp/learn.topo"
expect 2 "learn.topo:2: learn 'no': not on or off ('no' is written 'off')" -c "$tmp/learn.topo"
expect 2 "unknown option '-q'" --star 2 -q
expect 0 "^qpace-switch [0-9]" --version
timeout 10 $SW --star 1 --base-port 19220 --duration 8s --quiet &
pid=$!
for i in $(seq 50); do   # until it holds the port (a busy machine may take a while)
	ss -Huln 'sport = :19220' | grep -q . && break
	sleep 0.1
done
expect 1 "udp port p0: cannot bind 127.0.0.1:19220: Address already in use" --star 1 --base-port 19220
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ "$fails" -eq 0 ] || exit 1
echo "switch_cli: ok"
