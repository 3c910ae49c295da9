#!/usr/bin/env bash
# t_cancel: threads cancelled (deferred) in the middle of allocation work,
# at nanosleep/read/pthread_testcancel between allocations or blocked in
# read(), with cleanup handlers that verify and free the blocks they hold
# (tests/trust/cancel.c).  Afterwards every block was freed, fresh threads
# and main allocate normally, smp_collect() works and the bytes in use are
# back (the cancelled threads' caches were given back by the key
# destructor).  Runs under LD_PRELOAD (plain and checked mode) and with the
# smp_* names; `timeout 120` bounds a deadlock.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" "${BIN}_prefix" "$LIB"
if [ "${TRUST_LONG:-0}" = 1 ]; then args=(1000 6); else args=(150 4); fi
run() { check_run -t 120 -n 20 -o ': ok:' "$@"; }
run "preload" env LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "preload, checked mode" env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$BIN" "${args[@]}"
run "smp_* names" "${BIN}_prefix" "${args[@]}"
finish
