#!/usr/bin/env bash
# t_seed: the seed workload (bench/seed.c) gives the right answer under
# glibc malloc and under LD_PRELOAD=build/libsmpalloc.so, with the default
# worker count (one per CPU), -j 8 and -j 1, and both allocators agree.
#
# The expected `seed -v` line is computed here, independently, from the
# workload's definition: job n (0 <= n < N) appends 0..n-1 to a list and
# allocPrints each of them, so every i < N-1 occurs in N-1-i jobs:
#   numbers = strings = N(N-1)/2
#   numsum   = sum_i (N-1-i) * i
#   bytes    = sum_i (N-1-i) * (decimal length of i)
#   digitsum = sum_i (N-1-i) * (digit sum of i)
# Run from the repository root (tests/run.sh does); exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2

SEED=build/seed
LIB=${SEED_LIB:-$LIB}   # SEED_LIB: try another allocator
REPS=${SEED_REPS:-5}   # runs per configuration under smpalloc
need "$SEED" "$LIB"

expected() { # $1 = job count
  awk -v N="$1" 'BEGIN {
    numsum = 0; bytes = 0; digitsum = 0
    for (i = 0; i < N - 1; i++) {
      w = N - 1 - i
      s = i ""
      ds = 0
      for (k = 1; k <= length(s); k++) ds += substr(s, k, 1) + 0
      numsum += w * i; bytes += w * length(s); digitsum += w * ds
    }
    c = (N > 0) ? N * (N - 1) / 2 : 0
    printf "seed jobs=%d numbers=%.0f numsum=%.0f strings=%.0f bytes=%.0f digitsum=%.0f errors=0\n",
           N, c, numsum, c, bytes, digitsum
  }'
}

# run LABEL EXPECTED [env...] -- ARGS...: one run, checked.
run_one() {
  local label=$1 want=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local out err rc
  err=$(mktemp)
  out=$(env "${envs[@]}" timeout 120 "$SEED" "$@" 2>"$err")
  rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$label: seed $* exited $rc"; echo "  printed: $out"
    sed 's/^/  stderr: /' "$err" | head -n 20
  elif [ -s "$err" ]; then
    # e.g. ld.so's "object ... cannot be preloaded: ignored", which would
    # otherwise turn the comparison into glibc against glibc.
    fail "$label: seed $* wrote to stderr"; sed 's/^/  stderr: /' "$err" | head -n 20
  elif [ "$out" != "$want" ]; then
    fail "$label: seed $* printed"; echo "  got:      $out"; echo "  expected: $want"
  fi
  rm -f "$err"
  LAST_OUT=$out
}

# The preload must really load (and a plain program must work under it):
# cat, run under the preload, reads its own maps.
# shellcheck disable=SC2002
if ! LD_PRELOAD=$LIB cat /proc/self/maps 2>/dev/null | grep -qF "$(basename "$LIB")"; then
  fail "LD_PRELOAD=$LIB does not load into a process"
fi

want=$(expected 1000)
echo "expected: $want"
for jobs in "" "-j 8" "-j 1"; do
  # shellcheck disable=SC2086
  run_one "glibc ${jobs:-default}" "$want" -- -v $jobs
  glibc_out=$LAST_OUT
  for ((r = 1; r <= REPS; r++)); do
    # shellcheck disable=SC2086
    run_one "smpalloc ${jobs:-default} #$r" "$want" LD_PRELOAD="$LIB" -- -v $jobs
    if [ "$LAST_OUT" != "$glibc_out" ]; then
      fail "smpalloc ${jobs:-default} #$r: output differs from glibc's"
    fi
  done
  echo "ok: ${jobs:-default workers}: $glibc_out"
done

# Default mode prints nothing.
out=$(LD_PRELOAD=$LIB timeout 120 "$SEED" 2>&1); rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
  fail "smpalloc: seed without -v exited $rc, printed '$out'"
fi

# Other job counts, including the empty and the one-string jobs.
for n in 0 1 2 17 300; do
  want=$(expected "$n")
  run_one "glibc -n $n" "$want" -- -v -n "$n" -j 3
  run_one "smpalloc -n $n" "$want" LD_PRELOAD="$LIB" -- -v -n "$n" -j 3
done

finish
