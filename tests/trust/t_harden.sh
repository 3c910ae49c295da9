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
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=$PWD/build/libsmpalloc.so
PROG=build/tests/harden
SPROG=build/tests/harden_static
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for f in "$LIB" "$PROG" "$SPROG" build/libsmpalloc.a; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins)"; exit 1; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
unset SMPALLOC_CHECKED

# expect LABEL OUTCOME CALL CMD...: OUTCOME is "clean" (exit 0, "handed
# out nothing wrong") or "abort" (SIGABRT, one smpalloc: line naming CALL
# and the announced address).
expect() {
  local label=$1 want=$2 call=$3; shift 3
  local out rc line n addr tok ok
  out=$("$@" 2>"$tmp/err"); rc=$?
  line=$(head -n 1 "$tmp/err"); n=$(grep -c '' "$tmp/err")
  addr=$(sed -n 's/^addr \(0x[0-9a-f]*\)$/\1/p' <<<"$out" | head -n 1)
  if [ "$want" = clean ]; then
    if [ $rc -eq 0 ] && grep -q '^handed out nothing wrong$' <<<"$out" && [ "$n" -eq 0 ]; then
      echo "ok   $label: handed out nothing wrong"
    else
      fail "$label: exit $rc, want a clean end"; printf '     | %s\n' "$out" "$(cat "$tmp/err")"
    fi
    return
  fi
  ok=1
  [ $rc -eq 134 ] || ok=0
  [ "$n" -eq 1 ] && [[ $line == smpalloc:* ]] || ok=0
  grep -Eq "(^|[^A-Za-z0-9_])$call\(\)" <<<"$line" || ok=0
  if [ $ok -eq 1 ] && [ -n "$addr" ]; then
    ok=0
    for tok in $(grep -oE '0x[0-9a-f]+' <<<"$line"); do [ $((tok)) -eq $((addr)) ] && ok=1; done
  fi
  if [ $ok -eq 1 ]; then
    echo "ok   $label: $line"
  else
    fail "$label: exit $rc, want SIGABRT with one smpalloc: line naming $call() and $addr"
    printf '     | %s\n' "$out" "$(cat "$tmp/err")"
  fi
}

echo "== glibc, for reference (not checked)"
for m in uaf_link overflow_next aba never realloc_freed slab_edge junk huge align libc_names; do
  printf '  %-14s ' "$m"; "$PROG" "$m" 2>&1 | tail -n 1
done

echo "== smpalloc (LD_PRELOAD)"
for m in uaf_link overflow_next slab_edge junk huge align libc_names checked_uaf8; do
  expect "$m" clean - env LD_PRELOAD="$LIB" "$PROG" "$m"
done
expect aba abort free env LD_PRELOAD="$LIB" "$PROG" aba
expect never abort free env LD_PRELOAD="$LIB" "$PROG" never
expect realloc_freed abort realloc env LD_PRELOAD="$LIB" "$PROG" realloc_freed
expect checked-uaf8 abort malloc env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$PROG" checked_uaf8

echo "== smpalloc (static link, -static)"
for m in uaf_link huge align libc_names; do expect "static-$m" clean - "$SPROG" "$m"; done
expect static-aba abort free "$SPROG" aba
expect static-never abort free "$SPROG" never
expect static-checked-uaf8 abort malloc env SMPALLOC_CHECKED=1 "$SPROG" checked_uaf8

echo "== the archive exports public names only"
extra=$(nm -g --defined-only build/libsmpalloc.a | awk 'NF == 3 {print $3}' |
        grep -Ev '^(smp_[a-z_0-9]+|__libc_(malloc|free|calloc|realloc|memalign|valloc|pvalloc)|malloc|free|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size|free_sized|free_aligned_sized|malloc_trim|malloc_stats|malloc_info|mallinfo2?|mallopt)$')
nm -g --defined-only build/libsmpalloc.a | grep -q ' T malloc$' || fail "the archive does not define malloc"
if [ -n "$extra" ]; then fail "the archive exports internal names: $(echo $extra | head -c 300)"
else echo "ok   only public names"; fi

echo "t_harden: $fails failed"
[ $fails -eq 0 ]
