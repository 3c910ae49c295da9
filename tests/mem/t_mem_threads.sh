#!/usr/bin/env bash
# t_mem_threads: 1,000 threads alive at once (tests/mem/mem_threads.c), each
# doing 5,000 operations: allocate (1 B..256 KiB, mostly small, a few large)
# and fill with a per-block pattern, verify every byte and free, or hand a
# block to another thread through a mailbox.  Every block must hold its
# pattern when freed and every allocated block must be verified once.
# Runs under LD_PRELOAD=build/libsmpalloc.so with the defaults, with
# SMPALLOC_SLOTS=1 (1,000 threads on one slot: the sleeping path) and with
# SMPALLOC_CHECKED=1; then under glibc (the reference: must pass too).
# MEM_CONTROLS=1 also runs the negative control (--corrupt: one byte of one
# block is changed after filling), which must fail.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
ulimit -c 0
run() { check_run -t 300 "$@"; }
run "smpalloc" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
run "smpalloc, SMPALLOC_SLOTS=1" env LD_PRELOAD="$LIB" SMPALLOC_SLOTS=1 "$BIN" --expect smpalloc
run "smpalloc, SMPALLOC_CHECKED=1" env LD_PRELOAD="$LIB" SMPALLOC_CHECKED=1 "$BIN" --expect smpalloc
run "glibc (reference)" "$BIN" --expect glibc
control "one corrupted byte" "the test does not see a changed byte" \
  timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --corrupt
finish
