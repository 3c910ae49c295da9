#!/usr/bin/env bash
# t_mem_mlock: mlockall locks every page of the process's mappings and
# faults them in; smpalloc takes the call and first gives back what the
# heap's reservations of address space have left (override.c, mlockall;
# chunk.c, chunk_unreserve), so that locking costs what it costs under
# glibc, not the reservations (128 MiB at once: the build before this test
# grew by 130-139 MiB at the call).  tests/mem/mem_mlock.c, after one malloc:
#   - mlockall(MCL_CURRENT | MCL_FUTURE): RSS grows by less than 32 MiB at
#     the call (the heap's first chunk and the metadata: 6.5 MiB here), and
#     by less than 200 + 64 MiB over 200 MiB of blocks allocated after it
#     (more than the first two reservations hold: 210-225 MiB here, and
#     400-470 MiB with the reservations left in place);
#   - mlockall(MCL_FUTURE) alone: the same bounds (a reservation made
#     after it would be faulted in whole);
#   - mlockall(MCL_CURRENT | MCL_ONFAULT): pages are locked only as they
#     are written, the reservations stay; the same bounds hold;
#   - mlockall(0) fails with EINVAL, as the kernel's does.
# Skipped where the kernel refuses the call (no CAP_IPC_LOCK and a low
# RLIMIT_MEMLOCK: the page map's read-only reservation alone is 16 GiB of
# the address space MCL_CURRENT must be allowed to lock).  glibc runs too.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
# field NAME: the value of NAME in the program's output line.
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$OUT"; }
OUT=$(env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc current,future 1 2>&1)
[ $? -eq 77 ] && skip "the kernel refuses mlockall here ($OUT)"
for flags in current,future future current,onfault; do
  if check_run -t 120 "smpalloc (LD_PRELOAD): mlockall($flags), then 200 MiB of blocks" \
      env LD_PRELOAD="$LIB" "$BIN" --expect smpalloc "$flags" 200; then
    at=$(field mlockall_kib) after=$(field blocks_kib)
    [ "$at" -lt $((32 * 1024)) ] && ok "RSS grew $at KiB at the call" ||
      fail "RSS grew $at KiB at mlockall($flags), want < 32768 (the reservations locked?)"
    [ "$after" -lt $((264 * 1024)) ] && ok "RSS grew $after KiB over 200 MiB of blocks" ||
      fail "RSS grew $after KiB over 200 MiB of blocks after mlockall($flags), want < 270336"
  fi
done
glibc_run 120 current,future 200
finish
