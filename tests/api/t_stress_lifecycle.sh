#!/usr/bin/env bash
# t_stress_lifecycle: allocation across fork and thread exit, under
# LD_PRELOAD=build/libsmpalloc.so and linked with build/libsmpalloc.a
# (tests/api/stress_lifecycle.c):
#   fork: the main thread forks 30 times while 4 threads allocate; every
#         child must allocate, realloc and free (no lock left held) and exit 0;
#   tsd:  pthread_key destructors free and allocate while threads exit.
# A run that hangs (a deadlocked child, say) is killed after 120 s and fails.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" "${BIN}_static" "$LIB"
check_run -t 120 -o '^fork: ok' preload-fork env LD_PRELOAD="$LIB" "$BIN" fork 30
check_run -t 120 -o '^tsd: ok' preload-tsd env LD_PRELOAD="$LIB" "$BIN" tsd 20
check_run -t 120 -o '^fork: ok' static-fork "${BIN}_static" fork 30
check_run -t 120 -o '^tsd: ok' static-tsd "${BIN}_static" tsd 20
finish
