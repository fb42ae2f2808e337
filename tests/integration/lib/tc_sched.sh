# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The departure schedule of the tc egress program, read from its pinned qp_state map
# (bpftool), for tests on hosts without sch_fq (sourced after lib/agent.sh, not run):
# while a flow is backlogged each frame moves its next departure on by its bits over the
# rate, so bytes x 8e9 / (next_ns moved) is the rate the program paces at.
# tc_state MAPDIR QPN: the flow to QPN (decimal)'s "next_ns bytes" in MAPDIR/qp_state
tc_state() {
	bpftool -j map dump pinned "$1/qp_state" |
		jq -r ".[] | .formatted | select(.key.dqpn == $2) | \"\(.value.next_ns) \(.value.bytes)\""
}
# tc_sched_rate MAPDIR QPN SECONDS: the rate the program schedules the flow at over
# SECONDS (b/s); fails the test when the flow did not move
tc_sched_rate() {
	s1=$(tc_state "$1" "$2")
	sleep "$3"
	s2=$(tc_state "$1" "$2")
	set -- $s1 $s2
	[ $# = 4 ] && [ "$3" -gt "$1" ] || fail "qp_state: '$s1' then '$s2'"
	echo $((($4 - $2) * 8000000000 / ($3 - $1)))
}
# within VALUE WANT PCT
within() { [ $(($1 * 100)) -ge $(($2 * (100 - $3))) ] && [ $(($1 * 100)) -le $(($2 * (100 + $3))) ]; }
