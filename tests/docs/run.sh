#!/bin/sh
# The docs' own checks, no root needed: the link checker's self-test, then the dead-link
# check of README.md and docs/*.md. Run by tests/run-integration.sh (so by `make test`).
#   tests/docs/run.sh
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
[ "$failed" -eq 0 ]
