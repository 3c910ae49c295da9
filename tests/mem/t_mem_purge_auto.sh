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
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_purge_auto
fails=0
case_() { # label, VAR=VALUE... [-- program options]
  local label=$1; shift
  local envs=() opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift && opts=("$@")
  echo "== $label"
  if ! timeout 300 env LD_PRELOAD="$LIB" "${envs[@]}" "$BIN" --expect smpalloc --max-growth-mib 32 "${opts[@]}"; then
    echo "FAIL: $label: RSS did not fall to within 32 MiB of the start"; fails=$((fails + 1))
  fi
}
case_ "SMPALLOC_PURGE_DELAY_MS=0" SMPALLOC_PURGE_DELAY_MS=0
case_ "SMPALLOC_PURGE_DELAY_MS=0, threshold 64g" SMPALLOC_PURGE_DELAY_MS=0 SMPALLOC_PURGE_THRESHOLD=64g
case_ "default delay, threshold 64g" SMPALLOC_PURGE_THRESHOLD=64g
case_ "defaults"
for act in alloc large; do
  case_ "default delay, threshold 64g, --activity $act" SMPALLOC_PURGE_THRESHOLD=64g -- --activity "$act"
done
echo "== glibc (no preload), for comparison: not asserted"
if ! timeout 300 "$BIN" --expect glibc --iterations 20; then
  echo "FAIL: the program does not run under glibc"; fails=$((fails + 1))
fi
if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: purging off: must fail the bound"
  if timeout 300 env LD_PRELOAD="$LIB" SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=64g \
       "$BIN" --expect smpalloc --max-growth-mib 32; then
    echo "FAIL: control passed: the test cannot see memory that is not returned"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi
[ "$fails" -eq 0 ] || { echo "t_mem_purge_auto: $fails failed"; exit 1; }
echo "t_mem_purge_auto: passed"
