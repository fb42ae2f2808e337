#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The docs' own checks, no root needed (`make docs-check`, so `make test`): the link
# checker's self-test, the dead-link check of README.md and docs/*.md, and the parameter
# tables against the code (scripts/docs-params.sh, with its own test; needs BUILD's qpaced),
# README.md's make demo table against virtual time (scripts/demo-table.sh, with its
# own test; BUILD's qpace-bench, ~5 s of CPU), no history words (scripts/docs-words.sh),
# the figures table and no figure quoted with another value (scripts/figures.sh), no
# run results in BUILD's help texts (scripts/help-check.sh), the manual pages against
# --help, one CLI grammar across the programs, and the example qpaced.conf loading.
#   BUILD=build tests/docs/run.sh
cd "$(dirname "$0")/../.." || exit 1
failed=0
echo "--- tests/docs/test-check-links.sh"
sh tests/docs/test-check-links.sh || failed=$((failed + 1))
echo "--- tests/docs/check-links.sh"
if sh tests/docs/check-links.sh; then
	echo "check-links: no dead links in README.md and docs/*.md"
else
	failed=$((failed + 1))
fi
echo "--- tests/docs/docs_params.sh"
sh tests/docs/docs_params.sh || failed=$((failed + 1))
echo "--- tests/docs/demo_table.sh"
sh tests/docs/demo_table.sh || failed=$((failed + 1))
echo "--- tests/docs/docs_words.sh"
sh tests/docs/docs_words.sh || failed=$((failed + 1))
echo "--- tests/docs/figures_table.sh"
sh tests/docs/figures_table.sh || failed=$((failed + 1))
echo "--- tests/docs/help_check.sh"
sh tests/docs/help_check.sh || failed=$((failed + 1))
echo "--- tests/docs/man_check.sh"
sh tests/docs/man_check.sh || failed=$((failed + 1))
echo "--- tests/docs/cli_grammar.sh"
sh tests/docs/cli_grammar.sh || failed=$((failed + 1))
echo "--- tests/docs/qpaced_conf.sh"
sh tests/docs/qpaced_conf.sh || failed=$((failed + 1))
echo "docs: $((10 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
