# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Helpers for the agent's integration tests (sourced, not run by the runner).
# Every process started here is killed on exit; names and ports are per-run, so tests of
# other branches running on the same machine do not collide.
BUILD=${BUILD:-build}
BIN=$BUILD/bin
TMP=$(mktemp -d /tmp/qpace-agent-test.XXXXXX)
RUN_ID=$$
SOCK=$TMP/qpaced.sock
TABLE=/qpace-test-$RUN_ID
FBPORT=$((20000 + RUN_ID % 5000 * 4))
MPORT=$((FBPORT + 1))
PEERPORT=$((FBPORT + 2))
PIDS=""
AGENT=""

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -f "/dev/shm$TABLE"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# lowest_rate CTL QPN START FILE: the lowest of START and 20 readings of QPN's rate, 10 ms
# apart, through the qpacectl wrapper CTL (each reading appended to FILE).
lowest_rate() {
	low=$3
	for i in $(seq 20); do
		sleep 0.01
		r=$($1 show "$2" -j | jq .rate)
		[ "$r" -lt "$low" ] && low=$r
		echo "$r" >>"$4"
	done
	echo "$low"
}

# need CMD...: the test is skipped (exit 0, saying which) unless every CMD is installed.
need() {
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "skip: no $c"; exit 0; }
	done
}

fail() {
	echo "FAIL: $*" >&2
	if [ -s "$TMP/qpaced.log" ]; then sed 's/^/  qpaced: /' "$TMP/qpaced.log" >&2; fi
	exit 1
}

ok() { echo "ok: $*"; }

# Start the agent on this run's socket, table and ports; extra flags pass through.
start_agent() {
	"$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" --feedback "127.0.0.1:$FBPORT" \
		--metrics "127.0.0.1:$MPORT" "$@" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
	wait_agent
}

# Wait until the agent just started as $AGENT answers on $SOCK (the socket file may be a
# dead agent's); fail when it exits first or takes over 3 s.
wait_agent() {
	i=0
	until "$BIN/qpacectl" --socket "$SOCK" status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 150 ] || fail "qpaced did not start"
		kill -0 "$AGENT" 2>/dev/null || fail "qpaced exited at start"
		sleep 0.02
	done
}

stop_agent() {
	kill "${1:--TERM}" "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=""
}

# (Background processes are started from the binaries directly, never through these
# functions: $! must be the process itself, so that kill reaches it.)
probe() { "$BIN/qpace-probe" "$@"; }
ctl() { "$BIN/qpacectl" --socket "$SOCK" "$@"; }

# Register QPs and keep them registered in the background; waits for the replies.
# register NAME key=value...  (output in $TMP/NAME.reg, pid in $REG_PID)
register() {
	name=$1
	shift
	"$BIN/qpace-probe" register socket="$SOCK" "$@" >"$TMP/$name.reg" 2>&1 &
	REG_PID=$!
	PIDS="$PIDS $REG_PID"
	i=0
	until grep -q "status=" "$TMP/$name.reg" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "register $name: no reply"
		sleep 0.02
	done
	sleep 0.05
	grep -q "status=error" "$TMP/$name.reg" && fail "register $name: $(cat "$TMP/$name.reg")"
	return 0
}

# The value of key=value in a line on stdin.
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" | head -n 1; }

rate_of() { probe rate table="$TABLE" qpn="$1" | field rate_bps; }

# QP $1's window (bytes) from `qpacectl show -j`: what window algorithms (ffd, tcp,
# dctcp, swift) steer.
window_of() { ctl show "$1" -j 2>/dev/null | tr ',{}' '\n\n\n' | sed -n 's/^"window":\([0-9]*\)$/\1/p'; }

# How many feedback messages QP $1 took (`qpacectl show -j`'s feedback).
ctl_feedback_of() { ctl show "$1" -j 2>/dev/null | tr ',{}' '\n\n\n' | sed -n 's/^"feedback":\([0-9]*\)$/\1/p'; }

# Wait up to 2 s for QP $1's window to be $2; prints the last window read.
wait_window() {
	i=0
	w=$(window_of "$1")
	while [ "$w" != "$2" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.02
		w=$(window_of "$1")
	done
	echo "$w"
}

# A counter from `qpacectl status -j`.
counter() { ctl status -j | tr ',{}' '\n\n\n' | sed -n "s/^\"$1\":\([0-9]*\)$/\1/p"; }

# Wait up to 2 s for QP $1's rate to satisfy `test RATE $2 $3` (the agent reads the
# datagrams a probe sent after the probe has gone); prints the last rate read.
wait_rate() {
	i=0
	r=$(rate_of "$1")
	while ! [ "$r" "$2" "$3" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || break
		sleep 0.02
		r=$(rate_of "$1")
	done
	echo "$r"
}

# Wait up to 2 s for a command's output to equal a value.
wait_eq() {
	want=$1
	shift
	i=0
	while [ "$("$@")" != "$want" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || return 1
		sleep 0.02
	done
}
