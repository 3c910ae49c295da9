#!/usr/bin/env bash
# t_mem_classes: for every request size 1..1 MiB the block malloc gives is
# big enough, aligned (16 for multiples of 16, else 8) and wastes no more
# than the class table promises: n <= 8 costs 8 bytes, n <= 128 wastes at
# most 15 bytes, a block of 129 B..4 KiB at most 12.5 % of itself, a block
# above 4 KiB has the least share of its 64 KiB slab that a 64-byte multiple
# holding n could have (the fitted classes), over 21824 bytes (two to a
# slab) less than 4 KiB more than n (the classes of 24, 28 and 32 KiB), and a block
# mapped alone (n > 32 KiB, 64 KiB granules) less than 64 KiB; the whole
# usable size of neighbouring blocks is written and read back.  Then
# aligned_alloc for alignments 8 B..32 KiB (and 64 KiB, 1 MiB) with sizes
# around them.  tests/mem/mem_classes.c, under LD_PRELOAD=build/libsmpalloc.so,
# using only public names (malloc_usable_size).  MEM_CONTROLS=1 also runs the
# negative control: a tighter bound (10 %) that the table cannot meet must
# fail.  Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 300 "smpalloc (LD_PRELOAD): block sizes and alignment" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
control "bound 10 % (the table's worst is 1/9)" "the waste check is not applied" \
  timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --waste-permille 100
finish
