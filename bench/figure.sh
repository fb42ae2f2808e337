#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the benchmark scripts: `figure` prints one figure for docs/figures.md's table
# (scripts/figures.sh update reads these lines from a saved run):
#
#   figure KEY VALUE COMMAND CLAIM
#     KEY      lowercase words joined by . - + (vt.hpcc.wall); a literal in the script, so
#              that scripts/figures.sh check finds it
#     VALUE    a number or range and its unit (0.27 s, 713 MB, 2.03x, 25 of 25 runs)
#     COMMAND  what produces it (make bench-vt)
#     CLAIM    what it measures, the scenario's words in *italics* (the cue the docs
#              check looks for)
#
# The machine is added: cores, OS and the load average at the end of the run.
# FIGURES_MACHINE=TEXT is appended to it (e.g. "idle, other processes stopped").
figure_machine() {
	m="$(nproc 2>/dev/null || echo '?') cores"
	if [ -r /etc/os-release ]; then
		m="$m, $(. /etc/os-release && echo "$NAME $VERSION_ID")"
	fi
	m="$m, load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
	[ -n "${FIGURES_MACHINE:-}" ] && m="$m, $FIGURES_MACHINE"
	echo "$m"
}
figure() {
	[ -n "$2" ] || return 0   # a run that measured nothing prints no figure
	printf 'FIGURE %s | %s | %s | %s | %s\n' "$1" "$2" "$3" "$4" "$(figure_machine)"
}
