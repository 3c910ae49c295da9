#!/usr/bin/env bash
# t_shapes_recheck: the shape sweep's table takes a rechecked shape's
# medians (bench/shapes/run.sh --recheck), on recorded CSV files read with
# --table:
#   1. one shape, smpalloc 0.30 s against glibc's 0.25 s: flagged T>glibc,
#      "flagged: 1", no recheck line;
#   2. the same with a recheck file in which smpalloc took 0.20 s and glibc
#      0.26: "ok (rechecked)", "flagged: 0", "rechecked (...): 1";
#   3. a recheck that confirms (smpalloc 0.31 s, glibc 0.24): still
#      T>glibc, marked rechecked, "flagged: 1";
#   4. peak RSS over the bound is flagged whatever the recheck's time says.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
H=record,benchmark,allocator,command,run,status,wall_time,peak_rss,cpu_time,user_time,sys_time,page_faults,ctx_switches
C='build/shape threads=1 live=100 ops=1000 lo=8 hi=64 write=0 life=0'
# csv FILE glibc_ns smpalloc_ns [smpalloc_rss]: glibc and smpalloc medians
csv() {
  { echo "$H"
    echo "median,1,glibc,$C,,,$2,10485760,$2,0,0,100,1"
    echo "median,2,smpalloc,$C,,,$3,${4:-10485760},$3,0,0,100,1"; } >"$1"
}
table() { bash bench/shapes/run.sh --table "$1" 2>&1; }
d=$tmp/sweep
mkdir -p "$d"
echo "tiny/T1/W100/first/random" >"$d/1.name"

csv "$d/1.csv" 250000000 300000000
out=$(table "$d")
if grep -q 'T>glibc $' <<<"$out" && grep -q '^1 shapes; flagged: 1$' <<<"$out" && ! grep -q '^rechecked' <<<"$out"; then
  ok "a slower first pass is flagged"
else fail "first pass, want T>glibc and flagged: 1:"; echo "$out"; fi

csv "$d/1.recheck.csv" 260000000 200000000
out=$(table "$d")
if grep -q '| ok (rechecked)$' <<<"$out" && grep -q '^1 shapes; flagged: 0$' <<<"$out" &&
  grep -q '^rechecked (.*): 1$' <<<"$out" && grep -q ' 0\.200 ' <<<"$out"; then
  ok "a recheck that clears the flag: its medians count, the row says so"
else fail "recheck clearing, want ok (rechecked), flagged: 0, 0.200 s:"; echo "$out"; fi

csv "$d/1.recheck.csv" 240000000 310000000
out=$(table "$d")
if grep -q 'T>glibc (rechecked)$' <<<"$out" && grep -q '^1 shapes; flagged: 1$' <<<"$out"; then
  ok "a recheck that confirms keeps the flag"
else fail "recheck confirming, want T>glibc (rechecked), flagged: 1:"; echo "$out"; fi

csv "$d/1.recheck.csv" 260000000 200000000 52428800
out=$(table "$d")
if grep -q 'RSS (rechecked)$' <<<"$out" && grep -q '^1 shapes; flagged: 1$' <<<"$out"; then
  ok "peak RSS over glibc's is flagged after a recheck"
else fail "RSS over the bound, want RSS (rechecked), flagged: 1:"; echo "$out"; fi
finish
