#!/usr/bin/env bash
# t_mem_large_reuse: blocks mapped alone (here under `ulimit -v 4 GiB`, which
# turns the arenas off): the large-block cache reuses resident pages: a
# freed 24 MiB block serves 8 and 12 MiB requests (split, its tail cached)
# with almost no page faults, and a 20 MiB request grows the longest cached
# block by moving its pages (tests/mem/mem_large_reuse.c says the bounds);
# blocks past the arenas (over 32 MiB) each start a 1 GiB region of their
# own, and under a `ulimit -v` (1 GiB) too tight for that blocks are still
# handed out.  The purge delay is raised so that nothing expires between
# the steps.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run -v $((4 * 1024 * 1024)) "smpalloc, cache (ulimit -v 4 GiB)" env SMPALLOC_PURGE_DELAY_MS=10000 LD_PRELOAD="$LIB" "$BIN" cache
check_run "smpalloc, alone" env LD_PRELOAD="$LIB" "$BIN" alone
check_run -v $((1024 * 1024)) "smpalloc, ulimit -v 1 GiB" env LD_PRELOAD="$LIB" "$BIN" small
finish
