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
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
LIB=${SMP_LIB:-$PWD/build/libsmpalloc.so}
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

for f in "$PROG" "$LIB"; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test-bins lib)"; exit 1; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0

# check mode call problem-regex
check() {
  local mode=$1 call=$2 problem=$3 out rc addr nlines line tok ok=0 why=""
  out=$(env SMPALLOC_CHECKED=1 LD_PRELOAD="$LIB" "$PROG" "$mode" 2>"$tmp/err")
  rc=$?
  addr=$(sed -n 's/^addr \(0x[0-9a-fA-F]*\)$/\1/p' <<<"$out" | head -n 1)
  nlines=$(grep -c '' "$tmp/err")
  line=$(head -n 1 "$tmp/err")
  if [ "$rc" -ne 134 ]; then why="exit status $rc, not 134 (SIGABRT)"
  elif [ -z "$addr" ]; then why="no address announced"
  elif [ "$nlines" -ne 1 ]; then why="$nlines lines on stderr, want 1"
  elif [[ $line != smpalloc:* ]]; then why="the line does not start with smpalloc:"
  elif ! grep -Eq "(^|[^A-Za-z0-9_])$call\\(" <<<"$line"; then why="does not name $call()"
  elif ! grep -Eq "$problem" <<<"$line"; then why="does not name the problem ($problem)"
  else
    why="address $addr not in the message"
    for tok in $(grep -oE '0x[0-9a-fA-F]+' <<<"$line"); do
      if [ $((tok)) -eq $((addr)) ]; then ok=1; why=""; fi
    done
  fi
  if [ $ok -eq 1 ]; then
    echo "ok   $mode: $line"
  else
    echo "FAIL $mode: $why"; printf '     | %s\n' "$out" "$(cat "$tmp/err")"; fails=$((fails + 1))
  fi
}

check double_later free 'double free|already freed'
check stack free 'invalid pointer|not allocated'
check static free 'invalid pointer|not allocated'
check mmap free 'invalid pointer|not allocated'
check unhanded free 'double free|never|not allocated|invalid'
check interior8 free 'inside a block|interior'
check uaf_write malloc 'written after its free|use after free'

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
echo "t_checked: $fails failed"
[ $fails -eq 0 ]
