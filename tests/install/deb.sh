#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The Debian packages `make deb` built, on this machine (root; `make test-deb`):
#   - apt installs qpace, libqpace0 and libqpace-dev from DIR;
#   - each program answers --version with the release (exit 0); `man qpaced` renders;
#     the installed unit passes `systemd-analyze verify` (where it is);
#   - the installed qpace-bench runs a virtual-time incast whose workload names
#     cdf=websearch, from a directory with no sim/cdf: it finds /usr/share/qpace/cdf;
#   - qp-pair (tests/install/qp_pair.c) builds with `pkg-config --cflags --libs qpace`
#     against the installed libqpace-dev and runs;
#   - apt purges the three; every file they had placed is gone, and no path named
#     *qpace* under /usr, /etc and /lib is there that was not before.
# Ends with "N passed, N failed".
#   tests/install/deb.sh [DIR]      (default build/deb)
set -u
dir=${1:-}
cd "$(dirname "$0")/../.."
top=$(pwd)
dir=$(cd "$OLDPWD" && cd "${dir:-$top/build/deb}" && pwd) || exit 2
PKGS="qpace libqpace0 libqpace-dev"
if [ "$(id -u)" != 0 ]; then
	echo "skip: tests/install/deb.sh installs packages: root only"
	exit 0
fi
debs=""
for p in $PKGS; do
	f=$(ls "$dir/${p}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "tests/install/deb.sh: no $p package in $dir (make deb)" >&2; exit 2; }
	debs="$debs $f"
done
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		echo "tests/install/deb.sh: $p is installed already: apt-get purge $PKGS first" >&2
		exit 2
	fi
done
tmp=$(mktemp -d /tmp/qpace-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
qpace_paths() { find /usr /etc /lib -xdev -name '*qpace*' 2>/dev/null | sort; }
APT="apt-get -y -q -o DPkg::Lock::Timeout=120"
export DEBIAN_FRONTEND=noninteractive

qpace_paths >"$tmp/before"
# shellcheck disable=SC2086
if ! $APT install $debs >"$tmp/apt.log" 2>&1; then
	tail -20 "$tmp/apt.log"
	bad "apt-get install$debs"
	echo "deb: $passed passed, $failed failed"
	exit 1
fi
for p in $PKGS; do
	dpkg -L "$p" | while read -r f; do [ -d "$f" ] || echo "$f"; done
done | sort >"$tmp/files"
ok "apt-get installed $PKGS ($(wc -l <"$tmp/files") files)"

# ---- the programs
for p in qpaced qpacectl qpace-switch qpace-bench; do
	if [ "$(command -v "$p")" = "/usr/bin/$p" ] && "$p" --version >"$tmp/help" 2>&1 &&
			[ "$(cat "$tmp/help")" = "$p $(cat VERSION)" ]; then
		ok "/usr/bin/$p --version: $(cat "$tmp/help")"
	else
		bad "$p --version: $(head -3 "$tmp/help")"
	fi
done
if grep -q '^/usr/share/man/man1/qpaced.1' "$tmp/files" &&
		MANPAGER=cat MANWIDTH=80 man qpaced >"$tmp/man" 2>&1 && grep -q qpaced "$tmp/man"; then
	ok "man qpaced: $(grep -c . "$tmp/man") lines"
else
	bad "man qpaced: the package has no /usr/share/man/man1/qpaced.1, or man fails: $(head -3 "$tmp/man" 2>/dev/null)"
fi
if command -v systemd-analyze >/dev/null; then
	man=--man=no
	grep -q '^/usr/share/man/man1/qpaced.1' "$tmp/files" && man=--man=yes
	if systemd-analyze verify $man /lib/systemd/system/qpaced.service >"$tmp/verify" 2>&1 &&
			[ ! -s "$tmp/verify" ]; then
		ok "systemd-analyze verify $man /lib/systemd/system/qpaced.service: no finding"
	else
		bad "systemd-analyze verify: $(cat "$tmp/verify")"
	fi
else
	echo "skip: no systemd-analyze here: the unit is not verified"
fi

# ---- qpace-bench finds its installed CDFs
mkdir "$tmp/run"
printf 'poisson cdf=websearch load=0.5 duration=20ms\n' >"$tmp/run/ws.wl"
if (cd "$tmp/run" && qpace-bench run --gen leaf-spine:leaves=2,spines=1,hosts-per-leaf=2,rate=10G \
		--workload ws.wl --cc hpcc --no-plots --no-progress -o out) >"$tmp/bench.log" 2>&1 &&
		grep -q '^end *all [1-9][0-9]* flows finished' "$tmp/bench.log"; then
	ok "qpace-bench run, cdf=websearch, from a directory without sim/cdf: $(sed -n 's/^end *//p' "$tmp/bench.log")"
else
	sed 's/^/  /' "$tmp/bench.log" | tail -5
	bad "qpace-bench run with cdf=websearch (the installed /usr/share/qpace/cdf)"
fi

# ---- a program against the installed library, with pkg-config alone
if (cd "$tmp" && cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags qpace) \
		"$top/tests/install/qp_pair.c" $(pkg-config --libs qpace) -o qp-pair) 2>"$tmp/cc.err" &&
		lib=$(ldd "$tmp/qp-pair" | sed -n 's/.*libqpace.so.0 => \([^ ]*\).*/\1/p') &&
		timeout 60 "$tmp/qp-pair" >"$tmp/pair.out" 2>&1; then
	ok "qp-pair, built with pkg-config against libqpace-dev, $lib: $(grep '^write:' "$tmp/pair.out")"
else
	sed 's/^/  /' "$tmp/cc.err" "$tmp/pair.out" 2>/dev/null
	bad "qp-pair against the installed packages"
fi

# ---- purge: nothing left
if $APT purge $PKGS >"$tmp/purge.log" 2>&1; then
	ok "apt-get purge $PKGS"
else
	tail -20 "$tmp/purge.log"
	bad "apt-get purge $PKGS"
fi
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$tmp/files")
qpace_paths >"$tmp/after"
extra=$(comm -13 "$tmp/before" "$tmp/after" | tr '\n' ' ')
still=$(for p in $PKGS; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed\|config-files' && echo "$p"; done)
if [ -z "$left" ] && [ -z "$extra" ] && [ -z "$still" ]; then
	ok "after the purge: none of the $(wc -l <"$tmp/files") files, no *qpace* path under /usr /etc /lib that was not there before, no package state"
else
	bad "after the purge: files left: $left; paths: $extra; packages: $still"
fi

echo "deb: $passed passed, $failed failed"
[ "$failed" = 0 ]
