#!/usr/bin/env bash
# t_static: programs linked with build/libsmpalloc.a (no preload).
#   static: malloc/free/strdup in the program are smpalloc's
#     (smp_usable_size knows malloc's blocks, malloc(0) has smpalloc's usable
#     size 8, libsmpalloc.so is not mapped);
#   api_static: the API suite's plain-name build linked with the archive,
#     which must detect smpalloc and pass.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
fails=0
for f in build/tests/static build/tests/api_static; do
  [ -x "$f" ] || { echo "FAIL: $f is missing (make test-bins)"; exit 1; }
done
echo "== static"
out=$(build/tests/static 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ] || ! grep -qx 'static: ok' <<<"$out"; then echo "FAIL: static"; fails=$((fails + 1)); fi
if grep -q libsmpalloc < <(ldd build/tests/static 2>&1); then
  echo "FAIL: static is dynamically linked to libsmpalloc"; fails=$((fails + 1))
fi
echo "== api_static --expect=smpalloc"
env -u LD_PRELOAD build/tests/api_static --expect=smpalloc || { echo "FAIL: api_static"; fails=$((fails + 1)); }
echo "t_static: $fails failed"
[ $fails -eq 0 ]
