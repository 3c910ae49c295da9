#!/usr/bin/env bash
# t_mem_run_places: large blocks of 32 KiB-1 MiB replaced at random go back
# to the places blocks of their length were freed from, so writing their
# first and last bytes touches few new pages (docs/design.md, "Large
# blocks"): tests/mem/mem_run_places.c under LD_PRELOAD=build/libsmpalloc.so
# (its checks and figures are listed there); glibc runs too, not asserted.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 120 "smpalloc (LD_PRELOAD)" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
glibc_run 120
finish
