#!/usr/bin/env bash
# Exhaustive checks of the size-class table, the size -> class lookup and the
# one-multiply block-start test (tests/api/internal.c, built with the
# core sources so it sees the internal header).
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
out=build/tests/internal
[ -x "$out" ] || { echo "FAIL: $out is missing (make test-bins)"; exit 1; }
"$out"
