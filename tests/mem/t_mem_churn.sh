#!/usr/bin/env bash
# t_mem_churn: blocks of 32 KiB to 1 MiB replaced at random, the first byte
# of each written (tests/mem/mem_churn.c), in a steady state:
#   - at most 4 pages returned to the kernel per operation (a freed run is
#     reused with its pages; cbf7867's library returned 63);
#   - RSS under 128 MiB for 2,000 live blocks whose first pages alone are
#     written (26 MiB here; not 2 MiB faulted in where a page is touched:
#     234 MiB with cbf7867's library);
#   - at most 4 page faults per operation (one is the new block's first
#     page where no block started before);
#   - then every block freed and malloc_trim(0), under strace when it is
#     installed: at most 8 calls return a single page (the slab bitmaps of
#     the program's own small blocks); the bitmap pages of granules that
#     only held runs were never written and cost no system call (a library
#     that returned them made 3,801 such calls here).
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "$LIB"
out=$(env LD_PRELOAD="$LIB" "$BIN" smpalloc 2>&1) || { echo "$out"; fail "mem_churn failed"; finish; }
echo "$out"
read -r _ pages _ faults _ rss _ <<<"$out"
awk -v p="$pages" 'BEGIN { exit !(p <= 4) }' && ok "$pages pages returned per operation" \
  || fail "$pages pages returned per operation, want <= 4 (purged and faulted in again)"
awk -v r="$rss" 'BEGIN { exit !(r < 128) }' && ok "RSS $rss MiB" \
  || fail "RSS $rss MiB, want < 128 (huge pages where a page is written?)"
awk -v f="$faults" 'BEGIN { exit !(f <= 4) }' && ok "$faults page faults per operation" \
  || fail "$faults page faults per operation, want <= 4"
if command -v strace >/dev/null; then
  strace -f -e trace=madvise,munmap -o "$tmp/trace" env LD_PRELOAD="$LIB" "$BIN" smpalloc trim >/dev/null 2>&1 \
    || fail "mem_churn trim failed under strace"
  single=$(grep -c ', 4096, MADV_DONTNEED)\|, 4096)' "$tmp/trace")
  [ "$single" -le 8 ] && ok "$single single-page returns in the trim" \
    || fail "$single single-page returns in the trim, want <= 8 (bitmap pages never written?)"
else
  skipped+=("the trim's system calls (no strace)")
fi
finish
