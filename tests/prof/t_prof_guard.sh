#!/usr/bin/env bash
# t_prof_guard: guarded samples (SMPALLOC_GUARD_SAMPLE=1: every allocation
# of up to a page).  A planted use after free, overflow, underflow and
# double free each end in one report naming the kind, the allocating
# function (guarded_alloc_site) and, after a free, the freeing one
# (guarded_free_site); a fault outside the pool reaches the program's own
# handler; a program without bugs runs through.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
case_() { # MODE KIND FREED(0/1)
  local out
  out=$(SMPALLOC_GUARD_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" "$1" 2>&1)
  local rc=$?
  [ "$rc" -ge 128 ] || { fail "$1: exit status $rc, want an abort"; echo "$out"; return; }
  grep -q "^smpalloc: guarded sample: $2 at 0x" <<<"$out" || { fail "$1: no '$2' report"; echo "$out"; return; }
  grep -A1 '^  allocated:' <<<"$out" | grep -q 'guarded_alloc_site+' || { fail "$1: allocating function not named"; echo "$out"; return; }
  if [ "$3" = 1 ]; then
    grep -A1 '^  freed:' <<<"$out" | grep -q 'guarded_free_site+' || { fail "$1: freeing function not named"; echo "$out"; return; }
  fi
  ok "$1: $2 reported, with its stacks"
}
case_ uaf "use after free" 1
case_ overflow "buffer overflow" 0
case_ underflow "buffer underflow" 0
case_ double "double free" 1
out=$(SMPALLOC_GUARD_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" elsewhere 2>&1)
[ "$out" = "own handler ran" ] && ok "a fault elsewhere reaches the program's handler" || fail "elsewhere: $out"
out=$(SMPALLOC_GUARD_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" ok 2>&1)
[ "$out" = "no fault" ] && ok "no bug, no report" || fail "ok: $out"
# Off: the use after free goes unseen (the pool is what catches it).
out=$(SMPALLOC_GUARD_SAMPLE=0 LD_PRELOAD="$LIB" "$BIN" uaf 2>&1)
[ "$out" = "no fault" ] && ok "SMPALLOC_GUARD_SAMPLE=0: no guard" || fail "guards off: $out"
finish
