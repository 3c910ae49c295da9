#!/usr/bin/env bash
# t_api: the API conformance suite (tests/api/api.c) three ways:
#   1. plain names against glibc (the reference: checks the suite itself),
#   2. plain names under LD_PRELOAD=build/libsmpalloc.so (must detect smpalloc),
#   3. the smp_* names compiled with the library sources (api_prefix).
# SMP_LIB=path runs step 2 against another preloadable library.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN" "${BIN}_prefix" "$LIB"
check_run glibc "$BIN" --expect=glibc
check_run preload env LD_PRELOAD="$LIB" "$BIN" --expect=smpalloc
check_run prefixed "${BIN}_prefix"
finish
