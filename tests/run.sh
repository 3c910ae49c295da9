#!/usr/bin/env bash
# The test runner: runs every tests/KIND/t_*.sh from the repository root, in
# the order of the test names (the scripts' basenames, whatever their
# folder).  A test passes with exit 0, is skipped with exit 77 and fails
# otherwise.  The last line is "N passed, N failed[, N skipped]".
# TESTS="t_api t_stress_preload" limits the run to those names.
#
# First it builds the library, the tools and every test program
# (make all test-bins), so it works after a plain `make` too; under `make
# test` that finds everything up to date.
cd "$(dirname "$0")/.." || exit 2
export SMP_ROOT=$PWD

# Not the parent make's jobserver (make test runs us): a make of our own.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -j"$(nproc)" all test-bins; then
  echo "tests/run.sh: make all test-bins failed"
  exit 2
fi

# "NAME PATH" lines, sorted by name; two scripts with one name are an error.
list=$(for t in tests/*/t_*.sh; do echo "$(basename "$t" .sh) $t"; done | sort)
dups=$(cut -d' ' -f1 <<<"$list" | uniq -d)
if [ -n "$dups" ]; then
  echo "tests/run.sh: two scripts share a test name:" $dups
  exit 2
fi
for name in ${TESTS:-}; do
  grep -q "^$name " <<<"$list" || echo "tests/run.sh: note: no test named $name"
done

mkdir -p build/test-logs
pass=0 fail=0 skip=0
mapfile -t entries <<<"$list"
for entry in "${entries[@]}"; do
  name=${entry%% *} t=${entry#* }
  if [ -n "${TESTS:-}" ] && ! [[ " $TESTS " == *" $name "* ]]; then continue; fi
  log=build/test-logs/$name.log
  start=$(date +%s)
  bash "$t" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  case $rc in
    0)  pass=$((pass + 1)); printf 'PASS  %-28s %4ss\n' "$name" "$secs" ;;
    77) skip=$((skip + 1)); printf 'SKIP  %-28s %4ss  %s\n' "$name" "$secs" "$(tail -n 1 "$log")" ;;
    *)  fail=$((fail + 1))
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
