#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The layering check can fail: on a copy of scripts/layers.sh in a scratch tree it passes
# a tree that keeps the rules and fails each kind of breach with a line naming the file.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

tree() {   # a minimal tree that keeps the rules
	rm -rf "$tmp/t" && mkdir -p "$tmp/t/scripts" "$tmp/t/include/qpace" "$tmp/t/lib" \
		"$tmp/t/verbs" "$tmp/t/agent" "$tmp/t/tests/unit"
	cp "$top/scripts/layers.sh" "$tmp/t/scripts/"
	printf '#include "qpace/time.h"\n' >"$tmp/t/include/qpace/units.h"
	printf '/* time */\n' >"$tmp/t/include/qpace/time.h"
	printf '#include "qpace/units.h"\n' >"$tmp/t/lib/units.c"
	printf '#include "qpace/units.h"\n#include "gate_priv.h"\n' >"$tmp/t/verbs/gate.c"
	printf '/* private */\n' >"$tmp/t/verbs/gate_priv.h"
	printf '#include "qpace/agent.h"\n' >"$tmp/t/agent/core.c"
	printf '#include "qpace/units.h"\n' >"$tmp/t/include/qpace/agent.h"
	printf '#include "gate_priv.h"\n#include "qpace/agent.h"\n' >"$tmp/t/tests/unit/t.c"
}

expect() {   # expect pass|fail WHAT [grep pattern]
	if sh "$tmp/t/scripts/layers.sh" check >"$tmp/out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" != "$1" ] || { [ $# -ge 3 ] && ! grep -q "$3" "$tmp/out"; }; then
		echo "FAIL: $2: expected $1, got $got"; cat "$tmp/out"; fails=$((fails + 1))
	else
		echo "ok: $2 ($got)"
	fi
}

tree; expect pass "a tree that keeps the rules"
tree; printf '#include "qpace/agent.h"\n' >>"$tmp/t/lib/units.c"
expect fail "lib includes the agent" "lib/units.c (lib) includes \"qpace/agent.h\" (agent)"
tree; printf '#include "qpace/agent.h"\n' >>"$tmp/t/verbs/gate.c"
expect fail "verbs includes the agent" "verbs/gate.c (verbs)"
tree; printf '#include "gate_priv.h"\n' >>"$tmp/t/agent/core.c"
expect fail "a private header from another folder" "agent/core.c: includes private header"
tree; printf '/* new */\n' >"$tmp/t/include/qpace/newthing.h"
expect fail "a public header with no layer" "newthing.h: public header with no layer"
tree; printf '#include "../tests/unit/x.h"\n' >>"$tmp/t/lib/units.c"
expect fail "product code reaching into tests/"
friends() {   # sim/ drives switchsim through its private headers; agent/ may not
	tree
	mkdir -p "$tmp/t/switchsim" "$tmp/t/sim"
	printf '/* private */\n' >"$tmp/t/switchsim/sw.h"
	printf '#include "sw.h"\n' >"$tmp/t/switchsim/pipeline.c"
	printf '#include "sw.h"\n' >"$tmp/t/sim/run.c"
}
friends; expect pass "sim includes switchsim's private header (a friend)"
friends; printf '#include "sw.h"\n' >>"$tmp/t/agent/core.c"
expect fail "a folder that is no friend includes it" "agent/core.c: includes private header"

echo "layers selftest: $((8 - fails)) passed, $fails failed"
[ $fails = 0 ]
