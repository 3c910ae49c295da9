#!/usr/bin/env bash
# t_fastpath_frame: the comments of src/alloc.c and src/base.h say that the
# fast paths of malloc and free keep no stack frame (every check's failure
# is a tail jump): keep them true for the compiler that builds us.  From the
# disassembly of build/libsmpalloc.so, the instructions of smp_malloc,
# smp_free, malloc and free (which run the fast paths themselves, src/alloc.h:
# no jump into their smp_* twins) up to their first `ret` may not push, move
# the stack pointer or call.  x86-64 only (skipped elsewhere).
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
[ "$(uname -m)" = x86_64 ] || skip "not x86-64: the check reads x86-64 code"
need_cmd objdump binutils
need "$LIB"
for fn in smp_malloc smp_free malloc free; do
  body=$(objdump -d --no-show-raw-insn "$LIB" | awk -v f="<$fn>:" '$2 == f {on=1; next} on && /ret/ {print; exit} on {print}')
  if [ -z "$body" ]; then fail "$fn not found in $LIB"; continue; fi
  if grep -qE $'\tjmp ' <<<"$(head -1 <<<"$body")"; then
    fail "$fn starts with a jump: it does not run the fast path itself"; continue
  fi
  n=$(grep -c '' <<<"$body")
  bad=$(grep -E $'\t(push|call)|(sub|add) +\\$0x[0-9a-f]+,%rsp' <<<"$body")
  if [ -n "$bad" ]; then
    fail "$fn's fast path ($n instructions) keeps a frame or calls:"; echo "$bad" | sed 's/^/     | /'
  else
    ok "$fn: $n instructions up to its first ret, no frame, no call"
  fi
done
finish
