#!/usr/bin/env bash
# fastpath.sh - instructions per malloc/free pair, from callgrind, for
# smpalloc and every other allocator found (`make bench-fastpath`).
#
# Runs build/fastpath (bench/fastpath.c: PAIRS pairs on mixed sizes 8..256
# with 64 blocks live) under `valgrind --tool=callgrind` once per allocator,
# and once with no allocator call ("fastpath 0": the loop alone).  The
# allocator's cost of a pair is (its total - the loop's total) / PAIRS.
# Counts are exact and repeatable: no timing.
#
#   bench/fastpath.sh [--build DIR] [--pairs N] [--allocs LIST]
#   (--allocs: passed to smpbench --list-allocs; default every one found)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=build PAIRS=1000000 ALLOCS=
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    --allocs) ALLOCS=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fastpath.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "fastpath.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
for f in "$BUILD/fastpath" "$BUILD/smpbench" "$BUILD/libsmpalloc.so"; do
  [ -e "$f" ] || { echo "fastpath.sh: $f is missing (make $BUILD/fastpath $BUILD/smpbench lib)" >&2; exit 2; }
done
# Ir of one run: PRELOAD ARGS...
# (nothing when the program fails under valgrind: snmalloc 0.7.5 does).
ir() {
  local pre=$1 out; shift
  out=$(LD_PRELOAD=$pre valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$BUILD/fastpath" "$@" 2>&1) || return 0
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out"
}
base=$(ir "" 0 "$PAIRS")
[ -n "$base" ] || { echo "fastpath.sh: callgrind gave no count" >&2; exit 1; }
printf '%-18s %14s %12s\n' allocator instructions "per pair"
printf '%-18s %14s %12s\n' "(loop alone)" "$base" "-"
# The allocators smpbench finds (the same list as make bench).
"$BUILD/smpbench" --list-allocs ${ALLOCS:+--allocs "$ALLOCS"} 2>/dev/null | while IFS=$'\t' read -r name lib _; do
  [ "$name" = glibc ] && lib=""
  n=$(ir "$lib" "$PAIRS")
  [ -n "$n" ] || { printf '%-18s %14s\n' "$name" "(failed)"; continue; }
  awk -v a="$name" -v n="$n" -v b="$base" -v p="$PAIRS" \
    'BEGIN { printf "%-18s %14d %12.1f\n", a, n, (n - b) / p }'
done
