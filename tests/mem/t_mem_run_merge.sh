#!/usr/bin/env bash
# t_mem_run_merge: freed large blocks of up to 1 MiB merge with the free
# room next to them, a run grows in place into it, and freed one-granule
# neighbours serve a longer run (docs/design.md, "Large blocks"): tests/mem/mem_run_merge.c under
# LD_PRELOAD=build/libsmpalloc.so (its checks are listed there).
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 60 "smpalloc (LD_PRELOAD)" env LD_PRELOAD="$LIB" "$BIN" smpalloc
finish
