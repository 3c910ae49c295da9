#!/usr/bin/env bash
# t_mem_idle: memory freed in a burst goes back while the program is idle,
# with no allocator call (tests/mem/mem_idle.c; src/purge.c, the background
# thread).  Two threads allocate 96 MiB of 16 B-8 KiB blocks and free the
# newest seven eighths (about 12 MiB stays live); then nothing calls the
# allocator.  Under LD_PRELOAD=build/libsmpalloc.so:
#   - with SMPALLOC_HUGEPAGES=0, the RSS falls by two thirds of its excess
#     over the live bytes within 3 s (it takes about one purge delay, 100
#     ms; 87 -> 25 MiB; the version before never did: the program's own
#     calls were the only ones that purged);
#   - by default, by at least a third: granules purged inside a chunk
#     advised for huge pages may be filled again by khugepaged, which
#     collapses a 2 MiB range with a single page present under its default
#     max_ptes_none (511): 26-38 MiB at the end of 3 s;
#   - once it has, the background thread sleeps: at most 2 wake-ups in the
#     next idle second;
#   - the idle threads' caches were emptied too (they are blocked on a
#     barrier): at most 0.5 MiB counted in use beyond the live blocks (the
#     version before: 3.2 MiB their caches held);
#   - with SMPALLOC_BACKGROUND=0 it does not fall (the control: as before);
#   - a program that allocates a little starts no thread (1 task);
#   - malloc_trim(0) after four threads allocated 1 GiB and four others
#     freed it, all eight idle: at most 2 MiB more resident than at the
#     start (1.0-1.3 MiB; the version before 2.4-5.4 MiB: descriptors of
#     purged chunks, parcels, the idle caches' arrays, clean granules of
#     huge pages that khugepaged filled again; glibc about 33).
# glibc runs too, for comparison (it keeps all of it): not asserted.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
field() { sed -n "s/.*\b$1=\(-\?[0-9.]*\).*/\1/p" <<<"$OUT"; }
if check_run -t 60 "idle after a burst, SMPALLOC_HUGEPAGES=0" env SMPALLOC_HUGEPAGES=0 LD_PRELOAD="$LIB" "$BIN" burst 3000; then
  r=$(field reached)
  [ "$r" -ge 0 ] && ok "RSS $(field after) -> $(field end) MiB (live $(field live)): two thirds of the excess back after $r ms idle" \
    || fail "RSS $(field after) -> $(field end) MiB in 3 s idle, live $(field live): not two thirds of the excess back"
fi
if check_run -t 60 "idle after a burst" env LD_PRELOAD="$LIB" "$BIN" burst 3000 0.333; then
  r=$(field reached) w=$(field wakeups)
  [ "$r" -ge 0 ] && ok "RSS $(field after) -> $(field end) MiB (live $(field live)): a third of the excess back after $r ms idle" \
    || fail "RSS $(field after) -> $(field end) MiB in 3 s idle, live $(field live): not a third of the excess back"
  [ "$w" -ge 0 ] && [ "$w" -le 2 ] && ok "$w wake-ups of the background thread in an idle second" \
    || fail "$w wake-ups of the background thread in an idle second (want 0-2; -1: no thread)"
  c=$(field cached)
  awk -v c="$c" 'BEGIN { exit !(c >= 0 && c <= 0.5) }' && ok "idle threads' caches emptied: $c MiB beyond the live blocks" \
    || fail "$c MiB counted in use beyond the live blocks after 3 s idle (idle threads' caches not emptied?)"
fi
if check_run -t 60 "SMPALLOC_BACKGROUND=0" env SMPALLOC_BACKGROUND=0 LD_PRELOAD="$LIB" "$BIN" burst 1000; then
  [ "$(field reached)" -lt 0 ] && [ "$(field wakeups)" -lt 0 ] && ok "no thread, RSS stays: $(field after) -> $(field end) MiB" \
    || fail "SMPALLOC_BACKGROUND=0: RSS fell or a purge thread runs"
fi
if check_run -t 60 "a small program" env LD_PRELOAD="$LIB" "$BIN" small; then
  [ "$(field threads)" = 1 ] && ok "one task: no background thread for nothing" \
    || fail "$(field threads) tasks in a program that allocates 100 blocks"
fi
if check_run -t 120 "malloc_trim(0) with idle threads" env LD_PRELOAD="$LIB" "$BIN" trim; then
  x=$(field excess)
  awk -v x="$x" 'BEGIN { exit !(x <= 2) }' && ok "after the trim $x MiB more than at the start" \
    || fail "after the trim $x MiB more than at the start, want <= 2"
fi
check_run -t 60 "glibc (no preload), for comparison: not asserted" "$BIN" burst 1000
check_run -t 120 "glibc's trim, for comparison: not asserted" "$BIN" trim
finish
