#!/usr/bin/env bash
# t_internal: exhaustive checks of the size-class table, the size -> class
# lookup and the one-multiply block-start test (tests/api/internal.c, built
# with the core sources so it sees the internal header).
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN"
check_run internal "$BIN"
finish
