#!/usr/bin/env bash
# t_harden: heap misuse that glibc catches must not corrupt smpalloc
# silently.  tests/trust/harden.c commits one misuse per mode; each runs
# under glibc (printed for reference, not checked) and under smpalloc,
# where it must either end in SIGABRT with exactly one "smpalloc:" line
# naming the call and the address, or get to the end having handed out
# nothing wrong (no chosen address, no block twice, no live block).
# Also: the static archive exports only public names, a -static program
# calling mallopt/mallinfo/__libc_* links and works, and checked mode is on
# from the first allocation of a static program whose constructor
# allocates.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
SPROG=build/tests/harden_static
need "$LIB" "$BIN" "$SPROG"
[ -f build/libsmpalloc.a ] || { echo "FAIL: build/libsmpalloc.a is missing (make lib)"; exit 1; }

# expect LABEL OUTCOME CALL CMD...: OUTCOME is "clean" (exit 0, "handed
# out nothing wrong", nothing on stderr), "abort" (SIGABRT, one smpalloc:
# line naming CALL and the address the program announced) or
# "abort:REGEX" (the same, the line matching REGEX too).
expect() {
  local label=$1 want=$2 call=$3 problem=""; shift 3
  [[ $want == abort:* ]] && problem=${want#abort:} && want=abort
  if [ "$want" = clean ]; then
    OUT=$("$@" 2>"$tmp/err"); RC=$?
    if [ $RC -eq 0 ] && grep -q '^handed out nothing wrong$' <<<"$OUT" && ! [ -s "$tmp/err" ]; then
      ok "$label: handed out nothing wrong"
    else
      fail "$label: exit $RC, want a clean end"; printf '     | %s\n' "$OUT" "$(cat "$tmp/err")"
    fi
  elif expect_abort "$call\\(\\)" "$problem" '0x[0-9a-f]+' "$@"; then
    ok "$label: $LINE"
  else
    fail "$label: $WHY"; printf '     | %s\n' "$OUT" "$ERR"
  fi
}

echo "== glibc, for reference (not checked)"
for m in uaf_link overflow_next aba keyless_double keyless_double_run never realloc_freed slab_edge junk huge align libc_names; do
  printf '  %-14s ' "$m"; "$BIN" "$m" 2>&1 | tail -n 1
done

echo "== smpalloc (LD_PRELOAD)"
for m in uaf_link overflow_next slab_edge junk huge align libc_names checked_uaf8; do
  expect "$m" clean - env LD_PRELOAD="$LIB" "$BIN" "$m"
done
expect aba 'abort:double free' free env LD_PRELOAD="$LIB" "$BIN" aba
expect keyless_double 'abort:double free' free env LD_PRELOAD="$LIB" "$BIN" keyless_double
expect keyless_double_run 'abort:double free' free env LD_PRELOAD="$LIB" "$BIN" keyless_double_run
expect never 'abort:never allocated' free env LD_PRELOAD="$LIB" "$BIN" never
expect realloc_freed 'abort:double free' realloc env LD_PRELOAD="$LIB" "$BIN" realloc_freed
expect checked-uaf8 'abort:use after free' malloc env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$BIN" checked_uaf8

echo "== smpalloc (static link, -static)"
for m in uaf_link huge align libc_names; do expect "static-$m" clean - "$SPROG" "$m"; done
expect static-aba 'abort:double free' free "$SPROG" aba
expect static-keyless_double 'abort:double free' free "$SPROG" keyless_double
expect static-never 'abort:never allocated' free "$SPROG" never
expect static-checked-uaf8 'abort:use after free' malloc env SMPALLOC_CHECKED=1 "$SPROG" checked_uaf8

echo "== the archive exports public names only"
extra=$(nm -g --defined-only build/libsmpalloc.a | awk 'NF == 3 {print $3}' |
        grep -Ev '^(smp_[a-z_0-9]+|__libc_(malloc|free|calloc|realloc|memalign|valloc|pvalloc)|malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|free_sized|free_aligned_sized|malloc_trim|malloc_stats|malloc_info|mallinfo2?|mallopt|mlockall)$')
nm -g --defined-only build/libsmpalloc.a | grep -q ' T malloc$' || fail "the archive does not define malloc"
if [ -n "$extra" ]; then fail "the archive exports internal names: $(echo $extra | head -c 300)"
else ok "only public names"; fi
finish
