#!/usr/bin/env bash
# t_sighandler: signal handlers that allocate (tests/trust/sighandler.c).
# Each worker thread has a 100 us timer whose SIGALRM handler, on that
# thread, runs malloc, calloc, realloc, aligned_alloc and free of small and
# large blocks (to 3 MiB), or keeps a run (40-440 KB) for the next run to
# free (a small block kept so hits the known limit of the fast paths:
# docs/design.md, "Signal handlers"; `sighandler 2 600 1` shows it), while
# the thread allocates, resizes, verifies and frees blocks of 16 B to 4 MiB.
# The handler often lands inside a slow path that holds a lock (a slot's,
# the pool's, the large-block cache's: the reported hang); such calls must
# be served aside and their frees put off (src/reentry.h), never wait.  Runs
# until every thread's handler ran its share (no timing); `timeout 120`
# bounds a hang (exit 124 fails).  Runs: libc names under LD_PRELOAD, one
# slot, checked mode, the smp_* build; the statistics must show calls served
# aside (else the handlers never landed inside a slow path: the test would
# prove nothing) and none refused.
# Then the backstop (tests/trust/relock.c): a lock taken again by its own
# thread, from a signal handler, aborts with one line naming it, with one
# thread and with two, never hangs.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" "${BIN}_prefix" "$LIB" "$ROOT/build/tests/relock"
if [ "${TRUST_LONG:-0}" = 1 ]; then args=(4 5000); else args=(2 600); fi
served() {
  local line
  line=$(grep -E '^  re-entered ' <<<"$OUT")
  read -r aside refused < <(sed -n 's/^ *re-entered *\([0-9]*\) blocks mapped aside, [0-9]* frees put off, \([0-9]*\) refused$/\1 \2/p' <<<"$line")
  if [ -z "$aside" ]; then fail "$1: no calls served aside in the statistics ('$line')"
  elif [ "$refused" -ne 0 ]; then fail "$1: $refused calls refused ('$line')"
  else ok "$1: $line"; fi
}
run() { check_run -t 120 -n 3 -o ': ok:' "$@"; }
run "preload" env SMPALLOC_STATS=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}" && served preload
run "preload, one slot" env SMPALLOC_STATS=1 SMPALLOC_SLOTS=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}" && served "one slot"
run "preload, checked mode" env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "smp_* names, one slot" env SMPALLOC_SLOTS=1 "${BIN}_prefix" "${args[@]}"

for threads in 0 1; do
  if expect_abort 'malloc\(' 're-entered' '0[xX][0-9a-fA-F]+' timeout -k 5 30 "$ROOT/build/tests/relock" "$threads"; then
    ok "a lock taken twice ($((threads + 1)) thread(s)): $LINE"
  else
    fail "a lock taken twice ($((threads + 1)) thread(s)): $WHY"; printf '     | %s\n' "$OUT" "$ERR"
  fi
done
finish
