#!/usr/bin/env bash
# t_sanitize_tsan: ThreadSanitizer builds of the stress test and the API
# suite (tests/api/), with the allocator sources instrumented (-DAPI_PREFIX
# + $(CORE_SRCS); glibc malloc stays underneath for TSan itself).  Any TSan
# report fails the test (halt_on_error, exit code 66, and the output is
# searched for reports as well).
. "$(dirname "$0")/../lib.sh" || exit 2
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1"
need build/tests/stress_tsan build/tests/api_tsan
run() { check_run -n 60 -x 'ThreadSanitizer' "$@"; }
#                                            threads iters seed rounds max_large
run stress-tsan-4 build/tests/stress_tsan 4 2500 99 3 1048576
run stress-tsan-8 build/tests/stress_tsan 8 800 5 2 1048576
# Every free slab returned at once: the pool and purge paths (which walk
# the chunks under one lock while slot locks guard the slabs) run all the
# time.
run stress-tsan-purge env SMPALLOC_PURGE_DELAY_MS=0 SMPALLOC_PURGE_THRESHOLD=0 \
  build/tests/stress_tsan 4 2000 7 3 1048576
run api-tsan build/tests/api_tsan --quick
finish
