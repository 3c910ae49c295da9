#!/usr/bin/env bash
# t_cancel: threads cancelled (deferred) in the middle of allocation work,
# at nanosleep/read/pthread_testcancel between allocations or blocked in
# read(), with cleanup handlers that verify and free the blocks they hold
# (tests/trust/cancel.c).  Afterwards every block was freed, fresh threads
# and main allocate normally, smp_collect() works and the bytes in use are
# back (the cancelled threads' caches were given back by the key
# destructor).  Runs under LD_PRELOAD (plain and checked mode) and with the
# smp_* names; `timeout 120` bounds a deadlock.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
for f in build/tests/cancel build/tests/cancel_prefix "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
if [ "${TRUST_LONG:-0}" = 1 ]; then args=(1000 6); else args=(150 4); fi
fails=0
run() { # label, command...
  local label=$1; shift
  echo "== $label: $*"
  local out rc
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | tail -n 20
  if [ $rc -eq 124 ]; then echo "FAIL: $label: no progress within 120 s (deadlock?)"; fails=$((fails + 1))
  elif [ $rc -ne 0 ] || ! grep -q ': ok:' <<<"$out"; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); fi
}
run "preload" env LD_PRELOAD="$LIB" build/tests/cancel "${args[@]}"
run "preload, checked mode" env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" build/tests/cancel "${args[@]}"
run "smp_* names" build/tests/cancel_prefix "${args[@]}"
echo "t_cancel: $fails failed"
[ $fails -eq 0 ]
