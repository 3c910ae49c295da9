#!/usr/bin/env bash
# t_checked: checked mode (SMPALLOC_CHECKED=1, under LD_PRELOAD) catches
# what tests/trust/badfree.c does wrong: a double free that is not
# immediate (free(a); free(b); free(a)), frees of pointers never handed out
# (stack, static, mmap'd, a block start in a live slab never allocated), an
# interior pointer, a write into a freed block followed by allocations of
# its size.  Each must end with exactly one stderr line starting
# "smpalloc:" that names the problem, the call and the address (hex), then
# SIGABRT (exit 134).  A clean program runs silently in checked mode.
#
# bash tests/trust/t_checked.sh --cost [runs]: build/seed with and without
# SMPALLOC_CHECKED=1, interleaved (10 runs each), prints the median ratio
# (informational, never asserted; `make checked-cost`).
. "$(dirname "$0")/../lib.sh" || exit 2
# badfree.c is t_badfree's program.
PROG=build/tests/badfree

if [ "${1:-}" = --cost ]; then
  runs=${2:-10}
  [ -x build/seed ] && [ -f "$LIB" ] || { echo "build/seed or $LIB missing (make)"; exit 1; }
  t() { local s e; s=$(date +%s%N); env "$@" LD_PRELOAD="$LIB" build/seed >/dev/null 2>&1 || return 1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
  plain=() checked=()
  for ((i = 0; i < runs; i++)); do
    plain+=("$(t SMPALLOC_CHECKED=0)") || exit 1
    checked+=("$(t SMPALLOC_CHECKED=1)") || exit 1
  done
  med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
  mp=$(med "${plain[@]}") mc=$(med "${checked[@]}")
  echo "build/seed under LD_PRELOAD, $runs runs each, interleaved (microseconds):"
  echo "  plain:   ${plain[*]}"
  echo "  checked: ${checked[*]}"
  awk -v p="$mp" -v c="$mc" 'BEGIN { printf "median plain %.1f ms, checked %.1f ms, ratio checked/plain %.2f\n", p/1000, c/1000, c/p }'
  exit 0
fi

need "$PROG" "$LIB"

# check mode call problem-regex: the line names the call as "call(" and the
# address with 0x.
check() {
  local mode=$1 call=$2 problem=$3
  if expect_abort "$call\\(" "$problem" '0x[0-9a-fA-F]+' env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$PROG" "$mode"; then
    echo "ok   $mode: $LINE"
  else
    echo "FAIL $mode: $WHY"; printf '     | %s\n' "$OUT" "$ERR"; fails=$((fails + 1))
  fi
}

# The problems as docs/trust.md words them.
check double_later free 'double free \(the block is free already\)'
check stack free 'invalid pointer \(not allocated by smpalloc'
check static free 'invalid pointer \(not allocated by smpalloc'
check mmap free 'invalid pointer \(not allocated by smpalloc'
check unhanded free 'invalid pointer \(a block that was never allocated\)'
check interior8 free 'invalid pointer \(inside a block, not its start\)'
check uaf_write malloc 'a freed block was written after its free \(use after free\)'

out=$(env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$PROG" ok 2>&1); rc=$?
if [ $rc -ne 0 ] || [ "$out" != ok ]; then
  echo "FAIL ok: a clean run in checked mode (exit $rc): $out"; fails=$((fails + 1))
else
  echo "ok   a clean run in checked mode is silent"
fi
# For comparison only: the same misuse without checked mode.
for mode in double_later uaf_write unhanded; do
  bash -c '"$@"' _ env SMPALLOC_CHECKED=0 LD_PRELOAD="$LIB" "$PROG" "$mode" >"$tmp/out" 2>&1; rc=$?
  echo "note without checked mode, $mode: exit $rc, $(grep -m1 -E 'smpalloc:|survived' "$tmp/out" || echo '-')"
done
finish
