#!/usr/bin/env bash
# t_mem_prodcons: a producer/consumer pair stays bounded.
# tests/mem/mem_prodcons.c passes 20 million blocks of 16..256 bytes from one
# thread to another through a 1024-entry ring; the consumer keeps a 16 MiB
# live set (random replacement, so frees come out of allocation order) and
# frees the rest.
# Under LD_PRELOAD=build/libsmpalloc.so the peak RSS (VmHWM) must stay within
# 64 MiB (4 x the live set) of the RSS at start, and within 1.20x the
# largest live set (the issue's bound is 1.25x; here 1.14-1.15x; the version
# before 1.245-1.256x in three runs, its slabs in huge pages filled in part
# once the heap passed 16 MiB; glibc 1.15x).  The ratio
# depends on how the two threads are scheduled: with the CPUs busy (three
# spinning processes beside it) 2 runs of 5 read 1.37-1.45x, with or without
# huge pages; so the bounds hold if one of three runs meets them (a library
# that holds more in every run fails all three).  The same program runs under
# glibc for comparison (not asserted).  MEM_BLOCKS=N changes the count.
# MEM_CONTROLS=1 also runs the negative control (--leak-every 4: a quarter of
# the replaced blocks are never freed), which must FAIL the bound.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
N=${MEM_BLOCKS:-20000000}

met=
for attempt in 1 2 3; do
  out=$(timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64 --max-ratio 1.20 2>&1)
  rc=$?
  echo "$out"
  [ "$rc" = 0 ] && { met=$attempt; break; }
  echo "(run $attempt of 3: exit $rc)"
done
[ -n "$met" ] && ok "smpalloc (LD_PRELOAD): $N blocks, peak RSS within 64 MiB and 1.20x the live set of the baseline (run $met of 3)" \
  || fail "smpalloc (LD_PRELOAD): $N blocks, peak RSS over 64 MiB or 1.20x the live set in 3 runs of 3"
glibc_run 600 --blocks "$N"
control "a quarter of the replaced blocks never freed" "the test cannot see unbounded growth" \
  timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64 --max-ratio 1.20 --leak-every 4
finish
