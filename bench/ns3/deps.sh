#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Install, when missing, what the ns-3 comparison needs and `make test` does not: Debian's
# packaged ns-3 (libns3-dev 3.37 on bookworm, with libns3.37 and GSL) and a C++ compiler.
# Not in scripts/deps.sh's default list: 4 packages, 12.7 MB to download and 60 MB
# installed (apt-get -s install --no-install-recommends libns3-dev on Debian 12), for one
# benchmark. g++ and pkg-config come with build-essential and the default list anyway.
#   bench/ns3/deps.sh
set -eu
cd "$(dirname "$0")/../.."
exec sh scripts/deps.sh g++ pkg-config libns3-dev
