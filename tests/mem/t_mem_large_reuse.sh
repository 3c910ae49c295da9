#!/usr/bin/env bash
# t_mem_large_reuse: the large-block cache reuses resident pages: a freed
# 24 MiB block serves 8 and 12 MiB requests (split, its tail cached) with
# almost no page faults, and a 20 MiB request grows the longest cached
# block by moving its pages (tests/mem/mem_large_reuse.c says the bounds);
# blocks of more than 2 MiB each start a 1 GiB region of their own, and
# under a `ulimit -v` (1 GiB) too tight for that they are still handed out.
# The purge delay is raised so that nothing expires between the steps.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
check_run "smpalloc" env SMPALLOC_PURGE_DELAY_MS=10000 LD_PRELOAD="$LIB" "$BIN"
check_run -v $((1024 * 1024)) "smpalloc, ulimit -v 1 GiB" env LD_PRELOAD="$LIB" "$BIN" small
finish
