#!/usr/bin/env bash
# t_mem_size_walk: a thread that walks from size to size keeps about one
# size's memory, not a slab's worth per size it used.  tests/mem/mem_size_walk.c:
# 40 rounds over 16..512 bytes, 2,000 blocks of a size at a time (at most
# 1000 KiB live), each set freed in a random order, so that the blocks a
# thread cache keeps of each size pin slabs all over that size's memory.
# Under LD_PRELOAD=build/libsmpalloc.so the peak RSS may grow by at most
# 1.5 MiB: a thread gives its cached blocks back before its heap takes
# memory never touched (without that it grew by about 2.5 MiB), and a
# slab that empties goes back to the pool for any size, the current one
# too once it was used past half (without that it grew by 1.51-1.57 MiB
# in six runs; with it 1.13-1.32 MiB, glibc 1.16-1.29; t_internal checks
# the slab itself).  glibc runs too, for comparison:
# its figure is not asserted.  Run from the repository root (tests/run.sh
# does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 120 "smpalloc (LD_PRELOAD): peak RSS grows by at most 1.5 MiB" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --max-growth-kib 1536
glibc_run 120
finish
