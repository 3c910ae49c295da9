#!/usr/bin/env bash
# t_signal: allocation under a storm of signals (tests/trust/signal.c):
# worker threads allocate, resize, verify and free (handing blocks across
# threads) while SIGALRM/SIGPROF interval timers (100 us) fire and a thread
# pthread_kill()s every worker with SIGUSR1 in a loop.  The handlers only
# count (malloc is not async-signal-safe) and are installed without
# SA_RESTART, so the allocator's futex waits see EINTR.  Each worker goes on
# until it has taken its share of signals; every block is verified, errno
# is checked after every successful call.  Runs: libc names under
# LD_PRELOAD; the same with SMPALLOC_SLOTS=1 (every thread on one slot:
# lock waits are interrupted); checked mode; the smp_* build.  `timeout 120`
# bounds a deadlock (exit 124 fails).
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
for f in build/tests/signal build/tests/signal_prefix "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
if [ "${TRUST_LONG:-0}" = 1 ]; then args=(8 200000 5000); else args=(4 25000 600); fi
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
run "preload" env LD_PRELOAD="$LIB" build/tests/signal "${args[@]}"
run "preload, one slot" env SMPALLOC_SLOTS=1 LD_PRELOAD="$LIB" build/tests/signal "${args[@]}"
run "preload, checked mode" env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" build/tests/signal "${args[@]}"
run "smp_* names, one slot" env SMPALLOC_SLOTS=1 build/tests/signal_prefix "${args[@]}"
echo "t_signal: $fails failed"
[ $fails -eq 0 ]
