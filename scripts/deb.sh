#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make deb: the Debian packages (debian/), built from a copy of the tree's files (tracked
# and untracked-but-not-ignored) in build/deb/qpace-VERSION/, so that dpkg-buildpackage
# writes its results (into the parent directory) to build/deb/ and never beside the tree.
# Installs what it needs (scripts/deps.sh, then the Build-Depends dpkg-checkbuilddeps finds
# missing), then runs lintian on the result: any error or warning fails (docs/install.md
# lists the informational findings left, and why).
#   scripts/deb.sh
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh dpkg-dev debhelper fakeroot lintian

ver=$(dpkg-parsechangelog -S Version)
mk_ver=$(cat VERSION)
if [ "$ver" != "$mk_ver" ]; then
	echo "make deb: debian/changelog's version is $ver, the file VERSION says $mk_ver" >&2
	exit 1
fi
out=build/deb
src=$out/qpace-$ver
rm -rf "$out"
mkdir -p "$src"
git ls-files -co --exclude-standard | while read -r f; do [ -e "$f" ] && echo "$f"; done |
	tar -cf - -T - | tar -xf - -C "$src"

missing=$(cd "$src" && dpkg-checkbuilddeps 2>&1 | sed -n 's/.*Unmet build dependencies: //p' |
	sed 's/([^)]*)//g; s/<[^>]*>//g; s/|[^ ]*//g')
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	sh scripts/deps.sh $missing
fi

echo "make deb: dpkg-buildpackage -us -uc -b in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b -J2) >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	echo "make deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
grep -E '^(ok|FAIL|skip): |passed, ' "$out/build.log" | sed 's/^/  package build test: /'
ls -1 "$out"/*.deb | sed 's/^/  /'

changes=$(ls "$out"/qpace_"$ver"_*.changes)
echo "make deb: lintian $changes"
lintian --fail-on error,warning -I --display-experimental "$changes"
echo "make deb: lintian: no error, no warning"
