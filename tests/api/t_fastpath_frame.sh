#!/usr/bin/env bash
# t_fastpath_frame: the comments of src/alloc.c and src/base.h say that the
# fast paths of malloc and free keep no stack frame (every check's failure
# is a tail jump): keep them true for the compiler that builds us.  From the
# disassembly of build/libsmpalloc.so, the instructions of smp_malloc and
# smp_free up to their first `ret` may not push, move the stack pointer or
# call.  x86-64 only (skipped elsewhere).
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
[ "$(uname -m)" = x86_64 ] || { echo "not x86-64: the check reads x86-64 code"; exit 77; }
command -v objdump >/dev/null || { echo "objdump is not installed (binutils)"; exit 77; }
LIB=build/libsmpalloc.so
[ -f "$LIB" ] || { echo "FAIL: $LIB is missing (make lib)"; exit 1; }
fails=0
for fn in smp_malloc smp_free; do
  body=$(objdump -d --no-show-raw-insn "$LIB" | awk -v f="<$fn>:" '$2 == f {on=1; next} on && /ret/ {print; exit} on {print}')
  if [ -z "$body" ]; then echo "FAIL: $fn not found in $LIB"; fails=$((fails + 1)); continue; fi
  n=$(grep -c '' <<<"$body")
  bad=$(grep -E $'\t(push|call)|(sub|add) +\\$0x[0-9a-f]+,%rsp' <<<"$body")
  if [ -n "$bad" ]; then
    echo "FAIL: $fn's fast path ($n instructions) keeps a frame or calls:"; echo "$bad" | sed 's/^/     | /'
    fails=$((fails + 1))
  else
    echo "ok   $fn: $n instructions up to its first ret, no frame, no call"
  fi
done
echo "t_fastpath_frame: $fails failed"
[ $fails -eq 0 ]
