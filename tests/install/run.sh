#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# `make install` into a temporary DESTDIR (the directory variables as the Makefile gives
# them, through `make test-install`), then:
#   - the files placed are exactly the list in docs/install.md, programs 0755 and the
#     rest 0644;
#   - each installed header compiles alone against the installed tree;
#   - qp-pair (tests/install/qp_pair.c) builds with `pkg-config --cflags --libs qpace`
#     alone and moves 256 KiB intact between two soft hosts through the installed
#     libqpace.so;
#   - the library's SONAME, and its exported symbols: exactly the version script's list,
#     which is exactly what the installed headers declare (gcc -aux-info);
#   - the unit passes `systemd-analyze verify` (where systemd-analyze is; skipped with a
#     line otherwise), and the example config, every key in it set, starts qpaced;
#   - qpace-bench looks CDFs up where they were installed;
#   - an edited config is left by install and uninstall;
#   - uninstall leaves no file.
# Ends with "N passed, N failed"; exit 1 on any failure.
set -u
cd "$(dirname "$0")/../.."
top=$(pwd)
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
for v in BINDIR LIBDIR INCLUDEDIR DATADIR MANDIR SYSCONFDIR SYSTEMDUNITDIR PKGCONFIGDIR \
		QPACE_VERSION LIBQPACE_SONAME; do
	eval "[ -n \"\${$v:-}\" ]" || { echo "tests/install/run.sh: $v not set (run make test-install)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/qpace-install.XXXXXX)
root=$tmp/root
QPID=
trap '[ -z "$QPID" ] || kill $QPID 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
mk() { $MAKE -s --no-print-directory BUILD="$BUILD" DESTDIR="$root" "$@"; }

# placed: every file and symlink under $root, "PATH" or "PATH -> TARGET", sorted
placed() {
	(cd "$root" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort | while read -r f; do
		if [ -L "$root$f" ]; then echo "$f -> $(readlink "$root$f")"; else echo "$f"; fi
	done)
}

if ! mk install >"$tmp/install.log" 2>&1; then
	sed 's/^/  /' "$tmp/install.log"
	bad "make install DESTDIR=$root"
	echo "install: $passed passed, $failed failed"
	exit 1
fi

# ---- the list docs/install.md gives
awk '/<!-- install-list -->/ { on = 1; next } on && /^```/ { if (++fence == 2) exit; next }
	on && fence == 1' docs/install.md |
	sed -e "s|^BINDIR/|$BINDIR/|" -e "s|^LIBDIR/|$LIBDIR/|" -e "s|^INCLUDEDIR/|$INCLUDEDIR/|" \
	    -e "s|^DATADIR/|$DATADIR/|" -e "s|^MANDIR/|$MANDIR/|" -e "s|^SYSCONFDIR/|$SYSCONFDIR/|" \
	    -e "s|^SYSTEMDUNITDIR/|$SYSTEMDUNITDIR/|" -e "s|^PKGCONFIGDIR/|$PKGCONFIGDIR/|" \
	    >"$tmp/listed"
sort -o "$tmp/listed" "$tmp/listed"
placed >"$tmp/placed"
n=$(wc -l <"$tmp/placed")
if [ "$n" -gt 0 ] && diff -u "$tmp/listed" "$tmp/placed" >"$tmp/diff"; then
	ok "make install placed the $n files docs/install.md lists"
else
	sed 's/^/  /' "$tmp/diff"
	bad "make install placed other files than docs/install.md lists (- listed, + placed)"
fi
exe=$(cd "$root" && find . -type f -perm /111 | sed 's|^\.||' | sort | tr '\n' ' ')
want=$(for p in qpace-bench qpace-switch qpacectl qpaced; do printf '%s ' "$BINDIR/$p"; done)
odd=$(cd "$root" && find . -type f ! -perm 644 ! -perm 755 | tr '\n' ' ')
if [ "$exe" = "$want" ] && [ -z "$odd" ]; then
	ok "modes: the 4 programs 0755, every other file 0644"
else
	bad "modes: executable: $exe (want $want); neither 0644 nor 0755: $odd"
fi

# ---- the headers, alone
inc=$root$INCLUDEDIR
bad_h=
for h in "$inc"/qpace/*.h; do
	printf '#include <qpace/%s>\n' "${h##*/}" |
		cc -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$inc" -x c - \
		2>"$tmp/h.err" || { bad_h="$bad_h ${h##*/}"; sed 's/^/  /' "$tmp/h.err"; }
done
[ -z "$bad_h" ] && ok "each of the $(ls "$inc"/qpace | wc -l) installed headers compiles alone (C11, -pedantic)" ||
	bad "installed headers that do not compile alone:$bad_h"

# ---- a program built with pkg-config alone, against the installed library
export PKG_CONFIG_PATH="$root$PKGCONFIGDIR" PKG_CONFIG_SYSROOT_DIR="$root"
if cflags=$(pkg-config --cflags qpace) && libs=$(pkg-config --libs qpace); then
	ver=$(pkg-config --modversion qpace)
	[ "$ver" = "$QPACE_VERSION" ] && ok "pkg-config qpace: version $ver; --cflags $cflags; --libs $libs" ||
		bad "pkg-config --modversion qpace: $ver, want $QPACE_VERSION"
	if (cd "$tmp" && cc -std=c11 -pedantic -Wall -Wextra -Werror $cflags \
			"$top/tests/install/qp_pair.c" $libs -o qp-pair) 2>"$tmp/cc.err"; then
		lib=$(LD_LIBRARY_PATH="$root$LIBDIR" ldd "$tmp/qp-pair" | sed -n "s/.*$LIBQPACE_SONAME => \([^ ]*\).*/\1/p")
		if [ "$lib" = "$root$LIBDIR/$LIBQPACE_SONAME" ] &&
				LD_LIBRARY_PATH="$root$LIBDIR" timeout 60 "$tmp/qp-pair" >"$tmp/pair.out" 2>&1; then
			ok "qp-pair, built with pkg-config alone against $lib: $(grep '^write:' "$tmp/pair.out")"
		else
			sed 's/^/  /' "$tmp/pair.out"
			bad "qp-pair against the installed library (it resolved $LIBQPACE_SONAME to '$lib')"
		fi
	else
		sed 's/^/  /' "$tmp/cc.err"
		bad "qp-pair does not build with pkg-config's flags: $cflags ... $libs"
	fi
else
	bad "pkg-config qpace in $root$PKGCONFIGDIR"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- the library's ABI: SONAME, exported symbols = the version script = the headers'
so=$root$LIBDIR/$LIBQPACE_SONAME
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ "$soname" = "$LIBQPACE_SONAME" ] && ok "SONAME $soname; NEEDED $needed" ||
	bad "SONAME '$soname', want $LIBQPACE_SONAME"
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' >"$tmp/nm.ver"
sed 's/@.*//' "$tmp/nm.ver" | sort >"$tmp/exported"
sed -n '/global:/,/local:/p' dist/libqpace.map | grep -o '\bqp_[a-z0-9_]*' | sort >"$tmp/map"
printf '#include <qpace/qp.h>\n' >"$tmp/aux.c"
gcc -std=c11 -I"$inc" -aux-info "$tmp/aux.txt" -c "$tmp/aux.c" -o "$tmp/aux.o"
{
	grep -F "$inc/" "$tmp/aux.txt" | grep -v ' static ' |
		grep -oE '^/\*[^*]*\*/ extern [^(]*\(' | grep -oE '[a-z_0-9]+ \($' | sed 's/ ($//'
	grep -h '^extern ' "$inc"/qpace/*.h | grep -v '(' | grep -oE '[a-z_0-9]+;$' | tr -d ';'
} | sort -u >"$tmp/declared"
unver=$(grep -vc '@@QPACE_0\.1$' "$tmp/nm.ver")
if [ -s "$tmp/exported" ] && cmp -s "$tmp/exported" "$tmp/map" && cmp -s "$tmp/map" "$tmp/declared" &&
		[ "$unver" = 0 ]; then
	ok "nm -D: exactly the $(wc -l <"$tmp/exported") symbols the installed headers declare (dist/libqpace.map), each QPACE_0.1; $(nm "$so" | grep -c ' t ') other functions local"
else
	echo "  exported (nm -D) vs version script:"; diff "$tmp/exported" "$tmp/map" | sed 's/^/    /'
	echo "  version script vs declared in the installed headers:"; diff "$tmp/map" "$tmp/declared" | sed 's/^/    /'
	bad "exported symbols, dist/libqpace.map and the installed headers differ ($unver without the version node QPACE_0.1)"
fi

# ---- the unit: systemd-analyze verify, its paths
unit=$root$SYSTEMDUNITDIR/qpaced.service
exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
if [ "$exec_line" = "$BINDIR/qpaced -c $SYSCONFDIR/qpace/qpaced.conf" ] &&
		[ -x "$root$BINDIR/qpaced" ] && [ -f "$root$SYSCONFDIR/qpace/qpaced.conf" ]; then
	ok "the unit starts $exec_line, both installed"
else
	bad "the unit's ExecStart: '$exec_line'"
fi
if command -v systemd-analyze >/dev/null; then
	# the same unit, its ExecStart pointing into DESTDIR (verify wants the program there)
	sed "s|^ExecStart=$BINDIR/|ExecStart=$root$BINDIR/|" "$unit" >"$tmp/qpaced.service"
	man=--man=yes
	MANPATH="$root$MANDIR" systemd-analyze verify $man "$tmp/qpaced.service" >"$tmp/verify" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$tmp/verify" ]; then
		ok "systemd-analyze verify $man qpaced.service: no finding"
	else
		sed 's/^/  /' "$tmp/verify"
		bad "systemd-analyze verify qpaced.service (exit $rc)"
	fi
else
	echo "skip: no systemd-analyze here: the unit is not verified"
fi

# ---- the example config: every key set, its commented settings too (but dev: with
# --enforce off it would clean a device up; and key, which names a file this test has not)
# starts qpaced; the socket, feedback and metrics of this test's own
port=$((24000 + $$ % 3000 * 2))
sed 's/^# \([a-z-]* = \)/\1/' "$root$SYSCONFDIR/qpace/qpaced.conf" | grep -v '^dev \|^key \|^ecn-mark ' >"$tmp/all.conf"
"$root$BINDIR/qpaced" -c "$tmp/all.conf" --feedback "127.0.0.1:$port" --socket "$tmp/q.sock" \
	--rate-table "$tmp/rates" --metrics off >"$tmp/qpaced.log" 2>&1 &
QPID=$!
for i in $(seq 50); do
	[ -S "$tmp/q.sock" ] && break
	kill -0 $QPID 2>/dev/null || break
	sleep 0.1
done
up=no
[ -S "$tmp/q.sock" ] && up=yes
kill $QPID 2>/dev/null
wait $QPID
rc=$?
QPID=
if [ $up = yes ] && [ $rc = 0 ]; then
	ok "qpaced -c (the example config, its $(grep -c '^[a-z]' "$tmp/all.conf") keys set) started and stopped cleanly"
else
	sed 's/^/  /' "$tmp/qpaced.log"
	bad "qpaced with the example config: socket $up, exit $rc"
fi

# ---- qpace-bench finds its CDFs where they were installed
if "$root$BINDIR/qpace-bench" run --help 2>&1 | grep -qF "$DATADIR/qpace/cdf" &&
		[ -f "$root$DATADIR/qpace/cdf/websearch.cdf" ]; then
	ok "qpace-bench run looks cdf=NAME up in $DATADIR/qpace/cdf, where websearch.cdf is"
else
	bad "qpace-bench's CDF directory is not $DATADIR/qpace/cdf"
fi

# ---- an edited config stays
conf=$root$SYSCONFDIR/qpace/qpaced.conf
echo "cc = dcqcn" >>"$conf"
mk install >"$tmp/install2.log" 2>&1 && mk uninstall >"$tmp/uninstall1.log" 2>&1
if tail -1 "$conf" | grep -q dcqcn && grep -q 'left as it is' "$tmp/install2.log" &&
		grep -q 'left as it is' "$tmp/uninstall1.log"; then
	ok "an edited $SYSCONFDIR/qpace/qpaced.conf is left by install and by uninstall (each says so)"
else
	bad "the edited config: $(cat "$tmp/install2.log" "$tmp/uninstall1.log")"
fi
rm -f "$conf"

# ---- install again, uninstall: no file left
mk install >/dev/null 2>&1
mk uninstall >"$tmp/uninstall.log" 2>&1 || bad "make uninstall: $(cat "$tmp/uninstall.log")"
left=$(placed)
qdirs=$(cd "$root" && find . -name '*qpace*')
if [ -z "$left" ] && [ -z "$qdirs" ]; then
	ok "make uninstall: no file left under DESTDIR, no qpace directory"
else
	bad "make uninstall left: $left $qdirs"
fi

echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
