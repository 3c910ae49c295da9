#!/usr/bin/env bash
# t_static: programs linked with build/libsmpalloc.a (no preload).
#   static (tests/api/static.c): malloc/free/strdup in the program are
#     smpalloc's (smp_usable_size knows malloc's blocks, malloc(0) has
#     smpalloc's usable size 8, libsmpalloc.so is not mapped);
#   api_static: the API suite's plain-name build linked with the archive,
#     which must detect smpalloc and pass.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" build/tests/api_static
check_run -o '^static: ok$' static "$BIN"
if grep -q libsmpalloc < <(ldd "$BIN" 2>&1); then
  fail "$BIN is dynamically linked to libsmpalloc"
fi
check_run "api_static --expect=smpalloc" env -u LD_PRELOAD build/tests/api_static --expect=smpalloc
finish
