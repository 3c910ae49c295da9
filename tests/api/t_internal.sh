#!/usr/bin/env bash
# t_internal: exhaustive checks of the size-class table, the size -> class
# lookup and the one-multiply block-start test, slot_join, the thread
# cache's rows with 4 slots and the pages a thread touches of its cache,
# which emptied slabs go back to the pool, and
# how blocks freed by another slot's thread go home (tests/api/internal.c,
# built with the core sources so it sees the internal header).
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN"
# Sampling off: the checks count every block that goes back to its slab,
# and a profiled sample lives in the profiler's pool instead (src/prof.h).
check_run internal env SMPALLOC_SLOTS=4 SMPALLOC_PROF_SAMPLE=0 "$BIN"
finish
