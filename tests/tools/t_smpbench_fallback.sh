#!/usr/bin/env bash
# t_smpbench_fallback: when the kernel refuses hardware counters smpbench
# says so once on stderr and shows the software (rusage) counters, never
# aborting.  SMPBENCH_FORCE_NO_HW=1 takes the refusal path on any machine;
# --sw-counters skips the counters silently; unforced, the output must be
# one of the two consistent forms whatever this machine allows.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
SMPBENCH=build/smpbench
need "$SMPBENCH"
MSG_FORCED="smpbench: hardware counters unavailable (refused by SMPBENCH_FORCE_NO_HW): showing software counters"
SW_ROWS="wall_time peak_rss cpu_time user_time sys_time page_faults ctx_switches"
HW_ROWS="wall_time peak_rss cpu_cycles instructions cache_references cache_misses branch_misses"

# The measurement names of each benchmark block, one line per block.
rows() {
  awk '/^Benchmark/ { if (r != "") print r; r = "" }
       /^  [a-z_]+ / && !/^  measurement/ { r = (r == "" ? $1 : r " " $1) }
       END { if (r != "") print r }' "$1"
}
# check_rows FILE WANT NBLOCKS: every block has exactly the rows WANT
check_rows() {
  local n
  n=$(rows "$1" | grep -cFx "$2")
  [ "$n" = "$3" ] || { fail "$1: want $3 blocks of rows '$2'"; cat "$1"; }
}

# Forced refusal, three benchmarks and several runs: one message only.
SMPBENCH_FORCE_NO_HW=1 "$SMPBENCH" --color never --runs 3 --json "$tmp/j" \
  --cmds true "sh -c true" true >"$tmp/f.out" 2>"$tmp/f.err" ||
  fail "forced refusal: exit status not 0"
[ "$(cat "$tmp/f.err")" = "$MSG_FORCED" ] ||
  { fail "forced refusal: stderr is not exactly the one message:"; cat "$tmp/f.err"; }
check_rows "$tmp/f.out" "$SW_ROWS" 3
grep -q '"counters": "software"' "$tmp/j" || fail "JSON does not say software counters"
grep -q cpu_cycles "$tmp/j" && fail "JSON carries hardware counters it did not record"

# --sw-counters: the same rows, no message.
SMPBENCH_FORCE_NO_HW=1 "$SMPBENCH" --color never --sw-counters --runs 2 -- true \
  >"$tmp/s.out" 2>"$tmp/s.err" || fail "--sw-counters: exit status not 0"
grep -q "hardware counters" "$tmp/s.err" && fail "--sw-counters still printed the message"
n=$(grep -c '^Benchmark' "$tmp/s.out")
check_rows "$tmp/s.out" "$SW_ROWS" "$n"

# Unforced: hardware rows and no message, or software rows and exactly one
# message naming the kernel's reason.
"$SMPBENCH" --color never --runs 2 --allocs glibc -- true >"$tmp/u.out" 2>"$tmp/u.err" ||
  fail "unforced: exit status not 0"
if [ -s "$tmp/u.err" ]; then
  if [ "$(wc -l <"$tmp/u.err")" -ne 1 ] ||
     ! grep -Eq '^smpbench: hardware counters unavailable \(perf_event_open [a-z_]+: .+\): showing software counters$' "$tmp/u.err"; then
    fail "unforced: unexpected stderr:"; cat "$tmp/u.err"
  fi
  check_rows "$tmp/u.out" "$SW_ROWS" 1
  echo "note: this machine refuses hardware counters: $(cat "$tmp/u.err")"
else
  check_rows "$tmp/u.out" "$HW_ROWS" 1
  echo "note: this machine grants hardware counters"
fi

finish
