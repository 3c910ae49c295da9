#!/usr/bin/env bash
# t_stress_lifecycle: allocation across fork and thread exit, under
# LD_PRELOAD=build/libsmpalloc.so and linked with build/libsmpalloc.a
# (tests/api/stress_lifecycle.c):
#   fork: the main thread forks 30 times while 4 threads allocate; every
#         child must allocate, realloc and free (no lock left held) and exit 0;
#   tsd:  pthread_key destructors free and allocate while threads exit.
# A run that hangs (a deadlocked child, say) is killed after 120 s and fails.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
fails=0
for f in build/tests/stress_lifecycle build/tests/stress_lifecycle_static "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
run() { # label, want, command...
  local label=$1 want=$2; shift 2
  echo "== $label: $*"
  local out rc
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ $rc -ne 0 ] || ! grep -q "^$want: ok" <<<"$out"; then
    echo "FAIL: $label (exit $rc)"; fails=$((fails + 1))
  fi
}
run preload-fork fork env LD_PRELOAD="$LIB" build/tests/stress_lifecycle fork 30
run preload-tsd tsd env LD_PRELOAD="$LIB" build/tests/stress_lifecycle tsd 20
run static-fork fork build/tests/stress_lifecycle_static fork 30
run static-tsd tsd build/tests/stress_lifecycle_static tsd 20
echo "t_stress_lifecycle: $fails failed"
[ $fails -eq 0 ]
