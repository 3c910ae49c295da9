#!/usr/bin/env bash
# t_fuzz: the smp_* API against the shadow model of tests/trust/fuzz_alloc.c.
#   1. fuzz_alloc_replay (the harness with its own main, built by the default
#      compiler with -DSMP_DEBUG) replays the committed corpus
#      tests/trust/corpus/fuzz_alloc and runs pseudo-random inputs;
#   2. fuzz_alloc (libFuzzer, clang -fsanitize=fuzzer,undefined) replays the
#      corpus, then fuzzes for FUZZ_SECONDS (20; 300 with TRUST_LONG=1)
#      starting from it, new inputs going to a scratch directory.
# Any crash, model mismatch or UBSan report fails.  Without libFuzzer the
# replay still runs and the test skips (77) with the reason.
. "$(dirname "$0")/../lib.sh" || exit 2
REPLAY=build/tests/fuzz_alloc_replay
FUZZ=build/tests/fuzz_alloc
CORPUS=tests/trust/corpus/fuzz_alloc
if [ "${TRUST_LONG:-0}" = 1 ]; then secs=${FUZZ_SECONDS:-300}; nrand=3000; else secs=${FUZZ_SECONDS:-20}; nrand=150; fi
need "$REPLAY"
[ -d "$CORPUS" ] || { echo "FAIL: $CORPUS is missing"; exit 1; }
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

step() { check_run -n 25 -x 'runtime error' "$@"; }

ncorpus=$(find "$CORPUS" -type f | wc -l)
step "replay corpus ($ncorpus inputs)" "$REPLAY" "$CORPUS"
step "random inputs" "$REPLAY" --random "$nrand" "${FUZZ_SEED:-20261130}"

if [ ! -x "$FUZZ" ]; then
  if [ -f "$FUZZ.skip" ]; then skipped+=("$(cat "$FUZZ.skip")"); else skipped+=("$FUZZ was not built (make test-bins)"); fi
  finish
fi
mkdir -p build/fuzz-artifacts "$tmp/new"
step "libFuzzer replay" "$FUZZ" -runs=0 -artifact_prefix=build/fuzz-artifacts/ "$CORPUS"
if step "libFuzzer, $secs s" "$FUZZ" -max_total_time="$secs" -max_len=1024 -rss_limit_mb=4096 \
     -print_final_stats=1 -artifact_prefix=build/fuzz-artifacts/ "$tmp/new" "$CORPUS"; then
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' <<<"$OUT")
  echo "fuzzed: ${runs:-?} inputs, $(find "$tmp/new" -type f | wc -l) new corpus entries (not kept)"
fi
finish
