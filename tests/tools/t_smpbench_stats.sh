#!/usr/bin/env bash
# t_smpbench_stats: smpbench's statistics (tools/stats.c) - mean, sample
# sigma, quartiles, Tukey outliers, Student's t quantiles and the pooled
# t interval of the delta - against values computed independently (see
# tests/tools/smpbench_stats.c).  Exit 0 pass, else fail.
set -u
cd "${SMP_ROOT:-$(dirname "$0")/../..}" || exit 2
BIN=build/tests/smpbench_stats
if [ ! -x "$BIN" ]; then
  echo "FAIL: $BIN is missing (make test builds it)"; exit 1
fi
"$BIN"
