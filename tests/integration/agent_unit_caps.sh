#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# qpaced under exactly the capabilities its systemd unit grants (dist/qpaced.service.in,
# CapabilityBoundingSet=), as the unit runs it: root, that bounding set, no new privileges
# (setpriv). With --enforce tc on a veth pair and a bpffs of the test's own, the egress
# and ingress programs are attached and their maps pinned, and SIGTERM removes them all;
# the same run without each one of the unit's capabilities fails with qpaced's error.
set -u
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/veth.sh"

need setpriv tc
NSA=pku$RUN_ID-a
NSB=pku$RUN_ID-b
PIN_MNT=$TMP/bpffs
veth_setup "$NSA" "$NSB" pkua pkub 10.79.0 "$PIN_MNT"
PIN=$PIN_MNT/qpace

caps=$(sed -n 's/^CapabilityBoundingSet=//p' dist/qpaced.service.in)
[ -n "$caps" ] || fail "no CapabilityBoundingSet= in dist/qpaced.service.in"
# "CAP_NET_ADMIN CAP_BPF" -> "+net_admin,+bpf"
setpriv_caps() {
	for c in "$@"; do printf '+%s,' "$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"; done | sed 's/,$//'
}

# run_caps CAP...: qpaced --enforce tc on pkua with only these capabilities, in the
# background ($AGENT); its log in $TMP/qpaced.log
run_caps() {
	: >"$TMP/qpaced.log"
	set -- $(setpriv_caps "$@")
	ip netns exec "$NSA" setpriv --no-new-privs --inh-caps=-all --bounding-set="-all${1:+,$1}" \
		"$BIN/qpaced" --socket "$SOCK" --rate-table "$TABLE" --feedback "127.0.0.1:$FBPORT" \
		--metrics off --enforce tc --dev pkua --bpf-pin "$PIN" 2>>"$TMP/qpaced.log" &
	AGENT=$!
	PIDS="$PIDS $AGENT"
}
filters() {
	echo "$(ip netns exec "$NSA" tc filter show dev pkua egress | grep -c direct-action)" \
		"$(ip netns exec "$NSA" tc filter show dev pkua ingress | grep -c direct-action)"
}

# shellcheck disable=SC2086
run_caps $caps
for i in $(seq 100); do
	[ -S "$SOCK" ] && [ "$(filters)" = "1 1" ] && break
	kill -0 "$AGENT" 2>/dev/null || break
	sleep 0.1
done
[ "$(filters)" = "1 1" ] || fail "with $caps: egress, ingress filters on pkua: $(filters), want 1 1"
pins=$(ls "$PIN/pkua" 2>/dev/null | tr '\n' ' ')
[ -n "$pins" ] || fail "with $caps: nothing pinned in $PIN/pkua"
ok "with only $caps: both tc programs attached on pkua (direct action), maps pinned: $pins"
kill -TERM "$AGENT"
wait "$AGENT"
rc=$?
[ $rc = 0 ] || fail "with $caps: exit $rc on SIGTERM"
[ "$(filters)" = "0 0" ] && ! ip netns exec "$NSA" tc qdisc show dev pkua | grep -q clsact &&
	[ ! -e "$PIN/pkua" ] || fail "after SIGTERM: filters $(filters), $(ip netns exec "$NSA" tc qdisc show dev pkua), pins: $(ls -R "$PIN" 2>&1)"
ok "SIGTERM: exit 0, no filter, no clsact, no pin left"

# Each capability the unit names is needed.
for drop in $caps; do
	rest=$(for c in $caps; do [ "$c" = "$drop" ] || printf '%s ' "$c"; done)
	rm -rf "${PIN:?}/pkua"
	# shellcheck disable=SC2086
	run_caps $rest
	for i in $(seq 100); do
		kill -0 "$AGENT" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$AGENT" 2>/dev/null; then
		kill "$AGENT"
		fail "without $drop qpaced runs: filters $(filters); the unit would not need $drop"
	fi
	wait "$AGENT"
	rc=$?
	[ $rc = 1 ] && [ "$(filters)" = "0 0" ] || fail "without $drop: exit $rc (want 1), filters $(filters)"
	ok "without $drop: exit 1, $(grep -m1 -E 'Operation not permitted|Permission denied' "$TMP/qpaced.log" | cut -c1-110)"
done
