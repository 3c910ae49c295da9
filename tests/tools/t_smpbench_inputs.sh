#!/usr/bin/env bash
# t_smpbench_inputs: smpbench checks what it is given before the first run
# and says what it knows:
#   - a program that cannot start (not in PATH, a missing path, a
#     directory, no execute permission), an --alloc library that is missing
#     or not ELF, an --allocs name that is unknown or not installed, an
#     output file that cannot be written (--json, --csv, --svg), unbalanced
#     quotes: each one line, exit 2, and nothing run (a marker command
#     leaves no file) and no output file created;
#   - a missing program is said once, not once per allocator;
#   - several problems are all reported;
#   - unknown options and allocator names get the nearest known one,
#     ambiguous and argument-less options are said so;
#   - --alloc with a known label takes its place (--list-allocs shows it);
#   - --version (tests/tools/t_smpbench_run.sh checks that --help documents every
#     long option).
# No timing: every check is on exit status, messages and files.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
SMPBENCH=build/smpbench
[ -x "$SMPBENCH" ] || { echo "FAIL: $SMPBENCH is missing (make test builds it)"; exit 1; }
VERSION=$(make -s --no-print-directory --eval '_t_v: ; @echo $(VERSION)' _t_v)
# refused WANT-LINES PATTERN... -- ARGS...: smpbench ARGS exits 2 before
# running anything (the command, when it runs, creates $tmp/ran), with
# WANT-LINES lines on stderr (those of the usage excepted) each matching
# one PATTERN in order.
refused() {
  local n=$1; shift
  local pats=()
  while [ "$1" != "--" ]; do pats+=("$1"); shift; done
  shift
  rm -f "$tmp/ran" "$tmp/out.json"
  "$SMPBENCH" --color never --runs 1 --warmup 0 "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines
  lines=$(grep -v -e '^usage: ' -e '^       smpbench ' -e '^Try ' "$tmp/err")
  local bad=
  [ "$rc" -eq 2 ] || bad="exit $rc"
  [ -e "$tmp/ran" ] && bad="$bad; the command ran"
  [ -s "$tmp/out" ] && bad="$bad; stdout not empty"
  [ "$(grep -c . <<<"$lines")" -eq "$n" ] || bad="$bad; $(grep -c . <<<"$lines") lines, want $n"
  local i=0
  while IFS= read -r l; do
    [[ "$l" == ${pats[$i]:-} ]] || bad="$bad; line '$l' does not match '${pats[$i]:-}'"
    i=$((i + 1))
  done <<<"$lines"
  if [ -n "$bad" ]; then fail "smpbench $*: $bad"; sed 's/^/  | /' "$tmp/err"
  else ok "smpbench $*: $(head -n 1 <<<"$lines")"; fi
}
MARK=(touch "$tmp/ran")

echo "checks: programs that cannot start"
refused 1 "smpbench: cannot run 'no-such-program-t': not found in PATH" -- -- no-such-program-t
refused 1 "smpbench: cannot run '$tmp/nope': No such file or directory" -- -- "$tmp/nope"
refused 1 "smpbench: cannot run '$tmp': is a directory" -- -- "$tmp"
printf '#!/bin/sh\n' >"$tmp/noexec"; chmod 644 "$tmp/noexec"
refused 1 "smpbench: cannot run '$tmp/noexec': Permission denied" -- -- "$tmp/noexec"
refused 1 "smpbench: cannot run 'no-such-program-t': not found in PATH" -- \
  --cmds "touch $tmp/ran" no-such-program-t
refused 1 "smpbench: unbalanced quotes in the command: touch 'x" -- --cmds "touch $tmp/ran" "touch 'x"

echo "checks: allocators that cannot be used"
refused 1 "smpbench: --alloc ghost: /nonexistent/libghost.so: No such file or directory" -- \
  --alloc ghost=/nonexistent/libghost.so -- "${MARK[@]}"
refused 1 "smpbench: --alloc text: tests/tools/t_smpbench_inputs.sh: not an ELF shared library" -- \
  --alloc text=tests/tools/t_smpbench_inputs.sh --allocs glibc,text -- "${MARK[@]}"
refused 1 "smpbench: cannot use smpalloc: /nonexistent/lib.so: No such file or directory" -- \
  --lib /nonexistent/lib.so --allocs glibc,smpalloc -- "${MARK[@]}"
refused 1 "smpbench: unknown allocator 'smpaloc' (did you mean smpalloc?); found: glibc smpalloc *" -- \
  --allocs glibc,smpaloc -- "${MARK[@]}"
refused 1 "smpbench: unknown allocator 'zzzzzz'; found: *" -- --allocs zzzzzz -- "${MARK[@]}"
# a Debian peer that is not installed, by its family name
SMPBENCH_LIB_DIRS=$tmp refused 1 "smpbench: cannot use tcmalloc: libtcmalloc_minimal.so.4 not found in $tmp" -- \
  --peer-dir '' --allocs glibc,tcmalloc -- "${MARK[@]}"
refused 1 "smpbench: --peer-dir $tmp/none: No such file or directory" -- --peer-dir "$tmp/none" -- "${MARK[@]}"

echo "checks: output files that cannot be written"
refused 1 "smpbench: --json $tmp/no/dir/out.json: cannot write: No such file or directory" -- \
  --allocs glibc --json "$tmp/no/dir/out.json" -- "${MARK[@]}"
refused 1 "smpbench: --csv $tmp: cannot write: is a directory" -- --allocs glibc --csv "$tmp" -- "${MARK[@]}"
touch "$tmp/plain"
refused 1 "smpbench: --svg $tmp/plain/x.svg: cannot write: Not a directory" -- \
  --allocs glibc --svg "$tmp/plain/x.svg" -- "${MARK[@]}"
# every problem at once, a missing program said once for all allocators
refused 3 "smpbench: --alloc ghost: *" "smpbench: cannot run 'no-such-program-t': not found in PATH" \
          "smpbench: --json /nonexistent/x.json: cannot write: *" -- \
  --alloc ghost=/nonexistent.so --json /nonexistent/x.json -- no-such-program-t
# the check creates no file: a good run after a refused one writes it
"$SMPBENCH" --runs 1 --warmup 0 --allocs glibc --json "$tmp/out.json" -- true >/dev/null 2>&1 \
  && [ -s "$tmp/out.json" ] || fail "a good run did not write $tmp/out.json"
[ -e "$tmp/ran" ] && fail "a refused run left $tmp/ran"

echo "checks: options"
refused 1 "smpbench: unknown option '--alocs' (did you mean --allocs?)" -- --alocs glibc -- true
refused 1 "smpbench: unknown option '-json' (did you mean --json?)" -- -json x -- true
refused 1 "smpbench: unknown option '--frobnicate'" -- --frobnicate -- true
refused 1 "smpbench: option '--allo' is ambiguous (the start of 2 options)" -- --allo x -- true
refused 1 "smpbench: option '--help' takes no argument" -- --help=1 -- true
refused 1 "smpbench: option '--json' needs an argument" -- --json

echo "checks: --alloc with a known label, --version"
libm=$(ldd "$SMPBENCH" | awk '/libm\.so/ { print $3 }')
if [ -n "$libm" ] && [ -f "$libm" ]; then
  got=$("$SMPBENCH" --alloc "smpalloc=$libm" --peer-dir '' --allocs glibc,smpalloc --list-allocs)
  [ "$got" = "$(printf 'glibc\t\nsmpalloc\t%s' "$libm")" ] \
    && ok "--alloc smpalloc=$libm takes smpalloc's place" || fail "--alloc smpalloc=$libm: --list-allocs says '$got'"
fi
out=$("$SMPBENCH" --version); rc=$?
[ "$rc" -eq 0 ] && [ "$out" = "smpbench $VERSION" ] || fail "--version: exit $rc, '$out'"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all input checks passed"
