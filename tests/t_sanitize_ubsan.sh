#!/usr/bin/env bash
# t_sanitize_ubsan: UndefinedBehaviorSanitizer builds (-fsanitize=undefined
# -fno-sanitize-recover=all) of the API suite and the stress test with the
# allocator sources instrumented.  Any runtime error fails the test.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/..}" || exit 2
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
fails=0
for f in build/tests/stress_ubsan build/tests/api_ubsan; do
  [ -x "$f" ] || { echo "FAIL: $f is missing (make test-bins)"; exit 1; }
done
run() { # label, command...
  local label=$1; shift
  echo "== $label: $*"
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | tail -n 60
  if [ $rc -ne 0 ]; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); return; fi
  if grep -q 'runtime error' <<<"$out"; then
    echo "FAIL: $label: UBSan report"; fails=$((fails + 1))
  fi
}
run api-ubsan build/tests/api_ubsan
run stress-ubsan build/tests/stress_ubsan 4 3000 77 3
echo "t_sanitize_ubsan: $fails failed"
[ $fails -eq 0 ]
