#!/usr/bin/env bash
# t_smpbench_perf: the perf_event_open plumbing behind the hardware
# counters - one group opened disabled, enabled when the child execs,
# inherited by its threads, read as a group or counter by counter - checked
# on any machine by having smpbench open software events in the hardware
# ones' place (SMPBENCH_TEST_PERF_SW=1, or =separate for the per-counter
# read used when a kernel refuses group reads with inherit).
#
# The command (tests/tools/smpbench_perf.c) takes >= 1024 page faults in 4
# threads; the page-fault stand-in (reported as "instructions") must count
# them all - so the counter followed the threads - and no more than
# rusage's page_faults, which also include the faults before exec.
# Exit 0 pass, 77 skip (perf_event_open refused even software events).
. "$(dirname "$0")/../lib.sh" || exit 2
SMPBENCH=build/smpbench
PROG=$BIN
need "$SMPBENCH" "$PROG"

for mode in 1 separate; do
  SMPBENCH_TEST_PERF_SW=$mode "$SMPBENCH" --color never --runs 3 --warmup 0 \
    --allocs glibc --csv "$tmp/$mode.csv" -- "$PROG" >"$tmp/$mode.out" 2>"$tmp/$mode.err"
  rc=$?
  if grep -q "counters unavailable" "$tmp/$mode.err"; then
    skip "perf_event_open refuses software events here: $(cat "$tmp/$mode.err")"
  fi
  [ "$rc" -eq 0 ] || { fail "mode $mode: exit status $rc"; cat "$tmp/$mode.err"; continue; }
  grep -q '^  instructions ' "$tmp/$mode.out" || fail "mode $mode: no counter rows"
  # Every run: task clock > 0, 1024 <= perf faults <= rusage faults.
  awk -F, -v mode="$mode" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == "run" {
      runs++
      clock = $col["cpu_cycles"]; pf = $col["instructions"]; ru = $col["page_faults"]
      if (!(clock > 0)) { print "mode " mode ": task clock " clock; bad = 1 }
      if (pf < 1024) { print "mode " mode ": " pf " faults counted, threads not followed"; bad = 1 }
      if (pf > ru) { print "mode " mode ": " pf " faults counted > rusage " ru; bad = 1 }
    }
    END { if (runs != 3) { print "mode " mode ": " runs " runs"; bad = 1 }; exit bad }
  ' "$tmp/$mode.csv" || fail "mode $mode: counts wrong"
done

finish
