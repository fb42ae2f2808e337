#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A clean stop (SIGTERM) removes the socket and the table (the gates then hold the last rate
# and fall back without waiting for staleness); QPs of a process that dies are reaped.
# What a sender does when the agent is killed (kill -9) and restarted: agent_fallback.sh.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc none

# clean stop: exit 0, names removed, gates fall back without waiting for staleness
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?
[ $rc = 0 ] || fail "qpaced exited $rc on SIGTERM"
[ ! -e "$SOCK" ] && [ ! -e "/dev/shm$TABLE" ] || fail "socket or table left after SIGTERM"
grep -q "stopping on" "$TMP/qpaced.log" || fail "no stop message"
ok "SIGTERM: exit 0, control socket and rate table removed"

# reaping: a registering process killed with SIGKILL loses its QPs
start_agent --cc none
register r local=127.0.0.1 peer=10.0.0.2 qpn=0x71 peer_qpn=0x81 count=3
[ "$(ctl list | grep -c '^0x0000')" = 3 ] || fail "3 QPs not registered"
kill -9 "$REG_PID"
wait_eq 3 counter reaped || fail "QPs of a killed process not reaped: $(ctl list)"
[ "$(ctl list | grep -c '^0x0000')" = 0 ] || fail "QPs left: $(ctl list)"
[ "$(probe rate table="$TABLE" qpn=0x71 | field status)" = no_slot ] || fail "slot not freed"
ok "a killed process's 3 QPs reaped, their rate-table slots freed"
