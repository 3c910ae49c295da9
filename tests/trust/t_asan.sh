#!/usr/bin/env bash
# t_asan: AddressSanitizer builds (-fsanitize=address) of the API suite
# (tests/api/api.c) and the stress test (tests/api/stress.c), both with
# -DAPI_PREFIX and compiled together with the allocator sources, so the
# allocator's own code is instrumented (its stack, globals and every access
# it makes to memory ASan knows).  ASan's malloc serves the programs' libc
# calls; the smp_* blocks are smpalloc's own mappings.  Any ASan report
# fails.
. "$(dirname "$0")/../lib.sh" || exit 2
export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1"
need build/tests/api_asan build/tests/stress_asan
if [ "${TRUST_LONG:-0}" = 1 ]; then sargs=(8 20000 91 4); qa=(); else sargs=(4 3000 77 3); qa=(--quick); fi
run() { check_run -n 60 -x 'ERROR: (AddressSanitizer|LeakSanitizer)' "$@"; }
run api-asan build/tests/api_asan "${qa[@]}"
run stress-asan build/tests/stress_asan "${sargs[@]}"
finish
