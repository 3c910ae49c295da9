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
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
LIMIT_KB=${FAULT_LIMIT_KB:-307200}
scale=1 tscale=1 threads=2
[ "${TRUST_LONG:-0}" = 1 ] && scale=3 tscale=2 threads=3
for f in build/tests/fault build/tests/fault_plain "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
fails=0
run() { # label, command...
  local label=$1; shift
  echo "== $label: $*"
  local out rc
  out=$(timeout 600 "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | tail -n 20
  [ $rc -eq 124 ] && echo "FAIL: $label: no progress within 600 s (a lock left held on a failure path?)"
  if [ $rc -ne 0 ] || ! grep -q '^fault: ok' <<<"$out"; then
    echo "FAIL: $label (exit $rc)"; fails=$((fails + 1))
  fi
}
run "injected map failures, every point" build/tests/fault sweep "$scale"
run "injected map failures, every point, $threads threads at once" \
  env FAULT_THREADS="$threads" build/tests/fault sweep "$tscale"
run "preload, ulimit -v $LIMIT_KB" bash -c 'ulimit -v "$1" && exec env LD_PRELOAD="$2" "$3" ulimit' _ \
  "$LIMIT_KB" "$LIB" build/tests/fault_plain
echo "t_fault: $fails failed"
[ $fails -eq 0 ]
