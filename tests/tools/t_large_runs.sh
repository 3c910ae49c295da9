#!/usr/bin/env bash
# t_large_runs: blocks above the slab classes are what smpalloc(3) says:
# up to 1 MiB, runs of 64 KiB granules carved from 4 MiB chunks; beyond,
# each mapped alone (tests/tools/large_runs.c, linked with the archive).
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
BIN=build/tests/large_runs
[ -x "$BIN" ] || { echo "FAIL: $BIN is missing (make test builds it)"; exit 1; }
echo "checks: bytes mapped grow by whole 4 MiB chunks for blocks up to 1 MiB, by each block's own 64 KiB-rounded mapping beyond"
"$BIN"
