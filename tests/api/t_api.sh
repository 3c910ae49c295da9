#!/usr/bin/env bash
# t_api: the API conformance suite (tests/api/api.c) three ways:
#   1. plain names against glibc (the reference: checks the suite itself),
#   2. plain names under LD_PRELOAD=build/libsmpalloc.so (must detect smpalloc),
#   3. the smp_* names compiled with the library sources (api_prefix).
# SMP_LIB=path runs step 2 against another preloadable library.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
fails=0
run() { # label, command...
  local label=$1; shift
  echo "== $label: $*"
  "$@"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); fi
}
for f in build/tests/api build/tests/api_prefix "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
run glibc build/tests/api --expect=glibc
run preload env LD_PRELOAD="$LIB" build/tests/api --expect=smpalloc
run prefixed build/tests/api_prefix
echo "t_api: $fails failed"
[ $fails -eq 0 ]
