#!/usr/bin/env bash
# t_mem_frag: a long soak of random replacement gives its memory back, and
# fragments no more than it did.
# tests/mem/mem_frag.c: 2 threads x 1.5 M operations, each over a window of
# 10,000 live blocks written whole, sizes log-uniform moving from small
# (8 B-1 KiB) to large (1-32 KiB) to mixed (8 B-32 KiB); each operation
# frees a random block of the thread's window and allocates a new one.
# Then every block is freed and the threads exit.  Under
# LD_PRELOAD=build/libsmpalloc.so:
#   - once the threads are joined, with no trim, at most 4 MiB more
#     resident than at the start (1.4-1.8 MiB; 5-16 in about 1 run of 15 before 96507ef; 59-80
#     MiB: the emptied slabs waited in the pool for the background
#     thread's aged purge; glibc 0.8 MiB);
#   - the peak RSS at most 1.40x the peak live bytes (the requests' sum):
#     a guard, not the goal: 1.30-1.31x here, glibc 1.05x (docs/design.md,
#     "Where the peak RSS goes": class rounding and free blocks inside
#     slabs of other classes).
# glibc runs too, for comparison: not asserted.
# MEM_CONTROLS=1 also runs the negative control (--leak-every 1000: one
# replaced block in 1,000 never freed, about 12 MiB), which must FAIL.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
ARGS=(--ops 1500000 --max-ratio 1.40 --max-after-mib 4)
check_run -t 600 "smpalloc (LD_PRELOAD): memory back after the last free, peak RSS bounded" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc "${ARGS[@]}"
glibc_run 600 --ops 1500000
control "one replaced block in 1,000 never freed" "the test cannot see memory kept" \
  timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc "${ARGS[@]}" --leak-every 1000
finish
