#!/usr/bin/env bash
# t_mem_rss_return: memory freed by exited threads goes back to the kernel.
# tests/mem/mem_rss_return.c: 4 threads allocate 1 GiB in blocks of 16..512
# bytes (written), 4 other threads free it all (cross-thread) and exit,
# then malloc_trim(0).  Under LD_PRELOAD=build/libsmpalloc.so the RSS after
# the trim must be within 16 MiB of the RSS at start.  The same program runs
# under glibc for comparison (it must run; its figure is not asserted).
# MEM_CONTROLS=1 also runs the negative control: no trim, with purging
# disabled (SMPALLOC_PURGE_THRESHOLD=64g SMPALLOC_PURGE_DELAY_MS=3600000),
# which must FAIL the 16 MiB bound (shows the measurement sees held memory).
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_rss_return
fails=0

echo "== smpalloc (LD_PRELOAD), malloc_trim(0), bound 16 MiB"
if timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --max-growth-mib 16; then
  echo "ok: smpalloc returns the memory"
else
  echo "FAIL: smpalloc: RSS did not come back (or the program failed)"; fails=$((fails + 1))
fi

echo "== glibc (no preload), for comparison: not asserted"
if ! timeout 300 "$BIN" --expect glibc; then
  echo "FAIL: the program does not run under glibc"; fails=$((fails + 1))
fi

if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: no trim, purging off: must fail the bound"
  if timeout 300 env LD_PRELOAD="$LIB" SMPALLOC_PURGE_THRESHOLD=64g SMPALLOC_PURGE_DELAY_MS=3600000 \
       "$BIN" --expect smpalloc --max-growth-mib 16 --no-trim; then
    echo "FAIL: control passed: the test cannot see memory that is not returned"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi

[ "$fails" -eq 0 ] || { echo "t_mem_rss_return: $fails failed"; exit 1; }
echo "t_mem_rss_return: passed"
