#!/usr/bin/env bash
# t_mem_purge_auto: RSS falls on its own, with no trim call.
# tests/mem/mem_purge_auto.c allocates 256 MiB in blocks of 16..512 bytes
# (written), frees them all, then does a little allocation activity (more
# blocks than a thread cache keeps, so the allocator's slow paths run) for at
# most 300 rounds, reading RSS after each (10 ms apart while it is still
# high).  The verdict is the RSS level reached: within 32 MiB of the start,
#   - with SMPALLOC_PURGE_DELAY_MS=0 (and the default threshold);
#   - with SMPALLOC_PURGE_DELAY_MS=0 SMPALLOC_PURGE_THRESHOLD=64g (the delay
#     alone must do it);
#   - with the default delay (100 ms) and SMPALLOC_PURGE_THRESHOLD=64g: the
#     300 rounds take at least 3 s (each sleeps >= 10 ms while RSS is high),
#     far beyond the delay;
#   - with the defaults.
# The rounds of activity are frees and allocations of small blocks, only
# allocations of small blocks (--activity alloc), or only large blocks
# (--activity large): each path must run the delayed purge.
# glibc runs 20 rounds for comparison (not asserted).  MEM_CONTROLS=1 also
# runs the negative control (SMPALLOC_PURGE_DELAY_MS=3600000
# SMPALLOC_PURGE_THRESHOLD=64g: nothing may be returned), which must fail.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
case_() { # label, VAR=VALUE... [-- program options]
  local label=$1; shift
  local envs=() opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift && opts=("$@")
  check_run -t 300 "$label: RSS falls to within 32 MiB of the start" \
    env LD_PRELOAD="$LIB" "${envs[@]}" "$BIN" --expect smpalloc --max-growth-mib 32 "${opts[@]}"
}
case_ "SMPALLOC_PURGE_DELAY_MS=0" SMPALLOC_PURGE_DELAY_MS=0
case_ "SMPALLOC_PURGE_DELAY_MS=0, threshold 64g" SMPALLOC_PURGE_DELAY_MS=0 SMPALLOC_PURGE_THRESHOLD=64g
case_ "default delay, threshold 64g" SMPALLOC_PURGE_THRESHOLD=64g
case_ "defaults"
for act in alloc large; do
  case_ "default delay, threshold 64g, --activity $act" SMPALLOC_PURGE_THRESHOLD=64g -- --activity "$act"
done
glibc_run 300 --iterations 20
control "purging off" "the test cannot see memory that is not returned" \
  timeout 300 env LD_PRELOAD="$LIB" SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=64g \
  "$BIN" --expect smpalloc --max-growth-mib 32
finish
