#!/usr/bin/env bash
# Exhaustive checks of the size-class table, the size -> class lookup and the
# one-multiply block-start test (tests/api/internal_check.c, built against the
# core sources so it sees the internal header).
set -u
cd "${SMP_ROOT:-.}"
out=build/tests/internal_check
mkdir -p build/tests
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Iinclude -Isrc -o "$out" tests/api/internal_check.c \
  src/sizeclass.c || exit 1
"$out"
