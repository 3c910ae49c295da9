#!/usr/bin/env bash
# t_badfree: invalid frees must abort (SIGABRT) with exactly one line on
# stderr that starts with "smpalloc:", names the call (free, realloc,
# free_sized) and the problem (a pointer inside a small block or inside a
# large block's first 64 KiB is "inside a block", a foreign one "invalid
# pointer", a second free "double free", free_sized's size "larger than the
# block"), and gives the address in hex.  tests/trust/badfree.c commits
# one bad call per mode and prints the address first ("addr 0x...").
# Run under LD_PRELOAD, and a few modes with the static link and with the
# two-level page map (ulimit -v).
. "$(dirname "$0")/../lib.sh" || exit 2
PROG=$BIN
SPROG=${BIN}_static
need "$PROG" "$SPROG" "$LIB"

# problem MODE: what the message must say for MODE.
problem() {
  case $1 in
    *interior*) echo 'inside a block, not its start' ;;
    *sized*) echo 'size larger than the block' ;;
    *double*|*freed*) echo 'double free' ;;
    *) echo 'invalid pointer' ;;
  esac
}

# check label call soft cmd...: soft=1 only reports (behaviour the header
# allows to be missing).  The address may be given with or without 0x.
check() {
  local label=$1 call=$2 soft=$3; shift 3
  if expect_abort "$call([^A-Za-z0-9_]|\$)" "$(problem "$label")" '(0[xX])?[0-9a-fA-F]{6,}' "$@"; then
    echo "ok   $label: $LINE"
  elif [ "$soft" = 1 ]; then
    echo "note $label: $WHY (allowed: not guaranteed by the header)"; printf '     | %s\n' "$OUT" "$ERR"
  else
    echo "FAIL $label: $WHY"; printf '     | %s\n' "$OUT" "$ERR"; fails=$((fails + 1))
  fi
}

for mode in stack static mmap interior8 interior4096 double; do
  check "$mode" free 0 env LD_PRELOAD="$LIB" "$PROG" "$mode"
done
check double_large free 1 env LD_PRELOAD="$LIB" "$PROG" double_large
for mode in realloc_stack realloc_interior realloc_freed; do
  check "$mode" realloc 0 env LD_PRELOAD="$LIB" "$PROG" "$mode"
done
check free_sized_big free_sized 0 env LD_PRELOAD="$LIB" "$PROG" free_sized_big
for mode in stack mmap interior8 double realloc_interior; do
  call=free; [[ $mode == realloc_* ]] && call=realloc
  check "static-$mode" "$call" 0 env -u LD_PRELOAD "$SPROG" "$mode"
done
# Under an address-space limit the page map has two levels, not the flat
# map (free's slow path finds every entry): the same answers.
limited() { ulimit -v 1073741824 && exec "$@"; }
for mode in stack mmap interior8 interior4096 double realloc_interior free_sized_big; do
  call=free; [[ $mode == realloc_* ]] && call=realloc; [[ $mode == free_sized* ]] && call=free_sized
  check "two-level-$mode" "$call" 0 limited env LD_PRELOAD="$LIB" "$PROG" "$mode"
done
finish
