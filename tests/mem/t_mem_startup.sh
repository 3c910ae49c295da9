#!/usr/bin/env bash
# t_mem_startup: smpalloc's start-up calls none of the libc wrappers that a
# program which never calls them would pay resident memory for (a first call
# maps the function's page of libc and, by the kernel's fault-around, up to
# 15 more: 64 KiB), and reads no clock: tests/mem/mem_startup.c defines
# clock_gettime, sched_getaffinity and getrlimit itself, counts the calls
# made while it starts and mallocs once (all three must be 0 under
# LD_PRELOAD=build/libsmpalloc.so; before, smpalloc made 1, 2 and 1), then
# starts a thread that mallocs: smpalloc reads the clock for it (the CPU
# count is re-read at most once a second, from the second thread on), so the
# count must grow - or the counting does not see the library's calls and
# the first check proves nothing.  glibc runs too, for comparison.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 60 -o '^start: clock_gettime=0 sched_getaffinity=0 getrlimit=0$' \
  -o '^thread: clock_gettime=[1-9]' \
  "smpalloc (LD_PRELOAD): no clock, affinity or rlimit wrapper at start-up" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
glibc_run 60
finish
