#!/usr/bin/env bash
# t_install: `make install` and `make uninstall` (mk/install.mk).
#
#  1. make install PREFIX=$tmp/prefix installs exactly the expected files:
#     libsmpalloc.so.$(VERSION) with the $(SONAME) and libsmpalloc.so links
#     (relative), the static library, the header, smpalloc.pc, the programs
#     of $(TOOL_BINS) (rebuilt for the prefix), the launcher and the man
#     pages (placeholders filled in), each a copy of what the build made.
#  2. A consumer (tests/tools/install.c) built with pkg-config against
#     that prefix, shared (run with LD_LIBRARY_PATH) and static (--static,
#     the archive): both run and see malloc served by smpalloc.
#  3. The installed launcher preloads the installed library.
#  4. DESTDIR staging with PREFIX and LIBDIR overridden: the files land under
#     DESTDIR, the paths written into them are the final ones.
#  5. make uninstall removes every file again (and succeeds on an empty tree).
#  6. The man pages render without warnings.
# Run from the repository root (tests/run.sh does); 0 pass, 77 skip, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
# Not the parent make's jobserver or flags (make test runs us).
unset MAKEFLAGS MFLAGS MAKELEVEL
unset PKG_CONFIG_SYSROOT_DIR

# The build's own idea of the names.
read -r VERSION SONAME TOOL_BINS < <(make -s --no-print-directory \
  --eval '_t_install_vars: ; @echo "$(VERSION) $(SONAME) $(TOOL_BINS)"' _t_install_vars)
if [ -z "${VERSION:-}" ] || [ -z "${SONAME:-}" ]; then
  echo "FAIL: cannot read VERSION and SONAME from the Makefile"; exit 1
fi
echo "VERSION=$VERSION SONAME=$SONAME TOOL_BINS=$TOOL_BINS"

# expected_files LIBDIR-relative-to-root: the list install must produce,
# relative to the install root (PREFIX or DESTDIR).
expected_files() { # $1 = prefix part, $2 = libdir part
  local t
  {
    echo "$1/bin/smpalloc"
    for t in $TOOL_BINS; do echo "$1/bin/${t##*/}"; done
    echo "$1/include/smpalloc.h"
    echo "$2/libsmpalloc.a"
    echo "$2/libsmpalloc.so"
    echo "$2/$SONAME"
    echo "$2/libsmpalloc.so.$VERSION"
    echo "$2/pkgconfig/smpalloc.pc"
    echo "$1/share/man/man1/smpalloc.1"
    echo "$1/share/man/man1/smpbench.1"
    echo "$1/share/man/man3/smpalloc.3"
  } | sed 's|^/||' | sort
}
files_under() { (cd "$1" && find . ! -type d | sed 's|^\./||' | sort); }

# ---- 1. install into a prefix ----------------------------------------------
P=$tmp/prefix
if ! make -s install PREFIX="$P" >"$tmp/log" 2>&1; then
  cat "$tmp/log"; echo "FAIL: make install PREFIX=$P failed"; exit 1
fi
if ! diff <(expected_files "" lib) <(files_under "$P"); then
  fail "installed files (<) expected, (>) installed"
fi
L=$P/lib
real=$L/libsmpalloc.so.$VERSION
[ -f "$real" ] && [ ! -L "$real" ] && [ -x "$real" ] || fail "$real: not an executable regular file"
cmp -s "$real" build/libsmpalloc.so || fail "$real differs from build/libsmpalloc.so"
for link in "$SONAME" libsmpalloc.so; do
  target=$(readlink "$L/$link")
  if [ ! -L "$L/$link" ] || [ "$target" != "libsmpalloc.so.$VERSION" ]; then
    fail "$L/$link: want a symlink to libsmpalloc.so.$VERSION, is '${target:-not a link}'"
  fi
done
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = "$SONAME" ] || fail "SONAME of $real is '$soname', want $SONAME"
cmp -s "$L/libsmpalloc.a" build/libsmpalloc.a || fail "libsmpalloc.a differs from the build's"
cmp -s "$P/include/smpalloc.h" include/smpalloc.h || fail "installed header differs"
for page in man1/smpalloc.1 man1/smpbench.1 man3/smpalloc.3; do   # placeholders filled in
  sed -e "s|@LIBDIR@|$L|g" -e "s|@BINDIR@|$P/bin|g" "docs/${page#*/}" | cmp -s - "$P/share/man/$page" \
    || fail "installed $page differs from docs/${page#*/} with LIBDIR $L"
done
for t in $TOOL_BINS; do   # rebuilt for the prefix (smpbench knows LIBDIR)
  v=$("$P/bin/${t##*/}" --version 2>&1)
  [ "$v" = "${t##*/} $VERSION" ] || fail "$P/bin/${t##*/} --version: '$v'"
done
[ -x "$P/bin/smpalloc" ] || fail "$P/bin/smpalloc is not executable"
if grep -n '@[A-Z_]*@' "$P/bin/smpalloc" "$L/pkgconfig/smpalloc.pc" "$P"/share/man/man*/*; then
  fail "placeholders left in the launcher, smpalloc.pc or the man pages"
fi
[ "$fails" -eq 0 ] && ok "make install PREFIX=: files, links, SONAME $SONAME"

# ---- 2. consumers built with pkg-config ------------------------------------
# Compiling a program against the installed copy is what this part tests, so
# the test compiles it itself, with ${CC:-cc} (the compiler make test uses, if
# it set one) and the flags pkg-config gives.
CONSUMER_CC=${CC:-cc}
CONSUMER_CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror"
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH=$L/pkgconfig
  v=$(pkg-config --modversion smpalloc 2>&1)
  [ "$v" = "$VERSION" ] || fail "pkg-config --modversion smpalloc: '$v', want $VERSION"
  flags=$(pkg-config --cflags --libs smpalloc)
  static_libs=$(pkg-config --static --libs smpalloc)
  echo "pkg-config --cflags --libs: $flags"
  echo "pkg-config --static --libs: $static_libs"
  [[ " $static_libs " == *" -lpthread "* ]] || fail "pkg-config --static --libs lacks -lpthread"

  # Shared: needs the SONAME, found in the prefix through LD_LIBRARY_PATH.
  # shellcheck disable=SC2086
  if $CONSUMER_CC $CONSUMER_CFLAGS -o "$tmp/consumer_shared" tests/tools/install.c $flags; then
    readelf -d "$tmp/consumer_shared" | grep -q "(NEEDED).*\[$SONAME\]" \
      || fail "consumer_shared does not need $SONAME"
    LD_LIBRARY_PATH=$L ldd "$tmp/consumer_shared" | grep -qF "$SONAME => $L/$SONAME" \
      || fail "consumer_shared does not load $L/$SONAME"
    out=$(LD_LIBRARY_PATH=$L "$tmp/consumer_shared" 2>&1); rc=$?
    if [ "$rc" -eq 0 ] && [ "$out" = "consumer ok" ]; then ok "shared consumer"
    else fail "shared consumer exited $rc: $out"; fi
  else
    fail "cannot build the shared consumer with: $flags"
  fi

  # Static: the archive, pulled in by pkg-config --static.
  # shellcheck disable=SC2086,SC2046
  if $CONSUMER_CC $CONSUMER_CFLAGS -o "$tmp/consumer_static" tests/tools/install.c \
       $(pkg-config --cflags smpalloc) -Wl,-Bstatic $static_libs -Wl,-Bdynamic; then
    if readelf -d "$tmp/consumer_static" | grep -q '(NEEDED).*libsmpalloc'; then
      fail "consumer_static needs libsmpalloc.so: the archive was not linked"
    fi
    out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD "$tmp/consumer_static" 2>&1); rc=$?
    if [ "$rc" -eq 0 ] && [ "$out" = "consumer ok" ]; then ok "static consumer"
    else fail "static consumer exited $rc: $out"; fi
  else
    fail "cannot build the static consumer with: $static_libs"
  fi
  unset PKG_CONFIG_PATH
else
  skipped+=("pkg-config is not installed: consumers not built")
fi

# ---- 3. the installed launcher ---------------------------------------------
v=$(env -u SMPALLOC_LIB "$P/bin/smpalloc" --version)
[ "$v" = "smpalloc $VERSION" ] || fail "installed smpalloc --version: '$v'"
maps=$(cd / && env -u SMPALLOC_LIB -u LD_PRELOAD "$P/bin/smpalloc" cat /proc/self/maps 2>&1)
if grep -qF "$real" <<<"$maps"; then ok "installed launcher preloads $real"
else fail "installed launcher does not preload $real"; fi

# ---- 4. DESTDIR staging, LIBDIR overridden ---------------------------------
D=$tmp/stage
FP=/opt/smpalloc-t-$$        # final prefix: must not exist on this machine
FL=$FP/lib64
if [ -e "$FP" ]; then echo "FAIL: $FP exists"; exit 1; fi
if make -s install DESTDIR="$D" PREFIX="$FP" LIBDIR="$FL" >"$tmp/log" 2>&1; then
  diff <(expected_files "$FP" "$FL") <(files_under "$D") \
    || fail "DESTDIR install: files (<) expected, (>) installed"
  if grep -rlF "$D" "$D"; then fail "DESTDIR leaked into installed files"; fi
  grep -qx "libdir=$FL" "$D$FL/pkgconfig/smpalloc.pc" || fail "smpalloc.pc: libdir is not $FL"
  grep -qx "prefix=$FP" "$D$FL/pkgconfig/smpalloc.pc" || fail "smpalloc.pc: prefix is not $FP"
  # The staged launcher looks for the final path, which is not there yet.
  err=$(env -u SMPALLOC_LIB "$D$FP/bin/smpalloc" true 2>&1); rc=$?
  if [ "$rc" -ne 127 ] || [[ "$err" != *"$FL/$SONAME"* ]] || [ "$(wc -l <<<"$err")" -ne 1 ]; then
    fail "staged launcher without its library: exit $rc, '$err' (want 127, one line naming $FL/$SONAME)"
  fi
  if make -s uninstall DESTDIR="$D" PREFIX="$FP" LIBDIR="$FL" >"$tmp/log" 2>&1; then
    left=$(files_under "$D")
    [ -z "$left" ] || fail "DESTDIR uninstall left: $left"
  else
    cat "$tmp/log"; fail "make uninstall DESTDIR= failed"
  fi
  [ "$fails" -eq 0 ] && ok "DESTDIR=, PREFIX=, LIBDIR= install and uninstall"
else
  cat "$tmp/log"; fail "make install DESTDIR=$D PREFIX=$FP LIBDIR=$FL failed"
fi

# ---- 5. uninstall ----------------------------------------------------------
if make -s uninstall PREFIX="$P" >"$tmp/log" 2>&1; then
  left=$(files_under "$P")
  if [ -z "$left" ]; then ok "make uninstall removed every file"
  else fail "make uninstall left: $left"; fi
  make -s uninstall PREFIX="$P" >"$tmp/log" 2>&1 || fail "make uninstall on an empty prefix failed"
else
  cat "$tmp/log"; fail "make uninstall PREFIX=$P failed"
fi

# ---- 6. the man pages ------------------------------------------------------
if command -v man >/dev/null && command -v groff >/dev/null; then
  for page in docs/smpalloc.1 docs/smpbench.1 docs/smpalloc.3; do
    warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warn" ] || fail "$page: $warn"
    grep -q "^\.TH SMP[A-Z]* [13] .*\"smpalloc $VERSION\"" "$page" \
      || fail "$page: .TH does not say smpalloc $VERSION"
  done
else
  skipped+=("man/groff are not installed: man pages not checked")
fi

finish
