#!/usr/bin/env bash
# t_mem_prodcons: a producer/consumer pair stays bounded.  tests/mem/mem_prodcons.c
# passes 20 million blocks of 16..256 bytes from one thread to another
# through a 1024-entry ring; the consumer keeps a 16 MiB live set (random
# replacement, so frees come out of allocation order) and frees the rest.
# Under LD_PRELOAD=build/libsmpalloc.so the peak RSS (VmHWM) must stay within
# 64 MiB (4 x the live set) of the RSS at start.  The same program runs under
# glibc for comparison (not asserted).  MEM_BLOCKS=N changes the count.
# MEM_CONTROLS=1 also runs the negative control (--leak-every 4: a quarter of
# the replaced blocks are never freed), which must FAIL the bound.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_prodcons
N=${MEM_BLOCKS:-20000000}
fails=0

echo "== smpalloc (LD_PRELOAD): $N blocks, bound 64 MiB over the baseline"
if timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64; then
  echo "ok: smpalloc stays bounded"
else
  echo "FAIL: smpalloc: peak RSS over the bound (or the program failed)"; fails=$((fails + 1))
fi

echo "== glibc (no preload), for comparison: not asserted"
if ! timeout 600 "$BIN" --expect glibc --blocks "$N"; then
  echo "FAIL: the program does not run under glibc"; fails=$((fails + 1))
fi

if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: a quarter of the replaced blocks never freed: must fail the bound"
  if timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64 \
       --leak-every 4; then
    echo "FAIL: control passed: the test cannot see unbounded growth"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi

[ "$fails" -eq 0 ] || { echo "t_mem_prodcons: $fails failed"; exit 1; }
echo "t_mem_prodcons: passed"
