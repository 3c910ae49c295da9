#!/usr/bin/env bash
# t_stress_preload: the multi-threaded stress test (tests/api/stress.c) under
# LD_PRELOAD=build/libsmpalloc.so: 8 threads (more than the cores) in 4
# rounds, then 200 threads at once; and the prefixed build (smp_* names,
# library sources compiled in) with 8 threads.  Each run must report
# "allocator=smpalloc" and end "ok".
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
fails=0
for f in build/tests/stress build/tests/stress_prefix "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
run() { # label, command...
  local label=$1; shift
  echo "== $label: $*"
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ $rc -ne 0 ]; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); return; fi
  if ! grep -q 'allocator=smpalloc ' <<<"$out"; then
    echo "FAIL: $label: smpalloc was not the allocator"; fails=$((fails + 1)); return
  fi
  grep -q ': ok: ' <<<"$out" || { echo "FAIL: $label: no ok line"; fails=$((fails + 1)); }
}
#                                              threads iters seed rounds
run preload-8   env LD_PRELOAD="$LIB" build/tests/stress 8 4000 42 4
run preload-200 env LD_PRELOAD="$LIB" build/tests/stress 200 300 7 2
run prefixed-8  build/tests/stress_prefix 8 3000 1234 3
echo "t_stress_preload: $fails failed"
[ $fails -eq 0 ]
