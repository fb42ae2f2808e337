#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# TXSTATE through a real qpaced: a client registers an HPCC QP and reports its posted PSN
# and enforcer (as the verbs layer does for every QP it registers). qpacectl shows the
# enforcer; INT reports about packets before the posted PSN use it for snd_nxt (no
# txpsn_stale), reports at or past it are counted stale.
set -u
. "$(dirname "$0")/lib/agent.sh"

start_agent --cc hpcc
register tx local=127.0.0.1 peer=10.0.0.2 qpn=0x11 peer_qpn=0x21 link=10G rtt=10us \
	algo=hpcc txstate=on txpsn=500 enforce=nic
i=0
until ctl list -j | grep -q '"qpn":"0x000011".*"enforce":"nic"'; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "qpacectl list -j does not show enforce nic: $(ctl list -j)"
	sleep 0.02
done
ctl list | head -1 | grep -q " ENF " || fail "qpacectl list has no ENF column: $(ctl list)"
ok "qpacectl list shows the enforcer the QP's program reported (ENF nic)"

# Wait until the agent has taken @1 INT reports in all; print txpsn_stale.
stale_after() {
	i=0
	until [ "$(counter feedback_accepted)" -ge "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "the agent took $(counter feedback_accepted) of $1 INT reports"
		sleep 0.02
	done
	counter txpsn_stale
}
probe send to=127.0.0.1:$FBPORT type=int hops=5 util=1.2 qlen=20000 src=127.0.0.1 \
	dst=10.0.0.2 qp=0x21 psn=490 count=10 gap=20us >/dev/null
s=$(stale_after 10)
[ "$s" = 0 ] || fail "PSNs 490..499 before the posted 500: txpsn_stale $s, want 0"
probe send to=127.0.0.1:$FBPORT type=int hops=5 util=1.2 qlen=20000 src=127.0.0.1 \
	dst=10.0.0.2 qp=0x21 psn=500 count=5 gap=20us >/dev/null
s=$(stale_after 15)
[ "$s" = 5 ] || fail "PSNs 500..504 at or past the posted 500: txpsn_stale $s, want 5"
ok "INT before the posted PSN uses it (0 stale of 10); at or past it: 5 of 5 counted stale"
