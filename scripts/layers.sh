#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The layering of qpace's code, stated once and checked.
#
#   scripts/layers.sh check   fail (exit 1) when a file includes a header of a layer it
#                             may not depend on, or a private header from another folder
#   scripts/layers.sh graph   print the include graph between layers: "from -> to  N"
#                             (N = #include lines); `make layers` runs both
#   scripts/layers.sh deep    the same with what each .c file sees through headers
#                             (cc -MM): "from -> to  N" with N = .c files
#
# Layers, lowest first. A file's layer is its folder's; a public header's layer
# (include/qpace/X.h) is given in HEADERS below, and every public header must be listed.
#
#   lib        wire formats and their codecs, units, time, errors, options, output,
#              addresses, keys, the rate table (the agent <-> gate contract)
#   cc         agent/cc, agent/credit: congestion-control algorithms, pure
#   verbs      the QP API, the pacing gate, the ibv and soft backends
#   switchsim  the switch emulator
#   agent      the agent core, qpaced, qpacectl; agent/bpf: the tc egress and ingress BPF
#              programs and their loaders (its own archive, for -lbpf; the generated
#              skeletons are included as <tc_egress.skel.h>, <tc_ingress.skel.h> from
#              build/bpf/, not source files)
#   host       the emulated host: a soft context + an agent core + an in-process table
#   sim        virtual time: the discrete-event engine around the switch fabric and the
#              emulated hosts; topology generators, flow-size CDFs, workloads, FCT figures
#   bench      qpace-bench and the micro-benchmarks
#   tests      unit tests, test support, fuzz targets, test-only programs (anything)
#
# Product code includes public headers as "qpace/X.h" and private ones ("x.h") only from
# its own folder (or a folder it is a friend of: FRIENDS); it never includes tests/.
set -eu
cd "$(dirname "$0")/.."

# layer: the layers it may include
RULES='
lib: lib
cc: lib cc
verbs: lib verbs
switchsim: lib switchsim
agent: lib cc agent
host: lib cc verbs agent host
sim: lib cc verbs switchsim agent host sim
bench: lib cc verbs switchsim agent host sim bench
tests: lib cc verbs switchsim agent host sim bench tests
'

# folder: a folder whose private headers it may include (built with -IFOLDER). sim/ drives
# the switch fabric the way switchsim/loop.c does (sw.h, io.h, conf.h): a second shell
# around the same pure core, not a second model of it.
FRIENDS='
sim switchsim
'

# public header: its layer
HEADERS=${QPACE_LAYER_HEADERS:-'
addr lib
bytes lib
ctl lib
ctl_client lib
ctl_server lib
errmsg lib
fb_auth lib
fb_replay lib
feedback lib
frame lib
hist lib
int lib
json lib
jsonr lib
keyfile lib
opt lib
out lib
pause lib
rate lib
ratetable lib
shm_ring lib
udp_gso lib
rdma_nl lib
rng lib
siphash lib
strbuf lib
time lib
units lib
version lib
cc cc
cc_algs cc
cc_help cc
credit cc
gate verbs
qp verbs
qp_wire verbs
rc verbs
soft verbs
soft_host verbs
agent agent
agent_config agent
agent_metrics agent
evtimer agent
qpaced agent
host host
soft_bw host
cdf sim
fct sim
topogen sim
workload sim
sim sim
'}

# The folder -> layer map: the longest matching prefix wins.
layer_of_path() {
	case "$1" in
	agent/cc/* | agent/credit/*) echo cc ;;
	agent/bpf/*) echo agent ;;   # the tc egress program and its loader (libbpf)
	lib/*) echo lib ;;
	verbs/*) echo verbs ;;
	switchsim/*) echo switchsim ;;
	agent/*) echo agent ;;
	host/*) echo host ;;
	sim/*) echo sim ;;
	bench/*) echo bench ;;
	tests/*) echo tests ;;
	include/qpace/*) echo header ;;
	*) echo other ;;
	esac
}

files() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -co --exclude-standard -- '*.c' '*.h' '*.cc'
	else
		find lib agent verbs switchsim host sim bench tests include -name '*.[ch]' -o \
			-name '*.cc' 2>/dev/null
	fi
}

# One line per quoted include: "FILE LAYER TARGET-LAYER KIND TARGET"
edges() {
	files | while read -r f; do
		[ -f "$f" ] || continue
		from=$(layer_of_path "$f")
		[ "$from" = other ] && continue
		if [ "$from" = header ]; then
			from=$(echo "$HEADERS" | awk -v h="$(basename "$f" .h)" '$1 == h { print $2 }')
			[ -n "$from" ] || from=unlisted
		fi
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r inc; do
			case "$inc" in
			qpace/*)
				h=$(basename "$inc" .h)
				to=$(echo "$HEADERS" | awk -v h="$h" '$1 == h { print $2 }')
				[ -n "$to" ] || to=unlisted
				echo "$f $from $to public $inc"
				;;
			*)
				friend=$(echo "$FRIENDS" | awk -v d="$(dirname "$f")" '$1 == d { print $2 }')
				if [ -f "$(dirname "$f")/$inc" ]; then
					echo "$f $from $from private $inc"
				elif [ -n "$friend" ] && [ -f "$friend/$inc" ]; then
					echo "$f $from $(layer_of_path "$friend/$inc") friend $inc"
				else
					echo "$f $from foreign private $inc"
				fi
				;;
			esac
		done
	done
}

check() {
	bad=0
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	edges >"$tmp"
	# Every public header is listed in HEADERS.
	for h in include/qpace/*.h; do
		b=$(basename "$h" .h)
		if ! echo "$HEADERS" | awk -v h="$b" '$1 == h { f = 1 } END { exit !f }'; then
			echo "layers: $h: public header with no layer (add it to HEADERS in $0)"
			bad=1
		fi
	done
	while read -r f from to kind inc; do
		case "$to" in
		unlisted)
			echo "layers: $f: includes \"$inc\", which is not a listed public header"
			bad=1
			continue
			;;
		foreign)
			[ "$from" = tests ] && continue
			echo "layers: $f: includes private header \"$inc\" from another folder"
			bad=1
			continue
			;;
		esac
		allowed=$(echo "$RULES" | awk -v l="$from:" '$1 == l { $1 = ""; print }')
		case " $allowed " in
		*" $to "*) ;;
		*)
			echo "layers: $f ($from) includes \"$inc\" ($to): $from may include only:$allowed"
			bad=1
			;;
		esac
	done <"$tmp"
	# Product code never reaches into tests/.
	if files | grep -E '^(lib|agent|verbs|switchsim|host|sim|bench)/' |
	   xargs grep -ln '#include "\.\./.*tests/\|#include "tests/' 2>/dev/null; then
		echo "layers: the files above include from tests/"
		bad=1
	fi
	[ $bad = 0 ] && echo "layers: ok ($(wc -l <"$tmp") includes checked)"
	return $bad
}

graph() {
	edges | awk '$3 != $2 && $3 != "foreign" { n[$2 " -> " $3]++ }
		END { for (e in n) printf "  %-22s %4d\n", e, n[e] }' | sort
}

# Layer of a path that cc -MM reports (a header or a source).
layer_of_dep() {
	case "$1" in
	include/qpace/*)
		echo "$HEADERS" | awk -v h="$(basename "$1" .h)" '$1 == h { print $2 }'
		;;
	*) layer_of_path "$1" ;;
	esac
}

deep() {
	files | grep -E '^(lib|agent|verbs|switchsim|host|bench)/.*\.c$' | while read -r f; do
		from=$(layer_of_path "$f")
		${CC:-cc} -MM -D_GNU_SOURCE -Iinclude "$f" 2>/dev/null | tr ' \\' '\n\n' |
			grep -E '\.h$' | sed 's|^\./||' | while read -r d; do
			to=$(layer_of_dep "$d")
			case "$to" in
			"" | "$from" | other) ;;
			*) echo "$f $from $to" ;;
			esac
		done
	done | sort -u | awk '{ n[$2 " -> " $3]++ } END { for (e in n) printf "  %-22s %4d\n", e, n[e] }' |
		sort
}

case "${1:-check}" in
check) check ;;
deep) echo "what .c files see through headers (from -> to, .c files):"; deep ;;
graph) echo "include graph between layers (from -> to, #include lines):"; graph ;;
*) echo "usage: $0 check|graph|deep" >&2; exit 2 ;;
esac
