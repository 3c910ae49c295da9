#!/usr/bin/env bash
# t_sanitize_ubsan: UndefinedBehaviorSanitizer builds (-fsanitize=undefined
# -fno-sanitize-recover=all) of the API suite and the stress test
# (tests/api/) with the allocator sources instrumented.  Any runtime error
# fails the test.
. "$(dirname "$0")/../lib.sh" || exit 2
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
need build/tests/stress_ubsan build/tests/api_ubsan
run() { check_run -n 60 -x 'runtime error' "$@"; }
run api-ubsan build/tests/api_ubsan
run stress-ubsan build/tests/stress_ubsan 4 3000 77 3
finish
