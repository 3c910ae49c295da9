#!/usr/bin/env bash
# t_mem_hugepages: once a size class holds 4 MiB of slabs, its fresh slabs
# come in transparent huge pages, and so do the runs (large blocks up to
# 1 MiB) of a heap of 16 MiB; a class below that never gets one, nor do the
# runs of a small heap; and SMPALLOC_HUGEPAGES=0 turns them off
# (docs/design.md, "Page faults and huge pages").  tests/mem/mem_hugepages.c
# under LD_PRELOAD=build/libsmpalloc.so:
#   - dense 64: 64 MiB of 64-byte blocks.  At least half of it (32 MiB) is
#     in huge pages, and it takes fewer than 4,096 page faults (4 KiB pages
#     would take 16,384); its dense chunks are carved from reservations
#     (chunk.c, region_take): at most 3 areas advised for huge pages;
#     where reservations are not made (an address-space limit, `ulimit
#     -v`; or strict overcommit), each dense chunk is mapped alone, apart
#     from the others, an area of its own (region_map_alone): at least 8
#     areas (side by side, the kernel would merge them into one or two);
#     the same under a data limit (`ulimit -d`, which counts a reservation
#     as data);
#   - runs 64: 64 MiB of 96 KiB blocks, the same;
#   - bigruns 64: 64 MiB of 900 KiB blocks written whole: at least 32 MiB
#     in huge pages (a probe of 225 pages counts them all, not the 64 that
#     one mincore call reads: 64 of 225 read as sparse);
#   - dense 64 and runs 64 with SMPALLOC_HUGEPAGES=0: no huge page;
#   - dense 12: 12 MiB of 64-byte blocks, a class past the mark in a heap
#     under 16 MiB: at least 4 MiB in huge pages;
#   - dense 3: 3 MiB of 64-byte blocks, below the mark: no huge page;
#   - runs 8: 8 MiB of 96 KiB blocks, a heap below 16 MiB: no huge page;
#   - sparse (one block of each size class, written whole): no huge page,
#     and RSS grows by less than 2 MiB;
#   - big 16: one block of 16 MiB (mapped alone), written whole: no huge
#     page, also with SMPALLOC_HUGEPAGES=2;
#   - whole 64: 64 MiB of 24 KiB blocks (the 24 KiB class, two to a
#     slab), written whole: at least 32 MiB in huge pages (the class, of
#     blocks of 8 KiB and more, showed the program writing its pages:
#     slot.c, class_use);
#   - edges 32: 32 MiB of the same blocks, each written at its first and
#     last byte only: no huge page, and RSS grows by less than half of the
#     32 MiB (their other pages are never touched, never faulted in ahead);
#   - starts 32: 32 MiB of 8 KiB blocks, each written at its first byte
#     only (half of each slab's pages): no huge page, and RSS grows by less
#     than 20 MiB (the class is not dense: SMP_WHOLE_EIGHTHS; counted
#     dense at 3/8, its slabs were faulted in whole: 32 MiB);
#   - SMPALLOC_HUGEPAGES=2 (eager): sparse and runs 8 each get huge pages
#     (at least 2 MiB), and sparse's RSS grows by less than 8 MiB.
# The policy is the same on every machine: no clock decides (the fault
# timing, SMPALLOC_FAULT_NS, is gone: docs/design.md, "Tried and left out").
# The machine decides: skipped when its transparent huge pages are off
# (never) or unknown.  Where the kernel gives them to every mapping
# (always), smpalloc advises what it does not want in huge pages for small
# ones (os.h, os_smallpages_unless_asked), so every check holds there too.
# Exit 0 pass, 77 skip, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
THP=/sys/kernel/mm/transparent_hugepage/enabled
[ -r "$THP" ] || skip "no transparent huge pages here ($THP is missing)"
mode=$(sed -n 's/.*\[\([a-z]*\)\].*/\1/p' "$THP")
echo "transparent huge pages: $mode"
[ "$mode" = never ] && skip "transparent huge pages are off on this machine (never)"

# field NAME: the value of NAME in the program's output line.
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$OUT"; }

if check_run -t 120 "dense 12: 12 MiB of 64-byte blocks, a class past the mark, a heap under 16 MiB" env LD_PRELOAD="$LIB" "$BIN" dense 12; then
  huge=$(field huge_kib)
  [ "$huge" -ge 4096 ] && ok "$huge KiB in huge pages" || fail "only $huge KiB in huge pages for a class past 4 MiB, want >= 4096"
fi
# Reservations are made where the kernel's accounting is not strict and
# the process has no address-space or data limit (os.h, os_reserve); the
# later passes of each phase set one (64 GiB of address space: room for
# the heap, not for the page map's reservation; 8 GiB of data), so that
# each dense chunk is mapped alone.
reserving=yes
[ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" = 2 ] && reserving=no
[ "$(ulimit -v)" != unlimited ] && reserving=no
[ "$(ulimit -d)" != unlimited ] && reserving=no
echo "reservations: $reserving"
for limit in none "-v $((64 << 20))" "-d $((8 << 20))"; do
  for phase in "dense 64:64 MiB of 64-byte blocks" "runs 64:64 MiB of 96 KiB blocks (runs)"; do
    # shellcheck disable=SC2086
    if check_run -t 120 "${phase%%:*}: ${phase#*:}, limit: $limit" \
        bash -c '[ "$1" = none ] || ulimit $1 || exit 2; shift; exec "$@"' - "$limit" env LD_PRELOAD="$LIB" "$BIN" ${phase%%:*}; then
      huge=$(field huge_kib) faults=$(field faults)
      [ "$huge" -ge $((32 * 1024)) ] && ok "$huge KiB in huge pages" || fail "only $huge KiB in huge pages, want >= 32768"
      [ "$faults" -lt 4096 ] && ok "$faults page faults" || fail "$faults page faults, want < 4096"
      areas=$(field hg_areas)
      if [ "$limit" = none ] && [ "$reserving" = yes ]; then
        [ "$areas" -le 3 ] && ok "$areas areas advised for huge pages" ||
          fail "$areas areas advised for huge pages, want <= 3 (dense chunks carved from reservations)"
      else
        [ "$areas" -ge 8 ] && ok "$areas areas advised for huge pages" ||
          fail "$areas areas advised for huge pages, want >= 8 (dense chunks mapped alone, apart)"
      fi
    fi
  done
done
if check_run -t 120 "bigruns 64: 64 MiB of 900 KiB blocks, written whole" env LD_PRELOAD="$LIB" "$BIN" bigruns 64; then
  huge=$(field huge_kib)
  [ "$huge" -ge $((32 * 1024)) ] && ok "$huge KiB in huge pages" || fail "only $huge KiB in huge pages, want >= 32768"
fi
if check_run -t 120 "whole 64: 64 MiB of 24 KiB blocks, written whole" env LD_PRELOAD="$LIB" "$BIN" whole 64; then
  huge=$(field huge_kib)
  [ "$huge" -ge $((32 * 1024)) ] && ok "$huge KiB in huge pages" || fail "only $huge KiB in huge pages, want >= 32768"
fi
for phase in dense runs; do
  if check_run -t 120 "$phase 64, SMPALLOC_HUGEPAGES=0" env SMPALLOC_HUGEPAGES=0 LD_PRELOAD="$LIB" "$BIN" $phase 64; then
    [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages with SMPALLOC_HUGEPAGES=0"
  fi
done
if check_run -t 120 "dense 3: 3 MiB of 64-byte blocks, below the mark" env LD_PRELOAD="$LIB" "$BIN" dense 3; then
  [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for a class under 4 MiB"
fi
if check_run -t 120 "runs 8: 8 MiB of 96 KiB blocks, a heap under 16 MiB" env LD_PRELOAD="$LIB" "$BIN" runs 8; then
  [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for the runs of a small heap"
fi
if check_run -t 120 "sparse: one block of every class" env LD_PRELOAD="$LIB" "$BIN" sparse; then
  [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for a light use"
  [ "$(field rss_growth_kib)" -lt 2048 ] && ok "RSS grew $(field rss_growth_kib) KiB" ||
    fail "RSS grew $(field rss_growth_kib) KiB for one block of each class, want < 2048"
fi
if check_run -t 120 "edges 32: 32 MiB of 24 KiB blocks, each written at its ends" env LD_PRELOAD="$LIB" "$BIN" edges 32; then
  [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for blocks written at their ends"
  [ "$(field rss_growth_kib)" -lt $((16 * 1024)) ] && ok "RSS grew $(field rss_growth_kib) KiB" ||
    fail "RSS grew $(field rss_growth_kib) KiB for 32 MiB of blocks written at their ends, want < 16384"
fi
if check_run -t 120 "starts 32: 32 MiB of 8 KiB blocks, each written at its first byte" env LD_PRELOAD="$LIB" "$BIN" starts 32; then
  [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for blocks written at their first byte"
  [ "$(field rss_growth_kib)" -lt $((20 * 1024)) ] && ok "RSS grew $(field rss_growth_kib) KiB" ||
    fail "RSS grew $(field rss_growth_kib) KiB for 32 MiB of blocks half of whose pages were written, want < 20480"
fi
for eager in 1 2; do
  if check_run -t 120 "big 16: one block of 16 MiB, SMPALLOC_HUGEPAGES=$eager" env SMPALLOC_HUGEPAGES=$eager LD_PRELOAD="$LIB" "$BIN" big 16; then
    [ "$(field huge_kib)" -eq 0 ] && ok "no huge page" || fail "$(field huge_kib) KiB in huge pages for a mapped block"
  fi
done

# Eager: every slab and run from the start.
for phase in sparse "runs 8"; do
  # shellcheck disable=SC2086
  if check_run -t 120 "$phase, SMPALLOC_HUGEPAGES=2" env SMPALLOC_HUGEPAGES=2 LD_PRELOAD="$LIB" "$BIN" $phase; then
    [ "$(field huge_kib)" -ge 2048 ] && ok "$(field huge_kib) KiB in huge pages" ||
      fail "$(field huge_kib) KiB in huge pages with SMPALLOC_HUGEPAGES=2, want >= 2048"
    if [ "$phase" = sparse ]; then
      [ "$(field rss_growth_kib)" -lt 8192 ] && ok "RSS grew $(field rss_growth_kib) KiB" ||
        fail "RSS grew $(field rss_growth_kib) KiB for one block of each class, want < 8192"
    fi
  fi
done
finish
