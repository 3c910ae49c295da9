#!/usr/bin/env bash
# t_mem_size_walk: a thread that walks from size to size keeps about one
# size's memory, not a slab's worth per size it used.  tests/mem/mem_size_walk.c:
# 40 rounds over 16..512 bytes, 2,000 blocks of a size at a time (at most
# 1000 KiB live), each set freed in a random order, so that the blocks a
# thread cache keeps of each size pin slabs all over that size's memory.
# Under LD_PRELOAD=build/libsmpalloc.so the peak RSS may grow by at most
# 2 MiB (a thread gives its cached blocks back before its heap takes
# memory never touched; without that it grows by about 2.5 MiB, with it by
# about 1.6, glibc by about 1.2).  glibc runs too, for comparison: its
# figure is not asserted.  Run from the repository root (tests/run.sh
# does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 120 "smpalloc (LD_PRELOAD): peak RSS grows by at most 2 MiB" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --max-growth-kib 2048
glibc_run 120
finish
