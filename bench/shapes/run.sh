#!/usr/bin/env bash
# bench/shapes/run.sh - the shape sweep: a grid of replacement workloads
# (bench/shapes/shape.c) run under glibc, smpalloc and every peer smpbench
# finds, one table row a shape, each flagged where smpalloc is outside the
# bounds:
#   wall time  > glibc's, or > 2x the best peer's;
#   peak RSS   > max(glibc's, 2x the leanest peer's).
# `make bench-shapes` calls it; --help for the options.
#
# The grid (axes of issue 52), sampled, as the whole would be 648 shapes:
#   base: every size range x live blocks (100, 5,000, 50,000) x threads
#         (1, 2, 8), first byte written, random replacement;    54 shapes
#   axes: every size range at 2 threads and 5,000 live blocks, with half
#         or every byte written, and with FIFO, LIFO-burst and cross-thread
#         lifetimes (one axis changed at a time);                30 shapes
# Live blocks are bounded so that the live bytes stay within 4 GiB of
# address space (first byte written) or 512 MiB (half or all written), and
# operations so that a row takes about a second under glibc.
set -u
cd "$(dirname "$0")/../.." || exit 2

BUILD=build
RUNS=3
TIME=2
WARMUP=1
RECHECK=9
ALLOCS=
ONLY=
OUT=
EXTRA=()

usage() {
  cat <<'EOF'
usage: bench/shapes/run.sh [options]

  --build DIR      where libsmpalloc.so, smpbench and shape are (build)
  --runs N         counted runs of each allocator per shape, at least
                   (default 3)
  --time S         more runs for a short shape, up to S seconds for all its
                   counted runs together (default 2; 0: exactly --runs).
                   (a row of 10 ms read 1.31x glibc in 3 runs, 0.85x in 30)
  --warmup N       uncounted runs first (default 1)
  --quick          --runs 1 --time 0 --warmup 0 --recheck 0
  --recheck N      run each shape flagged on time again, N runs each of
                   glibc, smpalloc and its best peer, interleaved, and show
                   those medians (default 9; 0: no recheck).  The report of
                   2026-12-08 flagged small/T2/W100 (6 ms) at 1.02x glibc's
                   time; run again, it read 0.85x.
  --allocs LIST    passed to smpbench (default: glibc, smpalloc, every peer)
  --alloc N=PATH   an allocator more, e.g. the version before (repeatable)
  --peer-dir DIR   passed to smpbench (repeatable)
  --only REGEX     only the shapes whose name matches (grep -E)
  --out DIR        keep the CSV files here (default BUILD/shapes-out)
  --list           print the shapes and their commands, run nothing
  --table DIR      run nothing: print the table of a sweep kept in DIR
Exit status: 0 ran (flags or not), 1 a shape failed under some allocator,
2 usage error.
EOF
}

LIST=0
TABLE=
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --quick) RUNS=1; TIME=0; WARMUP=0; RECHECK=0; shift ;;
    --recheck) RECHECK=$2; shift 2 ;;
    --allocs) ALLOCS=$2; shift 2 ;;
    --alloc|--peer-dir) EXTRA+=("$1" "$2"); shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --list) LIST=1; shift ;;
    --table) TABLE=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$BUILD/shapes-out}
SHAPE=$BUILD/shape

# name lo hi mean(bytes), the size ranges
SIZES="tiny:8:64 small:16:1024 medium:1024:32768 run:32768:1048576 mixed:16:524288 big:1048576:33554432"

# shape_cmd T W WRITE LIFE LO HI: prints "NAME|COMMAND"
shape_cmd() {
  local t=$1 w=$2 wr=$3 life=$4 lo=$5 hi=$6 sname=$7
  awk -v t="$t" -v w="$w" -v wr="$wr" -v life="$life" -v lo="$lo" -v hi="$hi" -v s="$sname" -v bin="$SHAPE" 'BEGIN {
    mean = (hi - lo) / log(hi / lo)
    cap = (wr == 0 ? 4 : 0.5) * 2^30
    if (t * w * mean > cap) w = int(cap / (t * mean)); if (w < 8) w = 8
    # operations: about 2 GiB of blocks allocated (written ones count
    # their bytes, others a page each), at most 400,000, at least 2 live sets
    per = (wr == 0 ? (mean < 16384 ? mean : 16384) : (wr == 1 ? mean / 2 : mean)) + 64
    ops = int(2^31 / per / t); if (ops > 400000 / t) ops = int(400000 / t); if (ops < 2 * w) ops = 2 * w
    wn = (wr == 0 ? "first" : wr == 1 ? "half" : "all")
    ln = (life == 0 ? "random" : life == 1 ? "fifo" : life == 2 ? "lifo" : "cross")
    printf "%s/T%d/W%d/%s/%s|%s threads=%d live=%d ops=%d lo=%d hi=%d write=%d life=%d\n", s, t, w, wn, ln, bin, t, w, ops, lo, hi, wr, life
  }'
}

shapes() {
  local s name lo hi t w
  for s in $SIZES; do
    IFS=: read -r name lo hi <<<"$s"
    for w in 100 5000 50000; do
      for t in 1 2 8; do shape_cmd "$t" "$w" 0 0 "$lo" "$hi" "$name"; done
    done
  done
  for s in $SIZES; do
    IFS=: read -r name lo hi <<<"$s"
    shape_cmd 2 5000 1 0 "$lo" "$hi" "$name"
    shape_cmd 2 5000 2 0 "$lo" "$hi" "$name"
    shape_cmd 2 5000 0 1 "$lo" "$hi" "$name"
    shape_cmd 2 5000 0 2 "$lo" "$hi" "$name"
    shape_cmd 2 5000 0 3 "$lo" "$hi" "$name"
  done
}

LINES=$(shapes | awk "!seen[\$0]++" | { if [ -n "$ONLY" ]; then grep -E "^[^|]*($ONLY)[^|]*\|"; else cat; fi; })
if [ "$LIST" = 1 ]; then
  tr '|' '\t' <<<"$LINES"
  exit 0
fi
if [ -n "$TABLE" ]; then
  OUT=$TABLE
  LINES=
fi
[ -n "$LINES" ] && for f in "$BUILD/smpbench" "$SHAPE" "$BUILD/libsmpalloc.so"; do
  [ -e "$f" ] || { echo "run.sh: $f is missing (make tools bench-bins)" >&2; exit 2; }
done
mkdir -p "$OUT"

status=0
i=0
[ -n "$TABLE" ] && i=$(ls "$OUT"/*.name 2>/dev/null | wc -l)
while IFS='|' read -r name cmd; do
  [ -n "$name" ] || continue
  i=$((i + 1))
  csv=$OUT/$i.csv
  args=(--warmup "$WARMUP" --sw-counters --csv "$csv" "${EXTRA[@]}")
  if [ "$TIME" = 0 ]; then args+=(--runs "$RUNS"); else args+=(--time "$TIME" --min-runs "$RUNS"); fi
  [ -n "$ALLOCS" ] && args+=(--allocs "$ALLOCS")
  # shellcheck disable=SC2086
  SMP_SUITE_ALARM=60 "$BUILD/smpbench" "${args[@]}" -- $cmd >"$OUT/$i.log" 2>&1 || status=1
  printf '%s\n' "$name" >"$OUT/$i.name"
done <<<"$LINES"

# Builds given with --alloc are versions of ours (the version before), not
# peers: a line each under smpalloc's.
MINE=
for ((k = 0; k < ${#EXTRA[@]}; k += 2)); do
  [ "${EXTRA[k]}" = --alloc ] && MINE="$MINE,${EXTRA[k + 1]%%=*}"
done

# A shape's row (and a line under it for each version of ours), from its
# CSV file and, where it was rechecked, the recheck's, whose medians count
# instead; the best peer's name and the row's flags go to $OUT/J.best.
row() {
  local j=$1
  awk -F, -v name="$(cat "$OUT/$j.name")" -v mine="$MINE" -v side="$OUT/$j.best" '
    $1 == "median" {
      if (!($3 in w)) a[++n] = $3
      w[$3] = $7; r[$3] = $8; sys[$3] = $11; pf[$3] = $12
      if (FILENAME ~ /recheck/) re = 1
    }
    $1 == "failed" { bad[$3] = 1 }
    END {
      split(mine, m, ","); for (k in m) if (m[k] != "") own[m[k]] = 1
      best = ""; lean = ""
      for (k = 1; k <= n; k++) {
        x = a[k]; if (x == "glibc" || x ~ /^smpalloc/ || (x in own) || bad[x]) continue
        if (best == "" || w[x] < w[best]) best = x
        if (lean == "" || r[x] < r[lean]) lean = x
      }
      s = "smpalloc"
      if (!(s in w) || bad[s]) { printf "%-32s  smpalloc failed\n", name; exit }
      flag = ""
      if ("glibc" in w && w[s] > w["glibc"]) flag = flag "T>glibc "
      if (best != "" && w[s] > 2 * w[best]) flag = flag "T>2xpeer "
      lim = r["glibc"]; if (lean != "" && 2 * r[lean] > lim) lim = 2 * r[lean]
      if (r[s] > lim) flag = flag "RSS "
      printf "%s %s\n", best, (flag ~ /T>/ ? "time" : "-") > side
      printf "%-32s %8.3f %7.0f | %8.3f %5.2fx %5.2fx %7.0f %5.2fx %7.0fk %6.2f | %-15s %8.3f %7.0f | %s%s\n",
        name, w["glibc"] / 1e9, r["glibc"] / 2^20, w[s] / 1e9, w[s] / w["glibc"],
        (best != "" ? w[s] / w[best] : 0), r[s] / 2^20, r[s] / r["glibc"], pf[s] / 1e3, sys[s] / 1e9,
        best, w[best] / 1e9, r[lean] / 2^20, (flag == "" ? "ok" (re ? " " : "") : flag), (re ? "(rechecked)" : "")
      for (k = 1; k <= n; k++) if (a[k] ~ /^smpalloc./ || (a[k] in own))
        printf "%-32s %8s %7s | %8.3f %5.2fx %5.2fx %7.0f %5.2fx %7.0fk %6.2f |   (%s)\n", "", "", "",
          w[a[k]] / 1e9, w[a[k]] / w["glibc"], (best != "" ? w[a[k]] / w[best] : 0), r[a[k]] / 2^20,
          r[a[k]] / r["glibc"], pf[a[k]] / 1e3, sys[a[k]] / 1e9, a[k]
    }' "$OUT/$j.csv" $( [ -f "$OUT/$j.recheck.csv" ] && echo "$OUT/$j.recheck.csv")
}

# The table: one row a shape.  Rows flagged on time are run again first
# (--recheck): a short shape's time moves with the machine's load, its
# faults and peak RSS do not.
for ((j = 1; j <= i; j++)); do
  [ -f "$OUT/$j.csv" ] || continue
  [ -z "$TABLE" ] || continue
  rm -f "$OUT/$j.recheck.csv"
  row "$j" >/dev/null
  [ "$RECHECK" -gt 0 ] 2>/dev/null || continue
  read -r best why <"$OUT/$j.best" || continue
  [ "$why" = time ] || continue
  cmd=$(shapes | awk -F'|' -v n="$(cat "$OUT/$j.name")" '$1 == n { print $2; exit }')
  [ -n "$cmd" ] || continue
  al=glibc,smpalloc$MINE; [ -n "$best" ] && al=$al,$best
  # shellcheck disable=SC2086
  SMP_SUITE_ALARM=60 "$BUILD/smpbench" --runs "$RECHECK" --warmup 1 --sw-counters --csv "$OUT/$j.recheck.csv" \
    "${EXTRA[@]}" --allocs "$al" -- $cmd >"$OUT/$j.recheck.log" 2>&1 || rm -f "$OUT/$j.recheck.csv"
done
rechecked=$(find "$OUT" -name '*.recheck.csv' 2>/dev/null | wc -l)
{
  for ((j = 1; j <= i; j++)); do
    [ -f "$OUT/$j.csv" ] && row "$j"
  done
} >"$OUT/table.txt"

printf '%-32s %8s %7s | %8s %6s %6s %7s %6s %8s %6s | %-15s %8s %7s | %s\n' shape "glibc s" MiB \
  "smp s" "/glibc" "/best" MiB "/glibc" faults "sys s" "best peer" "s" "lean MiB" flags
cat "$OUT/table.txt"
echo
echo "$i shapes; flagged: $(grep -v '^ ' "$OUT/table.txt" | grep -vc '| ok\( (rechecked)\)\{0,1\}$')"
[ "$rechecked" -gt 0 ] && echo "rechecked (flagged on time in the first pass, run again under glibc, smpalloc and their best peer, --recheck runs each, interleaved; their rows show those medians): $rechecked"
exit $status
