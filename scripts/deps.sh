#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Install the Debian packages qpace needs, when they are missing. Called by `make deps`
# (and so by `make test` and `make demo`). Safe to run again: it only asks dpkg. It says
# in one line what it installs; apt's own output goes to a log, printed if apt fails.
#   scripts/deps.sh [extra-package...]
set -eu

PKGS="build-essential pkg-config libev-dev libcmocka-dev libibverbs-dev librdmacm-dev \
zlib1g-dev libisal-dev libpcap-dev iproute2 clang libclang-rt-14-dev curl tshark \
llvm libbpf-dev bpftool groff-base $*"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "qpace: installing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	SUDO="sudo -n"
else
	echo "qpace: missing packages:$missing" >&2
	echo "qpace: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/qpace-apt.XXXXXX)
# shellcheck disable=SC2086
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
	$missing; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "qpace: apt-get failed (its output above)" >&2
	rm -f "$log"
	exit 1
fi
rm -f "$log"
