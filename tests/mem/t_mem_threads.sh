#!/usr/bin/env bash
# t_mem_threads: 1,000 threads alive at once (tests/mem/mem_threads.c), each
# doing 5,000 operations: allocate (1 B..256 KiB, mostly small, a few large)
# and fill with a per-block pattern, verify every byte and free, or hand a
# block to another thread through a mailbox.  Every block must hold its
# pattern when freed and every allocated block must be verified once.
# Runs under LD_PRELOAD=build/libsmpalloc.so with the defaults, with
# SMPALLOC_SLOTS=1 (1,000 threads on one slot: the sleeping path) and with
# SMPALLOC_CHECKED=1; then under glibc (the reference: must pass too).
# MEM_CONTROLS=1 also runs the negative control (--corrupt: one byte of one
# block is changed after filling), which must fail.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_threads
ulimit -c 0
fails=0
run() { # label, command...
  local label=$1; shift
  echo "== $label"
  timeout 300 "$@"
  local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); fi
}
run "smpalloc" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc
run "smpalloc, SMPALLOC_SLOTS=1" env LD_PRELOAD="$LIB" SMPALLOC_SLOTS=1 "$BIN" --expect smpalloc
run "smpalloc, SMPALLOC_CHECKED=1" env LD_PRELOAD="$LIB" SMPALLOC_CHECKED=1 "$BIN" --expect smpalloc
run "glibc (reference)" "$BIN" --expect glibc
if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: one corrupted byte must be caught"
  if timeout 300 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --corrupt; then
    echo "FAIL: control passed: the test does not see a changed byte"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi
[ "$fails" -eq 0 ] || { echo "t_mem_threads: $fails failed"; exit 1; }
echo "t_mem_threads: passed"
