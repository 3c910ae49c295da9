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
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" "${BIN}_prefix" "$LIB"
if [ "${TRUST_LONG:-0}" = 1 ]; then args=(8 200000 5000); else args=(4 25000 600); fi
run() { check_run -t 120 -n 20 -o ': ok:' "$@"; }
run "preload" env LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "preload, one slot" env SMPALLOC_SLOTS=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "preload, checked mode" env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "smp_* names, one slot" env SMPALLOC_SLOTS=1 "${BIN}_prefix" "${args[@]}"
finish
