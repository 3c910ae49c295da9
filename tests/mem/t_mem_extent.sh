#!/usr/bin/env bash
# t_mem_extent: blocks of over 1 MiB and up to 32 MiB come from arenas,
# best fit; freed neighbours coalesce, a freed block serves the next one
# with its pages, realloc grows into a free neighbour and shrinks in place
# (tests/mem/mem_extent.c, its checks listed there), under
# LD_PRELOAD=build/libsmpalloc.so.  Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -t 60 "smpalloc (LD_PRELOAD)" env LD_PRELOAD="$LIB" "$BIN" smpalloc
finish
