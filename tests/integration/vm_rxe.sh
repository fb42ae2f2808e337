#!/bin/sh
# The short Soft-RoCE run for `make test` (and so CI): scenario 1 with few iterations,
# two QEMU guests (TCG) through qpace-switch; about a minute, plus a one-time ~70 MB
# kernel package download and initrd build cached under build/vm/. Skips, saying why,
# when QEMU cannot run here.
exec sh "$(dirname "$0")/../vm/test-rxe.sh" --short
