#!/usr/bin/env bash
# t_oom: out of memory under a virtual-memory limit (ulimit -v 200 MiB):
# tests/trust/oom.c allocates a mix of small and large blocks until malloc
# returns NULL (errno ENOMEM), checks calloc/realloc/aligned_alloc/
# posix_memalign fail cleanly at the limit, frees everything and must then
# allocate normally again: one block of 3/4 of what the first round got
# (memory the allocator keeps cached must go back to the kernel when mmap
# fails), a 32 MiB block, and filling up again reaches 3/4 of the first
# round.  Run with LD_PRELOAD and with the static link.
. "$(dirname "$0")/../lib.sh" || exit 2
LIMIT_KB=${OOM_LIMIT_KB:-204800}
need "$BIN" "${BIN}_static" "$LIB"
run() { local label=$1; shift; check_run -v "$LIMIT_KB" -o '^oom: ok$' "$label (ulimit -v $LIMIT_KB)" "$@"; }
run preload env LD_PRELOAD="$LIB" "$BIN" 3
run static "${BIN}_static" 3
finish
