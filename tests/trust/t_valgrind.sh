#!/usr/bin/env bash
# t_valgrind: the valgrind build (make VALGRIND=1, src/track.h) shows every
# smpalloc block to memcheck.  build/tests/valgrind_bugs, a plain static
# link of tests/trust/valgrind_bugs.c with build/valgrind/libsmpalloc.a,
# runs one mode at a time under
#   valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
#            --soname-synonyms=somalloc=nouserintercepts
# (the last option keeps memcheck from serving the program's malloc itself:
# it would, as the program's malloc is in the executable).  Checks:
#   - clean (every way a block is handed out, resized, moved and freed,
#     small and large, two threads): exit 0, "ERROR SUMMARY: 0 errors", all
#     blocks freed, more than 1000 blocks counted: memcheck saw smpalloc's
#     blocks; the same in checked mode (SMPALLOC_CHECKED=1);
#   - each planted bug: exit 99, memcheck's own message for it, no other
#     error, and the block's stacks go through smpalloc's alloc.c or large.c;
#   - double free and invalid free: memcheck reports "Invalid free()"
#     first, then smpalloc aborts as designed (its one line, SIGABRT: exit
#     134); the test says which happened;
#   - no report has memcheck's own malloc or free (vgpreload_memcheck);
#   - the start-up line (SMPALLOC_VERBOSE=1) says page map two-level under
#     memcheck, flat outside it;
#   - outside valgrind the same program runs: clean exits 0, a double free
#     is smpalloc's abort.
# Exit 0 pass, 77 skip (valgrind or its headers not installed), else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
PROG=build/tests/valgrind_bugs
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 77; }
if [ ! -x "$PROG" ]; then
  [ -f "$PROG.skip" ] && { cat "$PROG.skip"; exit 77; }  # no valgrind headers (valgrind.mk)
  echo "FAIL: $PROG is missing (make test)"; exit 1
fi
unset SMPALLOC_CHECKED LD_PRELOAD
VG=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --soname-synonyms=somalloc=nouserintercepts)
echo "$(valgrind --version): ${VG[*]} $PROG MODE"

# vg LABEL MODE: run MODE under memcheck into $tmp/LABEL.log; sets rc.
vg() {
  rc=$("${VG[@]}" "$PROG" "$2" >"$tmp/$1.log" 2>&1; echo $?)
  if grep -Eq ': (malloc|calloc|realloc|free|memalign|aligned_alloc) \(in [^)]*vgpreload_memcheck' "$tmp/$1.log"; then
    fail "$1: memcheck's own malloc served the program"
  fi
}
show() { sed 's/^/     | /' "$tmp/$1.log" | grep -v '|\s*$' | head -n 40; }
has() { grep -qF -- "$2" "$tmp/$1.log"; }

# ---- clean ----------------------------------------------------------------
for checked in 0 1; do
  label=clean; [ $checked = 1 ] && label=clean_checked
  SMPALLOC_CHECKED=$checked vg $label clean
  allocs=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$tmp/$label.log" | tr -d ,)
  if [ $rc -eq 0 ] && has $label "ERROR SUMMARY: 0 errors" &&
     has $label "All heap blocks were freed" && [ "${allocs:-0}" -gt 1000 ]; then
    echo "ok   $label: exit 0, ERROR SUMMARY: 0 errors, $allocs blocks, all freed"
  else
    fail "$label: exit $rc, want 0, no error, all of more than 1000 blocks freed"; show $label
  fi
done

# ---- one bug per mode: exit 99, memcheck's message, nothing else ------------
# MODE | errors | what memcheck must say (each line of the report, in order)
while IFS='|' read -r mode errors want; do
  vg "$mode" "$mode"
  ok=1
  [ $rc -eq 99 ] || ok=0
  has "$mode" "ERROR SUMMARY: $errors errors" || ok=0
  IFS=';' read -ra lines <<<"$want"
  for l in "${lines[@]}"; do has "$mode" "$l" || ok=0; done
  # The block's history is smpalloc's: its stacks go through smpalloc's
  # sources (an uninitialised read comes without one).
  [[ $mode == uninit* ]] || grep -Eq ' \((alloc\.[ch]|large\.c|override\.c):[0-9]+\)$' "$tmp/$mode.log" || ok=0
  if [ $ok -eq 1 ]; then
    echo "ok   $mode: exit 99, $(printf '%s / ' "${lines[@]}" | sed 's| / $||')"
  else
    fail "$mode: exit $rc, want 99, $errors error(s) and: $want"; show "$mode"
  fi
done <<'EOF'
leak|4|definitely lost: 3,245,972 bytes in 4 blocks;still reachable: 0 bytes
uaf_read|1|Invalid read of size 1;is 4 bytes inside a block of size 32 free'd
uaf_write|1|Invalid write of size 1;is 8 bytes inside a block of size 32 free'd
uaf_large|1|Invalid read of size 1;is 50,000 bytes inside a block of size 100,000 free'd
overflow|1|Invalid write of size 1;is 0 bytes after a ;block of size 20 alloc'd
overflow_large|1|Invalid write of size 1;is 0 bytes after a block of size 100,000 alloc'd
realloc_shrunk|1|Invalid write of size 1;is 0 bytes after a block of size 60 alloc'd
realloc_moved|1|Invalid read of size 1;is 0 bytes inside a block of size 16 free'd
uninit|1|Conditional jump or move depends on uninitialised value(s)
uninit_large|1|Conditional jump or move depends on uninitialised value(s)
EOF

# ---- bad frees: memcheck first, then (or instead) smpalloc's abort ------------
while IFS='|' read -r mode want ours; do
  vg "$mode" "$mode"
  mc=0; has "$mode" "Invalid free() / delete / delete[] / realloc()" && has "$mode" "$want" && mc=1
  if [ $mc -eq 1 ] && [ $rc -eq 134 ] && [ "$(grep -c '^smpalloc:' "$tmp/$mode.log")" -eq 1 ] &&
     has "$mode" "$ours"; then
    echo "ok   $mode: memcheck first (Invalid free(): $want), then smpalloc's abort (exit 134: $ours)"
  elif [ $mc -eq 1 ] && [ $rc -eq 99 ]; then
    echo "ok   $mode: memcheck only (Invalid free(): $want; exit 99, smpalloc did not abort)"
  else
    fail "$mode: exit $rc, want memcheck's Invalid free() ($want), then exit 134 ($ours) or 99"
    show "$mode"
  fi
done <<'EOF'
double_free|is 0 bytes inside a block of size 32 free'd|smpalloc: free(): double free
invalid_free|is 16 bytes inside a block of size 64 alloc'd|smpalloc: free(): invalid pointer (inside a block
EOF

# ---- why --soname-synonyms=somalloc=nouserintercepts (not checked) -------------
valgrind "$PROG" uaf_read >"$tmp/plain.log" 2>&1
if grep -Eq ': malloc \(in [^)]*vgpreload_memcheck' "$tmp/plain.log"; then
  echo "note: without --soname-synonyms=somalloc=nouserintercepts memcheck serves the program's malloc itself"
fi

# ---- the page map: two levels under memcheck (its leak check would scan the
# flat map's 16 GiB), flat outside it --------------------------------------------
SMPALLOC_VERBOSE=1 vg verbose clean
if [ $rc -eq 0 ] && has verbose ", page map two-level, "; then
  echo "ok   under memcheck: page map two-level"
else
  fail "under memcheck: exit $rc, want 0 and a start-up line with ', page map two-level, '"; show verbose
fi
out=$(SMPALLOC_VERBOSE=1 "$PROG" clean 2>&1); rc=$?
if [ $rc -eq 0 ] && [[ $out == *", page map flat, "* ]]; then
  echo "ok   outside valgrind: page map flat"
else
  fail "outside valgrind: exit $rc, want 0 and a start-up line with ', page map flat, ': $out"
fi

# ---- outside valgrind ---------------------------------------------------------
out=$("$PROG" clean 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$out" = "clean: done" ]; then
  echo "ok   outside valgrind: clean exits 0"
else
  fail "outside valgrind: clean: exit $rc: $out"
fi
out=$("$PROG" double_free 2>&1); rc=$?
if [ $rc -eq 134 ] && [[ $out == "smpalloc: free(): double free"* ]]; then
  echo "ok   outside valgrind: double_free: exit 134, $out"
else
  fail "outside valgrind: double_free: exit $rc, want 134 and smpalloc's line: $out"
fi

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
