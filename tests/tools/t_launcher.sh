#!/usr/bin/env bash
# t_launcher: the launcher tools/smpalloc, run from the repository.
#
#  - it preloads build/libsmpalloc.so (absolute path: still loads after the
#    program changes directory) into real programs: cat sees it in its maps,
#    python3 sees malloc_usable_size(malloc(3)) == 8 (glibc: 24);
#  - arguments reach the program untouched (spaces, empty, quotes, newlines,
#    option-like words after the command);
#  - an existing LD_PRELOAD is kept, after ours, whatever its separators;
#  - the exit status is the program's (0, 3, 127 for a missing command) and
#    a death by signal is seen as such by the launcher's parent;
#  - --stats(=each)/--verbose/--checked set SMPALLOC_STATS/VERBOSE/CHECKED=1
#    (--stats also SMPALLOC_STATS_DIR) and
#    --stats makes statistics appear on stderr at exit (needs the library's
#    statistics printer);
#  - --help, --version, usage errors; SMPALLOC_LIB overrides the library, and
#    a missing library is one line and exit 127; the library next to the
#    launcher (the build/smpalloc layout) is found.
# Run from the repository root (tests/run.sh does); 0 pass, 77 skip, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
# Not the parent make's jobserver or flags (make test runs us).
unset MAKEFLAGS MFLAGS MAKELEVEL

S=$ROOT/tools/smpalloc
need "$LIB" "$S"
VERSION=$(make -s --no-print-directory --eval '_t_launcher_v: ; @echo $(VERSION)' _t_launcher_v)
ulimit -c 0

# ---- preloading --------------------------------------------------------------
# The child changes directory first: a relative LD_PRELOAD entry would not load.
"$S" sh -c 'cd / && cat /proc/self/maps' >"$tmp/out" 2>"$tmp/err"
if grep -qF " $LIB" "$tmp/out" && [ ! -s "$tmp/err" ]; then ok "cat sees $LIB in its maps"
else fail "cat under the launcher: $LIB not in its maps"; cat "$tmp/err"; fi
# From another directory, through a relative path to the launcher.
(cd "$ROOT/tests" && ../tools/smpalloc printenv LD_PRELOAD) >"$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "$LIB" ] || fail "run as ../tools/smpalloc: LD_PRELOAD='$(cat "$tmp/out")', want $LIB"

USABLE='import ctypes
c = ctypes.CDLL(None)
c.malloc.restype = ctypes.c_void_p
c.malloc_usable_size.argtypes = [ctypes.c_void_p]
print(c.malloc_usable_size(c.malloc(3)))'
if command -v python3 >/dev/null; then
  plain=$(python3 -c "$USABLE" 2>&1)
  under=$("$S" python3 -c "$USABLE" 2>&1)
  if [ "$under" = 8 ] && [ "$plain" != 8 ]; then
    ok "python3: malloc_usable_size(malloc(3)) is $under under the launcher, $plain without"
  else
    fail "python3: malloc_usable_size(malloc(3)) is '$under' under the launcher (want 8), '$plain' without"
  fi
else
  skipped+=("python3 is not installed: the malloc_usable_size check did not run")
fi

# ---- arguments ----------------------------------------------------------------
args=("a b" "" "  two  spaces  " "'single'" '"double"' 'mixed "q" and '\''s'\' \
      'back\slash' '$HOME' '$(echo no)' '*' ';' '|' $'new\nline' $'tab\there' \
      "--stats" "--" "--help" "-x" "" "last arg")
printf '%s\n' "${args[@]}" >"$tmp/want"
for form in "" "--" "--verbose --"; do
  # shellcheck disable=SC2086
  "$S" $form printf '%s\n' "${args[@]}" >"$tmp/got" 2>/dev/null
  if cmp -s "$tmp/want" "$tmp/got"; then ok "arguments passed untouched (smpalloc ${form:+$form }printf)"
  else fail "arguments changed (smpalloc ${form:+$form }printf):"; diff "$tmp/want" "$tmp/got" | head; fi
done
# The command itself may look like an option after --.
printf '#!/bin/sh\necho dash-ok\n' >"$tmp/-dash"; chmod +x "$tmp/-dash"
out=$(cd "$tmp" && "$S" -- ./-dash 2>&1)
[ "$out" = dash-ok ] || fail "smpalloc -- ./-dash printed '$out'"

# ---- an existing LD_PRELOAD ---------------------------------------------------
# Two marker libraries to preload besides ours: made here, as they exist only
# for this check (${CC:-cc}: the compiler make test uses, if it set one).
echo 'int smp_t_mark_a;' | ${CC:-cc} -shared -fPIC -x c - -o "$tmp/libmark_a.so" || exit 1
echo 'int smp_t_mark_b;' | ${CC:-cc} -shared -fPIC -x c - -o "$tmp/libmark_b.so" || exit 1
A=$tmp/libmark_a.so B=$tmp/libmark_b.so
got=$(LD_PRELOAD=$A "$S" printenv LD_PRELOAD)
[ "$got" = "$LIB:$A" ] || fail "LD_PRELOAD=$A: the program sees '$got', want '$LIB:$A'"
got=$(LD_PRELOAD='' "$S" printenv LD_PRELOAD)
[ "$got" = "$LIB" ] || fail "LD_PRELOAD empty: the program sees '$got', want '$LIB'"
for pre in "$A $B" "$A:$B" " $A  $B " ":$A::$B:"; do
  LD_PRELOAD=$pre "$S" cat /proc/self/maps >"$tmp/out" 2>"$tmp/err"
  for so in "$LIB" "$A" "$B"; do
    grep -qF " $so" "$tmp/out" || fail "LD_PRELOAD='$pre': $so not loaded"
  done
  [ -s "$tmp/err" ] && { fail "LD_PRELOAD='$pre': stderr:"; cat "$tmp/err"; }
done
[ "$fails" -eq 0 ] && ok "an existing LD_PRELOAD is kept, after ours"

# ---- exit status --------------------------------------------------------------
for code in 0 3 255; do
  "$S" sh -c "exit $code"; rc=$?
  [ "$rc" -eq "$code" ] || fail "sh -c 'exit $code' under the launcher: exit $rc"
done
"$S" "$tmp/no-such-command" 2>/dev/null; rc=$?
[ "$rc" -eq 127 ] || fail "missing command: exit $rc, want 127"
# Death by a signal, as the launcher's parent sees it (wait status).
for sig in TERM KILL; do
  num=$(kill -l "$sig")
  got=$(perl -e 'system(@ARGV); printf "%d %d\n", $? & 127, $? >> 8' \
          "$S" sh -c "kill -$sig \$\$")
  [ "$got" = "$num 0" ] || fail "program killed by SIG$sig: the parent saw signal/status '$got', want '$num 0'"
done
[ "$fails" -eq 0 ] && ok "exit status and death by signal passed through"

# ---- options ------------------------------------------------------------------
check_env() { # WANT OPTIONS...: the SMPALLOC_ variables the program sees
  local want=$1; shift
  local got
  got=$("$S" "$@" env 2>/dev/null | grep '^SMPALLOC_' | sed 's/^\(SMPALLOC_STATS_DIR=\).*/\1DIR/' | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "smpalloc $* env: SMPALLOC_ variables '$got', want '$want'"
}
check_env ""
check_env "SMPALLOC_STATS=1 SMPALLOC_STATS_DIR=DIR " --stats
check_env "SMPALLOC_STATS=1 " --stats=each
check_env "SMPALLOC_VERBOSE=1 " --verbose
check_env "SMPALLOC_CHECKED=1 " --checked
check_env "SMPALLOC_CHECKED=1 SMPALLOC_STATS=1 SMPALLOC_STATS_DIR=DIR SMPALLOC_VERBOSE=1 " --checked --stats --verbose
got=$(SMPALLOC_STATS=0 "$S" --stats printenv SMPALLOC_STATS 2>/dev/null)
[ "$got" = 1 ] || fail "--stats with SMPALLOC_STATS=0 in the environment: the program sees '$got'"

# Statistics on stderr at exit, after what the program itself wrote; none
# without --stats.  (Needs the library's SMPALLOC_STATS support.)  bash, as
# it leaves through exit() with stderr open (dash calls _exit; coreutils
# close stderr before the library's at-exit report).
"$S" --stats bash -c 'echo program-done >&2' 2>"$tmp/err" >/dev/null
if [ "$(head -n 1 "$tmp/err")" = program-done ] && [ "$(wc -l <"$tmp/err")" -gt 1 ] \
   && tail -n +2 "$tmp/err" | grep -q smpalloc; then
  ok "--stats: statistics on stderr at exit"
else
  fail "--stats: no statistics (a text naming smpalloc) on stderr after the program's exit; stderr was:"
  sed 's/^/  | /' "$tmp/err" | head -n 20
fi
"$S" bash -c 'echo program-done >&2' 2>"$tmp/err" >/dev/null
[ "$(cat "$tmp/err")" = program-done ] || { fail "without --stats stderr has more than the program's line:"; cat "$tmp/err"; }

out=$("$S" --help 2>&1); rc=$?
[ "$rc" -eq 0 ] && [[ "$out" == usage:\ smpalloc* ]] || fail "--help: exit $rc, '$out'"
out=$("$S" --version 2>&1); rc=$?
[ "$rc" -eq 0 ] && [[ "$out" == "smpalloc $VERSION"* ]] || fail "--version: exit $rc, '$out', want smpalloc $VERSION"
"$S" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q '^usage: smpalloc' "$tmp/err" || fail "no command: exit $rc, want 2 and the usage on stderr"
out=$("$S" --bogus true 2>&1); rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] || fail "unknown option: exit $rc, '$out', want 2 and one line"

# ---- finding the library ------------------------------------------------------
cp "$LIB" "$tmp/copy.so"
got=$(SMPALLOC_LIB=$tmp/copy.so "$S" cat /proc/self/maps 2>"$tmp/err")
grep -qF " $tmp/copy.so" <<<"$got" && ! grep -qF " $LIB" <<<"$got" \
  || fail "SMPALLOC_LIB=$tmp/copy.so: not the library loaded"
# SMPALLOC_LIB is the launcher's variable: the library must not warn about it.
[ -s "$tmp/err" ] && { fail "SMPALLOC_LIB set: stderr not empty:"; cat "$tmp/err"; }
got=$(cd "$tmp" && SMPALLOC_LIB=copy.so "$S" printenv LD_PRELOAD 2>/dev/null)
[ "$got" = "$tmp/copy.so" ] || fail "SMPALLOC_LIB=copy.so (relative): LD_PRELOAD '$got', want $tmp/copy.so"
rm -f "$tmp/ran"
out=$(SMPALLOC_LIB=$tmp/nope.so "$S" touch "$tmp/ran" 2>&1); rc=$?
if [ "$rc" -ne 127 ] || [ -e "$tmp/ran" ] || [ "$(wc -l <<<"$out")" -ne 1 ] \
   || [[ "$out" != smpalloc:*"$tmp/nope.so"* ]]; then
  fail "missing library: exit $rc, '$out' (want 127, one line 'smpalloc: ... $tmp/nope.so', the program not run)"
fi
# The build/smpalloc layout: the library next to the launcher.
mkdir "$tmp/bt" && cp "$S" "$tmp/bt/smpalloc" && cp "$LIB" "$tmp/bt/libsmpalloc.so"
got=$("$tmp/bt/smpalloc" printenv LD_PRELOAD)
[ "$got" = "$tmp/bt/libsmpalloc.so" ] || fail "launcher next to its library: LD_PRELOAD '$got'"
rm "$tmp/bt/libsmpalloc.so"
out=$("$tmp/bt/smpalloc" true 2>&1); rc=$?
[ "$rc" -eq 127 ] && [[ "$out" == smpalloc:* ]] || fail "launcher without a library near it: exit $rc, '$out'"

finish
