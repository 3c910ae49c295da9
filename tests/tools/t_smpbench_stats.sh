#!/usr/bin/env bash
# t_smpbench_stats: smpbench's statistics (tools/stats.c) - mean, sample
# sigma, quartiles, Tukey outliers, Student's t quantiles and the pooled
# t interval of the delta - against values computed independently (see
# tests/tools/smpbench_stats.c).  Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
need "$BIN"
check_run smpbench_stats "$BIN"
finish
