#!/usr/bin/env bash
# t_mem_end_pages: blocks of 21-32 KiB written only at their ends keep
# about two pages resident each.  tests/mem/mem_end_pages.c: one thread
# keeps 512 blocks of random sizes in (21824, 32768] bytes and replaces one
# at random 40,000 times, writing each block's first and last 8 bytes (the
# top band of glibc-thread's pattern).  Under LD_PRELOAD=build/libsmpalloc.so
# the peak RSS may grow by at most 3.5 pages a slot (7 MiB with 4 KiB
# pages): the band has three classes, 24, 28 and 32 KiB, two to a slab, so
# a block's last bytes fall on one page or two (5.6-5.7 MiB, 2.8 pages a
# slot; with one 32 KiB class for the band they fell on any of three:
# 8.1 MiB, 4.0-4.1 pages a slot; glibc 14.8 MiB).
# glibc runs too, for comparison: its figure is not asserted.  Run from the
# repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 120 "smpalloc (LD_PRELOAD): peak RSS grows by at most 3.5 pages a slot" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --max-pages-a-slot 3.5
glibc_run 120
finish
