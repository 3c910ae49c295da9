#!/usr/bin/env bash
# t_installed: an install used the way the README says, line for line: the
# README's own command lines (found in README.md, so a change there changes
# what runs) are run with HOME pointing into a temporary folder, so that
# PREFIX=$HOME/.local is private to this test:
#   1. `make install PREFIX=$HOME/.local`;
#   2. a program linked with the installed library, without an rpath, does
#      not start (the loader cannot find libsmpalloc.so.0); the README's
#      rpath line builds one that starts and is served by smpalloc
#      (tests/tools/install.c as prog.c), and so does the README's
#      LD_LIBRARY_PATH line for the one without; the static line needs
#      neither;
#   3. the installed smpbench preloads the installed library (its default,
#      seen in a run's /proc/self/maps) and looks in no peer folder;
#   4. the installed man pages name the prefix's library, not
#      /usr/local/lib/libsmpalloc.so.0, and render without warnings;
#   5. the README's ldconfig remark: Debian's loader configuration lists
#      /usr/local/lib (checked where /etc/ld.so.conf.d/libc.conf exists);
#   6. `make uninstall PREFIX=$HOME/.local` leaves no file.
# Exit 0 pass, 77 skip (pkg-config missing), else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
ROOT=$(pwd -P)
unset MAKEFLAGS MFLAGS MAKELEVEL LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH
for v in $(compgen -v SMPALLOC_); do unset "$v"; done
command -v pkg-config >/dev/null || { echo "pkg-config is not installed"; exit 77; }
export HOME=$tmp/home
P=$HOME/.local
mkdir -p "$HOME" "$tmp/w"

# readme REGEX: the README line matching REGEX (one), or fail
readme() {
  local l
  l=$(grep -E -- "$1" README.md)
  if [ "$(grep -c . <<<"$l")" -ne 1 ]; then fail "README.md: want one line matching /$1/, found: $l"; return 1; fi
  printf '%s\n' "$l"
}
# run_line LINE [DIR]: LINE in bash, in DIR (default the repository)
run_line() { (cd "${2:-$ROOT}" && bash -c "$1") >"$tmp/out" 2>&1; }

echo "checks: 1. make install PREFIX=\$HOME/.local"
line=$(readme '^make install PREFIX=\$HOME/\.local( |$)') || exit 1
run_line "$line" || { cat "$tmp/out"; echo "FAIL: $line"; exit 1; }
[ -f "$P/lib/libsmpalloc.so.0" ] || { echo "FAIL: $line installed no $P/lib/libsmpalloc.so.0"; exit 1; }
ok "$line"

echo "checks: 2. a program linked with the installed library"
cp tests/tools/install.c "$tmp/w/prog.c"
export PKG_CONFIG_PATH=$P/lib/pkgconfig
line=$(readme '^export PKG_CONFIG_PATH=\$HOME/\.local/lib/pkgconfig') || exit 1
[ "$line" = 'export PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig' ] || fail "README's PKG_CONFIG_PATH line is '$line'"
# shellcheck disable=SC2046
(cd "$tmp/w" && gcc -o plain prog.c $(pkg-config --cflags --libs smpalloc)) || fail "cannot build without an rpath"
out=$(cd "$tmp/w" && ./plain 2>&1); rc=$?
if [ "$rc" -eq 127 ] && [[ "$out" == *"libsmpalloc.so.0: cannot open shared object file"* ]]; then
  ok "without an rpath the program does not start: $out"
else
  fail "a program linked without rpath: exit $rc, '$out' (want 127: libsmpalloc.so.0 not found)"
fi
line=$(readme '^gcc -o prog prog\.c \$\(pkg-config --cflags --libs smpalloc\) -Wl,-rpath,') || exit 1
if run_line "$line" "$tmp/w" && out=$(cd "$tmp/w" && ./prog 2>&1) && [ "$out" = "consumer ok" ]; then
  ok "$line: ./prog starts and says '$out'"
else
  fail "$line: $(cat "$tmp/out") ./prog: '${out:-}'"
fi
line=$(readme '^LD_LIBRARY_PATH=\$HOME/\.local/lib \./prog') || exit 1
mv "$tmp/w/prog" "$tmp/w/prog.rpath" && cp "$tmp/w/plain" "$tmp/w/prog"
if run_line "$line" "$tmp/w" && [ "$(cat "$tmp/out")" = "consumer ok" ]; then ok "$line (the program without rpath)"
else fail "$line: $(cat "$tmp/out")"; fi
line=$(readme '^gcc -static -o prog prog\.c \$\(pkg-config --static') || exit 1
if run_line "$line" "$tmp/w" && out=$(cd "$tmp/w" && ./prog 2>&1) && [ "$out" = "consumer ok" ]; then
  ok "$line: ./prog says '$out'"
else
  fail "$line: $(cat "$tmp/out") ./prog: '${out:-}'"
fi

echo "checks: 3. the installed smpbench"
lib=$("$P/bin/smpbench" --allocs smpalloc --list-allocs | cut -f2)
[ "$lib" = "$P/lib/libsmpalloc.so.0" ] || fail "installed smpbench: smpalloc is '$lib', want $P/lib/libsmpalloc.so.0"
"$P/bin/smpbench" --runs 1 --warmup 0 --show-output --allocs smpalloc -- cat /proc/self/maps >"$tmp/maps" 2>&1
grep -qF "$P/lib/libsmpalloc.so." "$tmp/maps" && ok "installed smpbench preloads $P/lib/libsmpalloc.so.0" \
  || { fail "installed smpbench: the run does not map $P/lib/libsmpalloc.so.*"; tail -n 5 "$tmp/maps"; }
want=$(build/smpbench --peer-dir '' --list-allocs | cut -f1 | grep -vx smpalloc | tr '\n' ' ')
got=$("$P/bin/smpbench" --list-allocs | cut -f1 | grep -vx smpalloc | tr '\n' ' ')
[ "$got" = "$want" ] && ok "installed smpbench: no peer folder ($got+ smpalloc)" \
  || fail "installed smpbench compares '$got' besides smpalloc, want '$want'"
out=$("$P/bin/smpbench" --help | sed -n 's/^  peer builds: //p')
[ "$out" = "no folder" ] || fail "installed smpbench --help: peer builds '$out'"

echo "checks: 4. the installed man pages"
for page in man1/smpalloc.1 man1/smpbench.1 man3/smpalloc.3; do
  f=$P/share/man/$page
  text=$(MANWIDTH=200 man -l "$f" 2>"$tmp/warn")
  if ! grep -qF "$P/lib/libsmpalloc.so.0" <<<"$text"; then fail "$page does not name $P/lib/libsmpalloc.so.0"
  elif grep -q '/usr/local/lib/libsmpalloc\|@[A-Z]*@' <<<"$text"; then fail "$page names /usr/local/lib/libsmpalloc or a placeholder"
  elif [ -s "$tmp/warn" ]; then fail "$page: $(cat "$tmp/warn")"
  else ok "$page names $P/lib/libsmpalloc.so.0"; fi
done

echo "checks: 5. ldconfig"
readme '^sudo ldconfig +# or, for a LIBDIR the loader knows \(Debian: /usr/local/lib\)' >/dev/null
if [ -f /etc/ld.so.conf.d/libc.conf ]; then
  grep -qx /usr/local/lib /etc/ld.so.conf.d/libc.conf && ok "/etc/ld.so.conf.d/libc.conf lists /usr/local/lib" \
    || fail "/etc/ld.so.conf.d/libc.conf does not list /usr/local/lib"
else
  echo "note: no /etc/ld.so.conf.d/libc.conf here"
fi

echo "checks: 6. make uninstall PREFIX=\$HOME/.local"
line=$(readme '^make uninstall PREFIX=\$HOME/\.local( |$)') || exit 1
run_line "$line" || fail "$line: $(cat "$tmp/out")"
left=$(find "$P" ! -type d)
[ -z "$left" ] && ok "$line: no file left" || fail "$line left: $left"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all installed-use checks passed"
