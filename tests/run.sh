#!/usr/bin/env bash
# The test runner: runs every tests/t_*.sh (in name order) from the
# repository root.  A test passes with exit 0, is skipped with exit 77 and
# fails otherwise.  The last line is "N passed, N failed[, N skipped]".
# TESTS="t_api t_stress" limits the run to those names.
cd "$(dirname "$0")/.." || exit 2
export SMP_ROOT=$PWD
mkdir -p build/test-logs
pass=0 fail=0 skip=0 failed=()
for t in tests/t_*.sh; do
  name=$(basename "$t" .sh)
  if [ -n "${TESTS:-}" ] && ! [[ " $TESTS " == *" $name "* ]]; then continue; fi
  log=build/test-logs/$name.log
  start=$(date +%s)
  bash "$t" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  case $rc in
    0)  pass=$((pass + 1)); printf 'PASS  %-28s %4ss\n' "$name" "$secs" ;;
    77) skip=$((skip + 1)); printf 'SKIP  %-28s %4ss  %s\n' "$name" "$secs" "$(tail -n 1 "$log")" ;;
    *)  fail=$((fail + 1)); failed+=("$name")
        printf 'FAIL  %-28s %4ss  (exit %d, log %s)\n' "$name" "$secs" "$rc" "$log"
        tail -n 15 "$log" | sed 's/^/      | /' ;;
  esac
done
if [ "$skip" -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
