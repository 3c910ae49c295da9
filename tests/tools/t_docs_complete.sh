#!/usr/bin/env bash
# t_docs_complete: everything public is documented, and the README's link
# lines work as written:
#   - every function declared in include/smpalloc.h is named in the README
#     and in smpalloc(3)'s NAME section;
#   - every SMPALLOC_* option of src/options.c is in the README's options
#     table, one row each (SMPALLOC_LIB, the launcher's, in its text), in
#     smpalloc(3) and in smpalloc(1); and no other option is named there;
#   - every long option of smpbench (tools/smpbench.c) is in smpbench(1);
#     the allocator options and --version in the README too;
#   - every option of the launcher (the case patterns of tools/smpalloc) is
#     in its --help, in smpalloc(1) and in the README;
#   - the README's bytes of thread-local storage a thread are the size of
#     the library's TLS segment (readelf);
#   - the README's static and shared link lines (-Iinclude), run in a
#     folder that has the repository's include/ and build/, build
#     tests/tools/install.c (the smp_* names and malloc) into programs
#     that run and are served by smpalloc.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
ROOT=$(pwd -P)
unset LD_PRELOAD LD_LIBRARY_PATH
# roff source without its escapes, for plain-text searches
unroff() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"; }

echo "checks: functions"
funcs=$(grep -o '\bsmp_[a-z_]*(' include/smpalloc.h | tr -d '(' | sort -u)
[ "$(wc -l <<<"$funcs")" -ge 20 ] || fail "only $(wc -l <<<"$funcs") functions found in include/smpalloc.h"
name_section=$(unroff docs/smpalloc.3 | sed -n '/^\.SH NAME/,/^\.SH /p')
for f in $funcs; do
  grep -q "\`$f\b" README.md || fail "README does not name $f"
  grep -qw "$f" <<<"$name_section" || fail "smpalloc(3) NAME does not list $f"
done
ok "$(wc -l <<<"$funcs") functions, each in the README and smpalloc(3)"

echo "checks: SMPALLOC_ options"
opts=$(sed -n 's/^ *{"\([A-Z_]*\)", OPT_[A-Z]*,.*/\1/p' src/options.c)
[ "$(wc -l <<<"$opts")" -ge 6 ] || fail "only $(wc -l <<<"$opts") options found in src/options.c"
for o in $opts; do
  if [ "$o" = LIB ]; then
    grep -q 'SMPALLOC_LIB' docs/smpalloc.1 || fail "smpalloc(1) does not document SMPALLOC_LIB"
    continue
  fi
  [ "$(grep -c "^| \`SMPALLOC_$o\` |" README.md)" -eq 1 ] || fail "README's options table has not one row for SMPALLOC_$o"
  grep -q "^\.B SMPALLOC_$o\$" docs/smpalloc.3 || fail "smpalloc(3) does not document SMPALLOC_$o"
  unroff docs/smpalloc.1 | grep -qw "SMPALLOC_$o" || fail "smpalloc(1) does not name SMPALLOC_$o"
done
ok "options: $(tr '\n' ' ' <<<"$opts")"
# ...and no other: an option removed from src/options.c leaves no row, no
# entry and no mention behind (the README's warning examples name unknown
# options on purpose: their lines start "smpalloc: warning:").
known=$(sed 's/^/SMPALLOC_/' <<<"$opts")
for f in README.md docs/smpalloc.3 docs/smpalloc.1 docs/smpbench.1; do
  for o in $( (if [ "$f" = README.md ]; then grep -v '^smpalloc: warning:' "$f"; else unroff "$f"; fi) \
              | grep -o 'SMPALLOC_[A-Z][A-Z_]*' | sort -u); do
    grep -qx "$o" <<<"$known" || fail "$f names $o, which src/options.c does not have"
  done
done
ok "no option documented that src/options.c does not have"

echo "checks: smpbench's options"
sopts=$(sed -n 's/^ *{ "\([a-z-]*\)", [a-z_]*_argument.*/\1/p' tools/smpbench.c)
[ "$(wc -l <<<"$sopts")" -ge 15 ] || fail "only $(wc -l <<<"$sopts") smpbench options found"
page=$(unroff docs/smpbench.1)
for o in $sopts; do
  grep -q -- "--$o\b" <<<"$page" || fail "smpbench(1) does not document --$o"
done
for o in allocs alloc lib peer-dir list-allocs version json csv svg cmds; do
  grep -q -- "--$o\b" README.md || fail "README does not mention smpbench's --$o"
done
ok "smpbench: $(wc -l <<<"$sopts") options in smpbench(1)"

echo "checks: the launcher's options"
lopts=$(sed -n 's/^    \(-[-a-z=|]*\))  *.*/\1/p' tools/smpalloc | tr '|' '\n' | grep -v '^--$' | grep -v '\*')
[ "$(wc -l <<<"$lopts")" -ge 6 ] || fail "only $(wc -l <<<"$lopts") launcher options found: $lopts"
help=$(tools/smpalloc --help)
page=$(unroff docs/smpalloc.1)
for o in $lopts; do
  grep -q -- "$o\b" <<<"$help" || fail "smpalloc --help does not list $o"
  grep -q -- "$o\b" <<<"$page" || fail "smpalloc(1) does not document $o"
  grep -q -- "\`$o\`" README.md || fail "README does not mention the launcher's $o"
done
ok "launcher: $(tr '\n' ' ' <<<"$lopts")"

echo "checks: the README's link lines"
mkdir "$tmp/w"
ln -s "$ROOT/include" "$tmp/w/include"
ln -s "$ROOT/build" "$tmp/w/build"
cp tests/tools/install.c "$tmp/w/prog.c"
static=$(grep -E '^gcc -Iinclude prog\.c build/libsmpalloc\.a -lpthread +# static$' README.md)
shared=$(grep -E '^gcc -Iinclude prog\.c -Lbuild -lsmpalloc +# shared \(run with LD_LIBRARY_PATH=build\)$' README.md)
if [ -z "$static" ] || [ -z "$shared" ]; then
  fail "README's link lines not found"
else
  out=$(cd "$tmp/w" && bash -c "$static" 2>&1 && ./a.out 2>&1)
  [ "$out" = "consumer ok" ] && ok "static: $static" || fail "static line: $out"
  rm -f "$tmp/w/a.out"
  out=$(cd "$tmp/w" && bash -c "$shared" 2>&1 && LD_LIBRARY_PATH=build ./a.out 2>&1)
  [ "$out" = "consumer ok" ] && ok "shared: $shared" || fail "shared line: $out"
fi

# The thread-local storage the README states: the library's TLS segment.
said=$(sed -n 's/.*`initial-exec`, \([0-9]*\) bytes a thread.*/\1/p' README.md)
tls=$(readelf -lW build/libsmpalloc.so 2>/dev/null | awk '$1 == "TLS" { print $6 }')
[ -n "$tls" ] && tls=$((tls))
if [ -n "$said" ] && [ "$said" = "$tls" ]; then ok "thread-local storage: $tls bytes a thread"
else fail "README says ${said:-nothing} bytes of thread-local storage a thread; the library's TLS segment is ${tls:-unknown}"; fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all documentation checks passed"
