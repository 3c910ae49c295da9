#!/usr/bin/env bash
# t_mem_fork: fork while 8 threads allocate, 200 times (tests/mem/mem_fork.c).
# Every child frees the blocks it inherited, allocates, verifies and frees
# small and large blocks (also from a thread of its own) and must exit 0; the
# parent checks each exit status and that every worker thread takes a step
# after each fork.  A deadlock must fail, not hang: a child hung for 60 s
# dies of its alarm (reported as a failed child), and the whole program runs
# under `timeout 120` (a bound for a hang, not a performance limit).
# Under LD_PRELOAD=build/libsmpalloc.so (and 50 forks with SMPALLOC_CHECKED=1);
# glibc runs 50 forks as a check of the program itself.  MEM_CONTROLS=1 also runs the negative control
# (--hang-child: children blocked on a lock held at fork), which must fail.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
set -u
# shellcheck source-path=SCRIPTDIR source=mem_lib.sh
. "$(dirname "$0")/mem_lib.sh" || exit 2
mem_setup mem_fork
ulimit -c 0
fails=0
run() { # label, command...
  local label=$1; shift
  echo "== $label"
  timeout -k 5 120 "$@"
  local rc=$?
  case $rc in
    0) ;;
    124|137) echo "FAIL: $label: still running after 120 s: a deadlock"; fails=$((fails + 1)) ;;
    *) echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)) ;;
  esac
}
run "smpalloc, 200 forks" env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --forks 200
# Checked mode caches nothing per thread: every call takes a lock, so a fork
# often finds one held (a library without its fork handlers hangs here).
run "smpalloc, SMPALLOC_CHECKED=1, 50 forks" env LD_PRELOAD="$LIB" SMPALLOC_CHECKED=1 "$BIN" --expect smpalloc --forks 50
run "glibc (reference), 50 forks" "$BIN" --expect glibc --forks 50
if [ "${MEM_CONTROLS:-0}" = 1 ]; then
  echo "== control: children blocked on a lock held at fork must fail the test"
  if timeout -k 5 120 env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc --forks 20 --hang-child --child-alarm 2; then
    echo "FAIL: control passed: a hung child goes unnoticed"; fails=$((fails + 1))
  else
    echo "ok: control fails as it must"
  fi
fi
[ "$fails" -eq 0 ] || { echo "t_mem_fork: $fails failed"; exit 1; }
echo "t_mem_fork: passed"
