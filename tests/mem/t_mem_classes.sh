#!/usr/bin/env bash
# t_mem_classes: for every request size 1..1 MiB the block malloc gives is
# big enough, aligned (16 for multiples of 16, else 8) and wastes no more
# than the class table promises: n <= 8 costs 8 bytes, n <= 128 wastes at
# most 7 bytes, 64 < n <= 32 KiB at most 12.5 % of the block, and a block
# mapped alone (n > 32 KiB, 64 KiB granules) less than 64 KiB; the whole
# usable size of neighbouring blocks is written and read back.  Then
# aligned_alloc for alignments 8 B..32 KiB (and 64 KiB, 1 MiB) with sizes
# around them.  tests/mem/mem_classes.c, under LD_PRELOAD=build/libsmpalloc.so,
# using only public names (malloc_usable_size).  MEM_CONTROLS=1 also runs the
# negative control: a tighter bound (10 %) that the table cannot meet must
# fail.  Run from the repository root (tests/run.sh does); 0 pass, else fail.
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_classes
fails=0
echo "== smpalloc (LD_PRELOAD)"
if ! timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc; then
  echo "FAIL: block sizes or alignment"; fails=$((fails + 1))
fi
if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: bound 10 % (the table's worst is 1/9): must fail"
  if timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --waste-permille 100 >/dev/null; then
    echo "FAIL: control passed: the waste check is not applied"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi
[ "$fails" -eq 0 ] || { echo "t_mem_classes: $fails failed"; exit 1; }
echo "t_mem_classes: passed"
