# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the tests that judge a real-time qpace-bench run only when it kept up.
#   num JSON KEY                         a number from a one-line JSON result
#   kept_up NAME STALL_NS FRACTION CMD...
#       runs CMD (it prints one JSON result line) up to 3 times and prints the first
#       result whose bench loop and switch were each late by at most STALL_NS at worst and
#       together by at most FRACTION of the run's elapsed time in all; nothing when none
#       did (each refused try is told on stderr).

num() {   # num JSON KEY
	echo "$1" | grep -o "\"$2\":[0-9.e+-]*" | head -1 | cut -d: -f2
}

kept_up() {
	_name=$1 _stall=$2 _frac=$3
	shift 3
	for _try in 1 2 3; do
		_r=$("$@") || _r=""
		[ -n "$_r" ] || continue
		_late=$(num "$_r" loop_late_max_ns)
		_swlate=$(num "$_r" switch_late_max_ns)
		_total=$(num "$_r" loop_late_total_ns)
		_swtotal=$(num "$_r" switch_late_total_ns)
		_el=$(num "$_r" elapsed_s)
		if awk "BEGIN { exit !($_late <= $_stall && ${_swlate:-0} <= $_stall &&
			$_total + ${_swtotal:-0} <= $_frac * $_el * 1e9) }"; then
			echo "$_r"
			return
		fi
		echo "  $_name: real run $_try not judged: late by at most" \
			"$((_late / 1000000)) ms (loop), $((${_swlate:-0} / 1000000)) ms (switch);" \
			"$(((_total + ${_swtotal:-0}) / 1000000)) ms in all of $_el s" >&2
	done
}
