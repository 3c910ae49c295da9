#!/usr/bin/env bash
# t_mem_fork: fork while 8 threads allocate, 200 times (tests/mem/mem_fork.c).
# Every child frees the blocks it inherited, allocates, verifies and frees
# small and large blocks (also from a thread of its own) and must exit 0; the
# parent checks each exit status and that every worker thread takes a step
# after each fork.  A deadlock must fail, not hang: a child hung for 60 s
# dies of its alarm (reported as a failed child), and the whole program runs
# under `timeout 120` (a bound for a hang, not a performance limit).
# Under LD_PRELOAD=build/libsmpalloc.so (and 50 forks with SMPALLOC_CHECKED=1);
# glibc runs 50 forks as a check of the program itself.
# A fork must not make the memory of every possible slot resident (the fork
# handlers lock the slots that were ever in use, not all 128: locking all
# grew the parent's anonymous memory by 136 KiB, glibc's grows by 0): at
# most 32 KiB more after one fork of a program that allocated once from each
# of two threads (--fork-rss; with a second thread the handlers are
# registered, lock.h), with the default slots and with SMPALLOC_SLOTS=2.
# MEM_CONTROLS=1 also runs the negative controls, which must fail:
# --hang-child (children blocked on a lock held at fork) and --fork-rss with
# SMPALLOC_SLOTS=128 (every slot in use).
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
run "smpalloc, one fork: at most 32 KiB more anonymous memory" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --fork-rss 32
run "smpalloc, SMPALLOC_SLOTS=2, one fork: at most 32 KiB more" env LD_PRELOAD="$LIB" SMPALLOC_SLOTS=2 "$BIN" --expect smpalloc --fork-rss 32
control "SMPALLOC_SLOTS=128: every slot in use" "the test cannot see a fork touching every slot" \
  env LD_PRELOAD="$LIB" SMPALLOC_SLOTS=128 "$BIN" --expect smpalloc --fork-rss 32
control "children blocked on a lock held at fork" "a hung child goes unnoticed" \
  timeout -k 5 120 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --forks 20 --hang-child --child-alarm 2
finish
