#!/usr/bin/env bash
# t_mem_startup: smpalloc's start-up calls none of the libc wrappers that a
# program which never calls them would pay resident memory for (a first call
# maps the function's page of libc and, by the kernel's fault-around, up to
# 15 more: 64 KiB), reads no clock and registers no fork handlers while the
# process has one thread: tests/mem/mem_startup.c defines clock_gettime,
# sched_getaffinity, getrlimit and __register_atfork itself, counts the
# calls made while it starts and mallocs once (all four must be 0 under
# LD_PRELOAD=build/libsmpalloc.so; before, smpalloc made 1, 2, 1 and 1),
# then starts a thread that mallocs: smpalloc reads the clock for it (the
# CPU count is re-read at most once a second, from the second thread on)
# and registers its fork handlers, exactly once - so the counts must grow,
# or the counting does not see the library's calls and the first check
# proves nothing.  With --race 16, sixteen threads start together and
# malloc at once: the handlers must be registered exactly once, and no
# thread may hang waiting for them (in practice the first pthread_create
# registers them: its thread-local storage is the first calloc made with a
# second thread).  (t_mem_fork checks that forks with threads stay safe.)
# glibc runs too, for comparison.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 60 -o '^start: clock_gettime=0 sched_getaffinity=0 getrlimit=0 atfork=0$' \
  -o '^thread: clock_gettime=[1-9][0-9]* atfork=1$' \
  "smpalloc (LD_PRELOAD): no clock, affinity, rlimit or atfork call at start-up" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
check_run -t 60 -o '^race: threads=16 atfork=1$' \
  "smpalloc (LD_PRELOAD): 16 threads at once register the fork handlers once" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --race 16
glibc_run 60
finish
