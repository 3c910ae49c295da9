#!/usr/bin/env bash
# t_bench_suite: a fast smoke test of the workload suite (bench/suite/).
#
#  1. every workload, with small parameters, exits 0 and prints nothing
#     under glibc and under LD_PRELOAD=build/libsmpalloc.so, and prints one
#     report line with -v;
#  2. the workloads' self-checks work: under build/suite/badmalloc.so (a
#     deliberately broken allocator that, once per thread, hands out a live
#     block a second time and scribbles on a block that realloc moves) each
#     workload that checks its blocks must exit 3 with "verify failed" - a
#     workload whose check were broken would exit 0 (or crash) instead;
#  3. bad arguments are refused (exit 2) and -h prints the parameters;
#  4. bench/suite/run.sh turns a hand-written smpbench CSV (one allocator
#     failing, one missing) into the table: the ratios, the geomean row, the
#     FAILED cell and the "slower than 1.25x the best peer" flag, a real
#     program's row below the workloads' and one not installed ("skipped",
#     no failure), the geomean of each kind, and draws a well-formed SVG;
#     then, when build/smpbench works, runs one small real workload through
#     it, and the SQLite program where sqlite3 is installed;
#  5. the real programs' inputs (bench/suite/real/): the Python one exits 0
#     and prints nothing under smpalloc; the SQLite one prints "ok" and a
#     wrong expected answer makes sqlite3 exit 1 with "verify failed".
# Run from the repository root (tests/run.sh does); exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2

S=build/suite
LIB=$ROOT/build/libsmpalloc.so
BAD=$ROOT/$S/badmalloc.so
need "$LIB" "$BAD"

# name | program | small parameters | caught by badmalloc (1) or not (0)
# cache-scratch and cache-thrash hold one block at a time per thread, so a
# second handout of a live block cannot happen there; they check the bytes
# they wrote instead.  malloc-large makes only a dozen allocations: arm the
# broken allocator after 4.
SMOKE=(
  "glibc-simple|glibc-simple|rounds=4 blocks=500|1"
  "glibc-thread|glibc-thread|ops=20000 slots=256|1"
  "larson|larson|ops=2000 generations=4 slots=200|1"
  "xmalloc-test|xmalloc-test|blocks=50000|1"
  "cache-scratch|cache-scratch|iterations=2000 writes=10|0"
  "cache-thrash|cache-thrash|iterations=2000 writes=10|0"
  "alloc-test|alloc-test|ops=50000 slots=2048 hot=128|1"
  "mstress|mstress|rounds=3 ops=3000 local=200 transfer=512|1"
  "mleak|mleak|rounds=8 blocks=1000 window=2|1"
  "malloc-large|malloc-large|alive=4 ops=6 min=1 max=3|1"
  "realloc-grow|realloc-grow|rounds=1 arrays=32 maxlen=3000|1"
  "prodcons-rss|prodcons-rss|rounds=2 burst=3000|1"
  "rss-decay|rss-decay|mib=8 wait=20|1"
  "threads-100|threads|threads=100 ops=200000|1"
  "threads-8|threads|threads=8 ops=200000|1"
)

# run_wl OUTVAR RCVAR ERRVAR PRELOAD PROG ARGS... (timeout outside the preload)
run_wl() {
  local -n _out=$1 _rc=$2 _err=$3
  local pre=$4 prog=$5; shift 5
  local ef; ef=$(mktemp)
  _out=$(timeout "${WL_TIMEOUT:-30}" env ${pre:+LD_PRELOAD=$pre} ${BADMALLOC_AFTER:+BADMALLOC_AFTER=$BADMALLOC_AFTER} \
         "$S/$prog" "$@" 2>"$ef")
  _rc=$?
  _err=$(cat "$ef"); rm -f "$ef"
}

# 1. smoke runs
for row in "${SMOKE[@]}"; do
  IFS='|' read -r name prog args caught <<<"$row"
  if [ ! -x "$S/$prog" ]; then fail "$S/$prog is missing (make suite-bins)"; continue; fi
  for pre in "" "$LIB"; do
    label="$name under glibc"
    [ -n "$pre" ] && label="$name under smpalloc"
    # shellcheck disable=SC2086
    run_wl out rc err "$pre" "$prog" $args
    if [ "$rc" -ne 0 ]; then
      fail "$label: exit $rc"; printf '  stderr: %s\n' "$err" | head -n 5
    elif [ -n "$out$err" ]; then
      fail "$label: printed without -v: '$out$err'"
    fi
    # shellcheck disable=SC2086
    run_wl out rc err "$pre" "$prog" -v $args
    if [ "$rc" -ne 0 ] || [ "$(printf '%s\n' "$out" | grep -c "^$prog: ")" -ne 1 ] || [ -n "$err" ]; then
      fail "$label -v: exit $rc, printed '$out' '$err'"
    else
      echo "ok: $label: $out"
    fi
  done
done

# 2. the self-checks catch a broken allocator
for row in "${SMOKE[@]}"; do
  IFS='|' read -r name prog args caught <<<"$row"
  [ -x "$S/$prog" ] || continue
  after=100
  [ "$prog" = malloc-large ] && after=4
  # shellcheck disable=SC2086
  BADMALLOC_AFTER=$after WL_TIMEOUT=10 run_wl out rc err "$BAD" "$prog" $args
  if [ "$caught" = 1 ]; then
    if [ "$rc" -eq 3 ] && [[ "$err" == *"$prog: verify failed"* ]]; then
      echo "ok: $name catches badmalloc: $err"
    else
      fail "$name under badmalloc: exit $rc (want 3 and 'verify failed'), stderr '$err'"
    fi
  elif [ "$rc" -ne 0 ]; then
    # not expected to notice, but must not break either
    fail "$name under badmalloc: exit $rc, stderr '$err'"
  fi
done

# 3. arguments
out=$("$S/larson" -h); rc=$?
if [ "$rc" -ne 0 ] || ! grep -q '^  generations ' <<<"$out"; then
  fail "larson -h: exit $rc, printed '$out'"
fi
for bad in "nosuch=1" "ops=x" "ops=-3" "ops" "-q"; do
  "$S/larson" "$bad" >/dev/null 2>&1; rc=$?
  [ "$rc" -eq 2 ] || fail "larson '$bad': exit $rc, want 2"
done

# 4. run.sh: the table from a hand-written smpbench CSV.  A fake smpbench
# writes it to wherever --csv says: glibc-simple has every allocator, and
# smpalloc 1.67x the best peer's time, which its recheck does not confirm;
# larson fails under jemalloc and smpalloc is slow there (2.0x glibc,
# mimalloc 0.5x), which its recheck (the same figures) confirms;
# prodcons-rss is what the fake does for a failure: it exits 1 without a
# CSV.
mkdir -p "$tmp/build/suite"
cat >"$tmp/build/smpbench" <<'EOF'
#!/usr/bin/env bash
csv= allocs=
echo "$*" >>"$(dirname "$0")/calls"
while [ $# -gt 0 ]; do
  case $1 in --csv) csv=$2; shift 2 ;; --allocs) allocs=$2; shift 2 ;; --) shift; break ;; *) shift ;; esac
done
case $(basename "$1") in
  # smpalloc 1.67x mimalloc in the table's runs; in a recheck (the only
  # call with --allocs) as fast as glibc and mimalloc: noise
  glibc-simple) w1=100000000 w2=100000000 w3=80000000 w4=60000000 r=4194304; fail=
                [ -n "$allocs" ] && w1=60000000 w2=60000000 ;;
  larson) w1=200000000 w2=400000000 w3=0 w4=100000000 r=8388608; fail=1 ;;
  sqlite3) w1=100000000 w2=25000000 w3=50000000 w4=100000000 r=4194304; fail= ;;
  *) exit 1 ;;
esac
{
  echo "record,benchmark,allocator,command,run,status,wall_time,peak_rss,cpu_time"
  echo "run,1,glibc,\"$1, quoted\",1,ok,$w1,$r,1"
  echo "median,1,glibc,\"$1, quoted\",,,$w1,$r,1"
  echo "median,2,smpalloc,$1,,,$w2,$((r / 2)),1"
  if [ -n "$fail" ]; then
    echo "failed,3,jemalloc,$1,,\"exit status 3, verify failed\",,,"
  else
    echo "median,3,jemalloc,$1,,,$w3,$((r * 2)),1"
  fi
  echo "median,4,mimalloc,$1,,,$w4,$r,1"
} >"$csv"
[ -z "$fail" ]
EOF
chmod +x "$tmp/build/smpbench"
touch "$tmp/build/libsmpalloc.so"
for p in glibc-simple larson prodcons-rss; do
  printf '#!/bin/sh\nexit 0\n' >"$tmp/build/suite/$p"; chmod +x "$tmp/build/suite/$p"
done
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/sqlite3"; chmod +x "$tmp/bin/sqlite3"
export SUITE_SQLITE=$tmp/bin/sqlite3 SUITE_PYTHON=$tmp/bin/no-such-python
out=$(bash bench/suite/run.sh --build "$tmp/build" --out "$tmp/out" --svg "$tmp/t.svg" \
      --no-reports --only glibc-simple,larson,prodcons-rss,sqlite,python 2>/dev/null)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "run.sh with failures: exit $rc, want 1"
want_rows=(
  'glibc-simple +100ms +4\.0MiB \| 1\.00x\? +0\.50x \| 0\.80x +2\.00x \| 0\.60x +1\.00x'
  'larson +200ms +8\.0MiB \| 2\.00x! +0\.50x \| FAILED +\| 0\.50x +1\.00x'
  'prodcons-rss +FAILED: smpbench exited 1, no CSV'
  'sqlite +100ms +4\.0MiB \| 0\.25x +0\.50x \| 0\.50x +2\.00x \| 1\.00x +1\.00x'
  'python +skipped: .*no-such-python is not installed'
  'geomean +\| 0\.79x +0\.50x \| 0\.63x +2\.00x \| 0\.67x +1\.00x'
  '  synthetic +\| 1\.41x +0\.50x \| 0\.80x +2\.00x \| 0\.55x +1\.00x'
  '  programs +\| 0\.25x +0\.50x \| 0\.50x +2\.00x \| 1\.00x +1\.00x'
  '^  glibc-simple: smpalloc wall 1\.00x of glibc = 100ms, best peer mimalloc 0\.60x = 60ms: 1\.67x the best peer; recheck, 15 runs each: 1\.00x$'
  'larson: smpalloc wall 2\.00x of glibc = 400ms, best peer mimalloc 0\.50x = 100ms: 4\.00x the best peer; recheck, 15 runs each: 4\.00x \(confirmed\)'
  'larson: FAILED under jemalloc \(exit status 3, verify failed\)'
  'jemalloc: geomean over the 2 of 4 workloads'
)
for re in "${want_rows[@]}"; do
  grep -Eq "$re" <<<"$out" || fail "run.sh table lacks /$re/"
done
# The unconfirmed row is listed under "?", not among the problems; the
# rechecks ran glibc, smpalloc and the best peer, 15 runs each.
sed -n '/^? = /,/^$/p' <<<"$out" | grep -q '^  glibc-simple: ' \
  || fail "run.sh: glibc-simple is not listed under '? ='"
sed -n '/^! = /,$p' <<<"$out" | grep -q '^  glibc-simple: ' \
  && fail "run.sh: glibc-simple, not confirmed by its recheck, is listed as a problem"
for w in glibc-simple larson; do
  grep -Eq -- "--runs 15 .*--allocs glibc,smpalloc,mimalloc .*-- .*/$w\$" "$tmp/build/calls" \
    || fail "run.sh: no recheck call for $w with --runs 15 --allocs glibc,smpalloc,mimalloc"
done
[ "$(grep -c -- '--allocs' "$tmp/build/calls")" -eq 2 ] \
  || fail "run.sh: rechecked other rows than the two slow ones: $(grep -- '--allocs' "$tmp/build/calls")"
bash bench/suite/run.sh --build "$tmp/build" --recheck x --only glibc-simple >/dev/null 2>&1
[ $? -eq 2 ] || fail "run.sh --recheck x: want exit 2 (a usage error)"
# With --recheck 0 the slow rows are marked on the table's runs alone.
out=$(bash bench/suite/run.sh --build "$tmp/build" --out "$tmp/out3" --no-reports --recheck 0 \
      --only glibc-simple 2>/dev/null)
grep -Eq 'glibc-simple +100ms +4\.0MiB \| 1\.00x!' <<<"$out" && ! grep -q 'recheck' <<<"$out" \
  || fail "run.sh --recheck 0: glibc-simple should be marked ! with no recheck: $out"
if command -v python3 >/dev/null; then
  python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"; assert len(d.getElementsByTagName("rect")) > 10' "$tmp/t.svg" \
    || fail "run.sh --svg: not a well-formed SVG with bars"
else
  grep -q '</svg>' "$tmp/t.svg" || fail "run.sh --svg: no SVG"
fi
# The chart marks the confirmed row (larson) with ! and the other with ?.
grep -q '>!</text>' "$tmp/t.svg" && grep -q '>?</text>' "$tmp/t.svg" \
  || fail "run.sh --svg: no ! and ? marks over smpalloc's bars"
# A program that is not installed is no failure.
out=$(bash bench/suite/run.sh --build "$tmp/build" --out "$tmp/out2" --no-reports --only glibc-simple,python 2>/dev/null)
rc=$?
[ "$rc" -eq 0 ] || fail "run.sh with a program not installed: exit $rc, want 0"
grep -Eq '^python +skipped: ' <<<"$out" || fail "run.sh: no 'skipped' row for a program not installed"
unset SUITE_SQLITE SUITE_PYTHON

# ... and real, small runs through smpbench (skipped when it is not built
# or cannot run - it belongs to another part of the tree).
# real_row NAME: run.sh --only NAME through build/smpbench, once under
# glibc and smpalloc; its row must show ratios.
real_row() {
  local out rc
  out=$(bash bench/suite/run.sh --only "$1" --runs 1 --warmup 0 --allocs glibc,smpalloc \
        --no-reports --out "$tmp/real-$1" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || ! grep -Eq "^$1 +[0-9.]+(ms|s) .*\\| [0-9.]+x" <<<"$out"; then
    fail "run.sh --only $1 through build/smpbench: exit $rc"; echo "$out" | tail -n 20
  else
    echo "ok: run.sh --only $1 through build/smpbench: $(grep "^$1 " <<<"$out")"
  fi
}
if [ -x build/smpbench ] && build/smpbench --help >/dev/null 2>&1; then
  real_row cache-thrash
  if command -v sqlite3 >/dev/null; then real_row sqlite; fi
else
  echo "note: build/smpbench missing or not working; skipped the real run.sh run"
fi

# 5. the real programs' inputs
if command -v python3 >/dev/null; then
  out=$(PYTHONMALLOC=malloc LD_PRELOAD=$LIB python3 bench/suite/real/objects.py 3000 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || [ -n "$out" ]; then fail "objects.py under smpalloc: exit $rc, printed '$out'"
  else echo "ok: objects.py 3000 under smpalloc"; fi
fi
if command -v sqlite3 >/dev/null; then
  out=$(LD_PRELOAD=$LIB sqlite3 -bail :memory: ".read bench/suite/real/queries.sql" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || [ "$(tail -n 1 <<<"$out")" != ok ]; then fail "queries.sql under smpalloc: exit $rc, printed '$out'"
  else echo "ok: queries.sql under smpalloc"; fi
  sed 's/rows = 200000 /rows = 200001 /' bench/suite/real/queries.sql >"$tmp/wrong.sql"
  out=$(sqlite3 -bail :memory: ".read $tmp/wrong.sql" 2>&1)
  rc=$?
  if [ "$rc" -ne 1 ] || [[ "$out" != *"queries: verify failed"* ]]; then
    fail "queries.sql with a wrong answer: exit $rc (want 1), printed '$out'"
  else echo "ok: queries.sql catches a wrong answer"; fi
fi

finish
