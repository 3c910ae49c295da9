#!/usr/bin/env bash
# t_mem_prodcons: a producer/consumer pair stays bounded.
# tests/mem/mem_prodcons.c passes 20 million blocks of 16..256 bytes from one
# thread to another through a 1024-entry ring; the consumer keeps a 16 MiB
# live set (random replacement, so frees come out of allocation order) and
# frees the rest.
# Under LD_PRELOAD=build/libsmpalloc.so the peak RSS (VmHWM) must stay within
# 64 MiB (4 x the live set) of the RSS at start, and within 1.25x the
# largest live set (1.14-1.15x; the version before 1.27x, its slabs in huge
# pages filled in part once the heap passed 16 MiB; glibc 1.15x).  The same program runs under
# glibc for comparison (not asserted).  MEM_BLOCKS=N changes the count.
# MEM_CONTROLS=1 also runs the negative control (--leak-every 4: a quarter of
# the replaced blocks are never freed), which must FAIL the bound.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
N=${MEM_BLOCKS:-20000000}

check_run -t 600 "smpalloc (LD_PRELOAD): $N blocks, peak RSS within 64 MiB and 1.25x the live set of the baseline" \
  env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64 --max-ratio 1.25
glibc_run 600 --blocks "$N"
control "a quarter of the replaced blocks never freed" "the test cannot see unbounded growth" \
  timeout 600 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --blocks "$N" --max-growth-mib 64 --max-ratio 1.25 --leak-every 4
finish
