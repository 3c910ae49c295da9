#!/usr/bin/env bash
# t_mem_fresh_pages: a size class's blocks on pages never touched come from
# pages smpalloc faulted in ahead (MADV_POPULATE_WRITE as a thread cache
# takes them, or when a busy class takes a fresh slab), so the program's
# first writes take few page faults.  tests/mem/mem_fresh_pages.c counts
# them (the kernel's software page-fault counter) while it allocates and
# writes 1,000 blocks of 48 bytes, then 400 of 1,000 bytes; under
# LD_PRELOAD=build/libsmpalloc.so each phase may take at most a fault per
# 4 pages of blocks (with pages faulted one by one: 12-13 and 15-16 faults for
# 11 and 97 pages; now 0-1 each).  glibc runs too, for comparison: its
# figures are not asserted.  Skipped where the counter cannot be opened.
# Run from the repository root (tests/run.sh does); 0 pass, 77 skip, else
# fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
"$BIN" --expect glibc >/dev/null 2>&1
[ $? -eq 77 ] && skip "no software page-fault counter here (perf_event_open)"
check_run -t 60 "smpalloc (LD_PRELOAD): at most a fault per 4 pages of fresh blocks" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --max-share 4
glibc_run 60
finish
