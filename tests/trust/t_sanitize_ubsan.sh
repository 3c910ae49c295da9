#!/usr/bin/env bash
# t_sanitize_ubsan: UndefinedBehaviorSanitizer builds (-fsanitize=undefined
# -fno-sanitize-recover=all) of the API suite and the stress test with the
# allocator sources instrumented.  Any runtime error fails the test.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
. tests/trust/san_lib.sh
san_need build/tests/stress_ubsan build/tests/api_ubsan
run() { san_run 'runtime error' "$@"; }
run api-ubsan build/tests/api_ubsan
run stress-ubsan build/tests/stress_ubsan 4 3000 77 3
echo "t_sanitize_ubsan: $fails failed"
[ $fails -eq 0 ]
