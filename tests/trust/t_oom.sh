#!/usr/bin/env bash
# t_oom: out of memory under a virtual-memory limit (ulimit -v 200 MiB):
# tests/trust/oom.c allocates a mix of small and large blocks until malloc
# returns NULL (errno ENOMEM), checks calloc/realloc/aligned_alloc/
# posix_memalign fail cleanly at the limit, frees everything and must then
# allocate normally again: one block of 3/4 of what the first round got
# (memory the allocator keeps cached must go back to the kernel when mmap
# fails), a 32 MiB block, and filling up again reaches 3/4 of the first
# round.  Run with LD_PRELOAD and with the static link.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
LIMIT_KB=${OOM_LIMIT_KB:-204800}
fails=0
for f in build/tests/oom build/tests/oom_static "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
run() { # label, command...
  local label=$1; shift
  echo "== $label (ulimit -v $LIMIT_KB): $*"
  local out rc
  out=$(ulimit -v "$LIMIT_KB" && "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out"
  if [ $rc -ne 0 ] || ! grep -qx 'oom: ok' <<<"$out"; then
    echo "FAIL: $label (exit $rc)"; fails=$((fails + 1))
  fi
}
run preload env LD_PRELOAD="$LIB" build/tests/oom 3
run static build/tests/oom_static 3
echo "t_oom: $fails failed"
[ $fails -eq 0 ]
