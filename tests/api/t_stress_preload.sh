#!/usr/bin/env bash
# t_stress_preload: the multi-threaded stress test (tests/api/stress.c) under
# LD_PRELOAD=build/libsmpalloc.so: 8 threads (more than the cores) in 4
# rounds, then 200 threads at once, and 8 threads under `ulimit -v` (the
# two-level page map); and the prefixed build (smp_* names, library
# sources compiled in) with 8 threads.  Each run must report
# "allocator=smpalloc" and end "ok".
. "$(dirname "$0")/../lib.sh" || exit 2
S=build/tests/stress
need "$S" "${S}_prefix" "$LIB"
run() { check_run -o 'allocator=smpalloc ' -o ': ok: ' "$@"; }
#                                           threads iters seed rounds
run preload-8   env LD_PRELOAD="$LIB" "$S"  8       4000  42   4
run preload-200 env LD_PRELOAD="$LIB" "$S"  200     300   7    2
run prefixed-8  "${S}_prefix"               8       3000  1234 3
# Under an address-space limit: the two-level page map (no flat map).
run two-level-8 bash -c 'ulimit -v 1073741824 && exec "$@"' - env LD_PRELOAD="$LIB" "$S" 8 3000 5 2
finish
