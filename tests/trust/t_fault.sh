#!/usr/bin/env bash
# t_fault: out of memory at every point of a mixed workload.
#   1. build/tests/fault (-DSMP_FAULT_INJECTION, smp_* names) measures
#      the kernel maps its workload needs (M), then for every N = 0..M+2 a
#      fresh child lets N maps succeed and fails every later mmap/mremap-grow:
#      each call must succeed or return NULL with ENOMEM, never fail before
#      the injected fault, and leave every live block intact; with the
#      countdown back at -1 everything must work again (see fault.c).
#      The same again with the workload in 2 threads at once (3 with
#      TRUST_LONG=1): failure paths taken concurrently, a lock left held
#      shows as a hang.
#   2. build/tests/fault_plain under LD_PRELOAD and ulimit -v
#      (FAULT_LIMIT_KB, 300 MiB): the same workload plus hoarded blocks
#      until the kernel refuses, same checks, then recovery.
# TRUST_LONG=1: a workload three times as big (about three times the maps),
# twice as big in the threaded sweep.
# `timeout 600` bounds a hang (a lock left held on a failure path).
. "$(dirname "$0")/../lib.sh" || exit 2
LIMIT_KB=${FAULT_LIMIT_KB:-307200}
scale=1 tscale=1 threads=2
[ "${TRUST_LONG:-0}" = 1 ] && scale=3 tscale=2 threads=3
need "$BIN" "${BIN}_plain" "$LIB"
run() { check_run -t 600 -n 20 -o '^fault: ok' "$@"; }
run "injected map failures, every point" "$BIN" sweep "$scale"
run "injected map failures, every point, $threads threads at once" \
  env FAULT_THREADS="$threads" "$BIN" sweep "$tscale"
run -v "$LIMIT_KB" "preload, ulimit -v $LIMIT_KB" env LD_PRELOAD="$LIB" "${BIN}_plain" ulimit
finish
