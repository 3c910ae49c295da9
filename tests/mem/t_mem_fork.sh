#!/usr/bin/env bash
# t_mem_fork: fork while 8 threads allocate, 200 times (tests/mem/mem_fork.c).
# Every child frees the blocks it inherited, allocates, verifies and frees
# small and large blocks (also from a thread of its own) and must exit 0; the
# parent checks each exit status and that every worker thread takes a step
# after each fork.  A deadlock must fail, not hang: a child hung for 60 s
# dies of its alarm (reported as a failed child), and the whole program runs
# under `timeout 120` (a bound for a hang, not a performance limit).
# Under LD_PRELOAD=build/libsmpalloc.so (and 50 forks with SMPALLOC_CHECKED=1);
# glibc runs 50 forks as a check of the program itself.  MEM_CONTROLS=1 also runs the negative control
# (--hang-child: children blocked on a lock held at fork), which must fail.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
ulimit -c 0
run() { check_run -t 120 "$@"; }
run "smpalloc, 200 forks" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --forks 200
# Checked mode caches nothing per thread: every call takes a lock, so a fork
# often finds one held (a library without its fork handlers hangs here).
run "smpalloc, SMPALLOC_CHECKED=1, 50 forks" env LD_PRELOAD="$LIB" SMPALLOC_CHECKED=1 "$BIN" --expect smpalloc --forks 50
run "glibc (reference), 50 forks" "$BIN" --expect glibc --forks 50
control "children blocked on a lock held at fork" "a hung child goes unnoticed" \
  timeout -k 5 120 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --forks 20 --hang-child --child-alarm 2
finish
