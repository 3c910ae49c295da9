#!/usr/bin/env bash
# bench/report/report.sh - `make bench-report`: the project's published
# results, made by one command, never copied by hand.
#
#   1. runs the four benchmarks, each with glibc, smpalloc and every peer
#      smpbench finds (a clone without ../shared or Debian's peers compares
#      what it has):
#        seed      build/smpbench -- build/seed              (make bench)
#        suite     bench/suite/run.sh                        (make bench-suite)
#        fastpath  bench/fastpath.sh, callgrind (skipped, with a note, when
#                  valgrind is not installed)                (make bench-fastpath)
#        shapes    bench/shapes/run.sh                       (make bench-shapes)
#   2. writes OUT/results.md (docs/results.md): the machine (CPU, cores,
#      memory, kernel, THP mode), the date, the commit, and each part's full
#      table under the exact command that made it; at its end the data the
#      summary is rendered from.  And the charts OUT/results-seed.svg and
#      OUT/results-suite.svg.
#   3. renders the README's summary block from that data
#      (bench/report/render.sh) and splices it in between the lines
#      <!-- bench-report:begin --> and <!-- bench-report:end -->.  The
#      markers are checked before anything runs.
#
# The data section of results.md: tab-separated lines PART KEY VALUE...
#   report   version 1 | date | day | commit | invocation | quick 0/1
#   machine  cpu | cores | online | memory | kernel | thp | thp_defrag
#   alloc    LABEL LIBRARY          (smpbench --list-allocs; glibc: none)
#   PART     status ok|skipped: WHY|failed: WHY
#   PART     cmd  the exact command     short  the same without the
#            report's own output options      secs  how long it ran
#   seed     metric instructions|cpu_time
#   seed     row ALLOC WALL_NS PEAK_RSS_BYTES METRIC      (medians)
#   seed     row ALLOC failed WHY
#   suite    row ALLOC TIME_GEOMEAN RSS_GEOMEAN N_WORKLOADS N_RAN  (vs glibc)
#   fastpath row ALLOC INSTRUCTIONS PER_PAIR|failed
#   shapes   summary N_SHAPES N_FLAGGED
#
# Needs bash, awk and coreutils (git for the commit).  --help for options.
# shellcheck disable=SC2016 # backquotes in printf formats are markdown
set -u
cd "$(dirname "$0")/../.." || exit 2

BUILD=build
OUT=docs
README=README.md
WORK=
QUICK=0
SKIP=
ALLOCS=
SPLICE=1
SEED_ARGS='' SUITE_ARGS='' FAST_ARGS='' SHAPES_ARGS=''
PARTS="seed suite fastpath shapes"
# quoted ARGS...: the words as a shell would need them ('...' where needed)
quoted() {
  local w q=\' out=
  for w in "$@"; do
    if [[ $w =~ ^[-A-Za-z0-9_./,=:+@%^]+$ ]]; then out+=" $w"
    else out+=" '${w//$q/$q\\$q$q}'"; fi
  done
  printf '%s' "${out# }"
}
# How the report was asked for (make bench-report says so in REPORT_CALL)
INVOCATION=${REPORT_CALL:-$(quoted bench/report/report.sh "$@")}

usage() {
  cat <<'EOF'
usage: bench/report/report.sh [options]      (make bench-report REPORT_ARGS='...')

Runs the seed comparison, the workload suite, the fast path count and the
shape sweep with every allocator found, writes OUT/results.md and the
charts OUT/results-*.svg, and rewrites the README's summary block (between
<!-- bench-report:begin --> and <!-- bench-report:end -->) from them.

  --quick            short runs to try it (seed --runs 3 --warmup 0; suite
                     --time 1 --min-runs 1 --warmup 0 --recheck 0
                     --no-reports; fastpath --pairs 100000; shapes --quick);
                     the report says it is a quick run
  --skip LIST        leave out these parts (comma-separated: seed, suite,
                     fastpath, shapes); their place says "not measured"
  --allocs LIST      compare these allocators in every part (smpbench labels
                     or families, glibc first; default glibc, smpalloc and
                     every peer found)
  --seed-args 'A'    more smpbench options for the seed (after the defaults)
  --suite-args 'A'   more bench/suite/run.sh options (e.g. '--only larson')
  --fastpath-args 'A'  more bench/fastpath.sh options (e.g. '--pairs 10000')
  --shapes-args 'A'  more bench/shapes/run.sh options (e.g. '--only run/')
  --build DIR        where the library, smpbench and the programs are (build)
  --out DIR          where results.md and the charts go (docs)
  --readme FILE      the README whose block is rewritten (README.md)
  --no-readme        leave the README alone (no marker check either)
  --work DIR         the parts' raw CSV files and logs (BUILD/report)
  -h, --help         this text

On 2 cores the whole report takes about 45 minutes (the shape sweep 35,
the suite 5-6, the seed and the fast path under a minute); --quick about
10 (the shape sweep 9), about 1 with --skip shapes.

Exit status: 0 every part that was not skipped made its table (a table may
still show a peer that failed), 1 a part made none (the report is written,
the README is not touched), 2 a usage error, missing markers or programs.
EOF
}

die() { echo "report.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1; shift ;;
    --skip) SKIP=$2; shift 2 ;;
    --allocs) ALLOCS=$2; shift 2 ;;
    --seed-args) SEED_ARGS=$2; shift 2 ;;
    --suite-args) SUITE_ARGS=$2; shift 2 ;;
    --fastpath-args) FAST_ARGS=$2; shift 2 ;;
    --shapes-args) SHAPES_ARGS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --readme) README=$2; shift 2 ;;
    --no-readme) SPLICE=0; shift ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "report.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
WORK=${WORK:-$BUILD/report}
for p in ${SKIP//,/ }; do
  [[ " $PARTS " == *" $p "* ]] || die "--skip: no part named '$p' (the parts: ${PARTS// /, })"
done
if [ -n "$ALLOCS" ] && [ "${ALLOCS%%,*}" != glibc ]; then
  die "--allocs must start with glibc, the base of every ratio ('$ALLOCS')"
fi
skipped() { [[ ",$SKIP," == *",$1,"* ]]; }

RENDER=(bash bench/report/render.sh --results "$OUT/results.md" --readme "$README")
# The markers first: a long run must not end on a README it cannot update.
[ "$SPLICE" = 0 ] || "${RENDER[@]}" --markers || exit 2

need=("$BUILD/smpbench" "$BUILD/libsmpalloc.so")
skipped seed || need+=("$BUILD/seed")
skipped suite || need+=("$BUILD/suite/larson")
skipped fastpath || need+=("$BUILD/fastpath")
skipped shapes || need+=("$BUILD/shape")
for f in "${need[@]}"; do
  [ -e "$f" ] || die "$f is missing (make bench-report builds everything it needs)"
done

mkdir -p "$OUT" "$WORK" || exit 2
# Nothing of an older run may pass for this one.
rm -rf "$WORK/seed.csv" "$WORK/suite-out" "$WORK/shapes-out" "$WORK"/*.out "$WORK"/*.err \
       "$WORK"/*.svg "$WORK/data.tsv" "$WORK/data.md" "$WORK/results.md"
DATA=$WORK/data.tsv
: >"$DATA"
# put PART KEY VALUE...: one data line (tabs and newlines in values become spaces)
put() {
  local f line=
  for f in "$@"; do line+=${line:+$'\t'}${f//[$'\t\n']/ }; done
  printf '%s\n' "$line" >>"$DATA"
}

# ---- the machine, the date, the commit -------------------------------------
cpu=$(awk -F': *' '/^(model name|Model Name|cpu model|Hardware)[ \t]*:/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
[ -n "$cpu" ] || cpu=$(LC_ALL=C lscpu 2>/dev/null | awk -F': *' '/^Model name/ { print $2; exit }')
online=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "none (no /sys/kernel/mm/transparent_hugepage)")
thpd=$(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo "none")
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
  # The report's own outputs do not make the tree dirty: a second report
  # before the first is committed measures the same code.
  own=("$OUT/results.md" "$OUT/results-seed.svg" "$OUT/results-suite.svg" "$README")
  excl=()
  for f in "${own[@]}"; do excl+=(":(exclude)$f"); done
  [ -z "$(git status --porcelain --untracked-files=no -- . "${excl[@]}" 2>/dev/null)" ] || commit+=-dirty
else
  commit="unknown (not a git checkout)"
fi
put report version 1
now=$(date -u +%s)
put report date "$(date -u -d "@$now" '+%Y-%m-%d %H:%M UTC')"
put report day "$(date -u -d "@$now" +%Y-%m-%d)"
put report commit "$commit"
put report invocation "$INVOCATION"
put report quick "$QUICK"
put machine cpu "${cpu:-unknown}"
put machine cores "$(nproc)"
put machine online "${online:-unknown}"
put machine memory "${mem:-unknown}"
put machine kernel "$(uname -r)"
put machine thp "$thp"
put machine thp_defrag "$thpd"
allocs=$("$BUILD/smpbench" --list-allocs ${ALLOCS:+--allocs "$ALLOCS"} 2>&1) || die "smpbench --list-allocs: $allocs"
# (libraries in this checkout or next to it named from here: build/..., ../shared/...)
up=$(dirname "$PWD")
while IFS=$'\t' read -r a lib; do
  [ -n "$lib" ] && lib=$(realpath -ms "$lib")
  case $lib in "$PWD"/*) lib=${lib#"$PWD"/} ;; "$up"/*) lib=../${lib#"$up"/} ;; esac
  put alloc "$a" "$lib"
done <<<"$allocs"

# ---- the parts ----------------------------------------------------------------
# Each part: SHORT (the command that prints the table) and BOOK (the report's
# own output options); run_part PART runs SHORT + BOOK with stdout into
# WORK/PART.out and stderr to the terminal and WORK/PART.err; RC, SECS.
status=0
run_part() {
  local part=$1 t0
  put "$part" cmd "$(quoted "${CMD[@]}")"
  put "$part" short "$(quoted "${SHORT[@]}")"
  echo "report.sh: $part: $(quoted "${CMD[@]}")" >&2
  t0=$(date +%s)
  "${CMD[@]}" </dev/null >"$WORK/$part.out" 2> >(tee "$WORK/$part.err" >&2)
  RC=$?
  wait # for tee
  SECS=$(( $(date +%s) - t0 ))
  put "$part" secs "$SECS"
  echo "report.sh: $part: exit $RC after ${SECS}s" >&2
}
# part_failed PART WHY: the part made no table.
part_failed() { put "$1" status "failed: $2"; status=1; }
# keep_rows PART WHY: the data lines in $rows that PART made ("PART\trow\t...")
# go into the data, and PART is ok; with none, PART failed (WHY).
keep_rows() {
  if grep -q "^$1"$'\trow\t' <<<"$rows"; then
    printf '%s\n' "$rows" >>"$DATA"
    put "$1" status ok
  else
    part_failed "$1" "$2"
  fi
}
split_words() { read -r -a WORDS <<<"$1"; }

# The CSV reader the suite's runner uses too (split_csv).
CSV_AWK=$(cat bench/csv.awk)

# 1. the seed
if skipped seed; then put seed status "skipped: --skip seed"
else
  args=()
  [ "$QUICK" = 1 ] && args+=(--runs 3 --warmup 0)
  [ -n "$ALLOCS" ] && args+=(--allocs "$ALLOCS")
  split_words "$SEED_ARGS"; args+=("${WORDS[@]}")
  SHORT=("$BUILD/smpbench" "${args[@]}" -- "$BUILD/seed")
  CMD=("$BUILD/smpbench" "${args[@]}" --color never --csv "$WORK/seed.csv" --svg "$WORK/seed.svg" -- "$BUILD/seed")
  run_part seed
  # medians, and instructions where the kernel gave the hardware counters
  # (else cpu_time, user + sys: the task clock)
  rows=$( [ -s "$WORK/seed.csv" ] && awk "$CSV_AWK"'
    NR == 1 { n = split_csv($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    {
      split_csv($0, f); a = f[col["allocator"]]
      if (!(a in seen)) { seen[a] = 1; order[++na] = a }
      if (f[1] == "failed") why[a] = f[col["status"]]
      if (f[1] == "median") {
        wall[a] = f[col["wall_time"]]; rss[a] = f[col["peak_rss"]]
        ins[a] = ("instructions" in col) ? f[col["instructions"]] : ""
        cpu[a] = ("cpu_time" in col) ? f[col["cpu_time"]] : ""
      }
    }
    END {
      metric = "cpu_time"
      for (i = 1; i <= na; i++) if (ins[order[i]] != "") metric = "instructions"
      printf "seed\tmetric\t%s\n", metric
      for (i = 1; i <= na; i++) {
        a = order[i]
        if ((a in why) || !(a in wall)) printf "seed\trow\t%s\tfailed\t%s\n", a, (a in why) ? why[a] : "no median"
        else printf "seed\trow\t%s\t%s\t%s\t%s\n", a, wall[a], rss[a], (metric == "instructions") ? ins[a] : cpu[a]
      }
    }' "$WORK/seed.csv")
  keep_rows seed "smpbench exited $RC and wrote no medians (see $WORK/seed.err)"
fi

# 2. the workload suite
if skipped suite; then put suite status "skipped: --skip suite"
else
  args=()
  [ "$BUILD" != build ] && args+=(--build "$BUILD")
  [ "$QUICK" = 1 ] && args+=(--time 1 --min-runs 1 --warmup 0 --recheck 0 --no-reports)
  [ -n "$ALLOCS" ] && args+=(--allocs "$ALLOCS")
  split_words "$SUITE_ARGS"; args+=("${WORDS[@]}")
  SHORT=(bash bench/suite/run.sh "${args[@]}")
  CMD=("${SHORT[@]}" --out "$WORK/suite-out" --svg "$WORK/suite.svg")
  run_part suite
  # suite.tsv (run.sh's own collection: workload alloc ok|fail|skip wall
  # rss why) into a geomean a peer, over the workloads both it and glibc
  # completed, as run.sh computes its geomean row.
  rows=$( [ -f "$WORK/suite-out/suite.tsv" ] && awk -F'\t' '
    $2 == "*" { if ($3 != "skip" && !($1 in wseen)) { wseen[$1] = 1; nw++ }; next }
    {
      if (!($1 in wseen)) { wseen[$1] = 1; wl[++nw] = $1 }
      if (!($2 in aseen)) { aseen[$2] = 1; al[++na] = $2 }
      if ($3 == "ok" && $4 > 0 && $5 > 0) { wall[$1, $2] = $4; rss[$1, $2] = $5 }
    }
    END {
      base = al[1]
      for (j = 2; j <= na; j++) {
        a = al[j]; sw = 0; sr = 0; n = 0
        for (w in wseen)
          if (((w, a) in wall) && ((w, base) in wall)) {
            sw += log(wall[w, a] / wall[w, base]); sr += log(rss[w, a] / rss[w, base]); n++
          }
        if (n > 0) printf "suite\trow\t%s\t%.6f\t%.6f\t%d\t%d\n", a, exp(sw / n), exp(sr / n), n, nw
        else printf "suite\trow\t%s\t\t\t0\t%d\n", a, nw
      }
      if (base != "glibc") print "suite\tbase\t" base
    }' "$WORK/suite-out/suite.tsv")
  keep_rows suite "bench/suite/run.sh exited $RC with no table (see $WORK/suite.err)"
fi

# 3. the fast path
if skipped fastpath; then put fastpath status "skipped: --skip fastpath"
elif ! command -v valgrind >/dev/null; then
  put fastpath status "skipped: valgrind is not installed"
  echo "report.sh: fastpath: skipped, valgrind is not installed (apt-get install valgrind)" >&2
else
  args=()
  [ "$BUILD" != build ] && args+=(--build "$BUILD")
  [ "$QUICK" = 1 ] && args+=(--pairs 100000)
  [ -n "$ALLOCS" ] && args+=(--allocs "$ALLOCS")
  split_words "$FAST_ARGS"; args+=("${WORDS[@]}")
  SHORT=(bash bench/fastpath.sh "${args[@]}")
  CMD=("${SHORT[@]}")
  run_part fastpath
  rows=$(awk 'NR > 2 && NF >= 2 {
      if ($2 == "(failed)") printf "fastpath\trow\t%s\t\tfailed\n", $1
      else if (NF == 3) printf "fastpath\trow\t%s\t%s\t%s\n", $1, $2, $3
    }' "$WORK/fastpath.out")
  [ "$RC" -eq 0 ] || rows=""
  keep_rows fastpath "bench/fastpath.sh exited $RC (see $WORK/fastpath.err)"
fi

# 4. the shape sweep
if skipped shapes; then put shapes status "skipped: --skip shapes"
else
  args=()
  [ "$BUILD" != build ] && args+=(--build "$BUILD")
  [ "$QUICK" = 1 ] && args+=(--quick)
  [ -n "$ALLOCS" ] && args+=(--allocs "$ALLOCS")
  split_words "$SHAPES_ARGS"; args+=("${WORDS[@]}")
  SHORT=(bash bench/shapes/run.sh "${args[@]}")
  CMD=("${SHORT[@]}" --out "$WORK/shapes-out")
  run_part shapes
  sum=$(sed -n 's/^\([0-9]*\) shapes; flagged: \([0-9]*\)$/\1\t\2/p' "$WORK/shapes.out")
  if [ -n "$sum" ] && [ "${sum%%$'\t'*}" -gt 0 ]; then
    put shapes summary "${sum%%$'\t'*}" "${sum#*$'\t'}"
    put shapes status ok
  else
    part_failed shapes "bench/shapes/run.sh exited $RC with no shapes (see $WORK/shapes.err)"
  fi
fi

# ---- results.md ----------------------------------------------------------------
# fenced FILE: FILE's text in a fenced block
fenced() { printf '```text\n'; cat "$1"; printf '```\n'; }
ok() { grep -qx "$1"$'\tstatus\tok' "$DATA"; }
why() { sed -n "s/^$1\tstatus\t//p" "$DATA"; }
# section PART TITLE ABOUT: a part's heading, what it measures and its command
section() {
  printf '\n## %s\n\n%s\n\n' "$2" "$3"
  if ! ok "$1"; then printf 'Not measured in this report: %s.\n' "$(why "$1")"; return 1; fi
  printf 'Made by `%s` (%s s).\n\n' "$(sed -n "s/^$1\tcmd\t//p" "$DATA")" "$(sed -n "s/^$1\tsecs\t//p" "$DATA")"
}

new=$WORK/results.md
{
  printf '<!-- bench-report:data:begin -->\n```tsv\n'; cat "$DATA"; printf '```\n<!-- bench-report:data:end -->\n'
} >"$WORK/data.md"
head=$(bash bench/report/render.sh --results "$WORK/data.md" --head) || exit 1
{
  printf '%s\n' "$head"
  if section seed "The seed comparison" \
      "The seed workload (\`bench/seed.c\`) under each allocator, interleaved runs; the medians' ratios to glibc at the end (\`make bench\`)."; then
    printf '![Median wall time and peak RSS of the seed workload, relative to glibc](results-seed.svg)\n\n'
    printf '(The chart is the one `--svg` drew, copied here.)\n\n'
    fenced "$WORK/seed.out"
  fi
  if section suite "The workload suite" \
      "One program per allocation pattern and three real programs (\`bench/suite/README.md\`): median wall time and peak RSS relative to glibc (\`make bench-suite\`)."; then
    printf '![The workload suite, relative to glibc](results-suite.svg)\n\n'
    printf '(The chart is the one `--svg` drew, copied here.)\n\n'
    fenced "$WORK/suite.out"
  fi
  if section fastpath "The fast path" \
      "Instructions per malloc/free pair on mixed sizes 8-256 B, counted by callgrind (\`bench/fastpath.c\`, \`make bench-fastpath\`): exact and repeatable."; then
    fenced "$WORK/fastpath.out"
  fi
  if section shapes "The shape sweep" \
      "A grid of replacement workloads - size ranges, live blocks, threads, bytes written, lifetimes (\`bench/shapes/run.sh --help\`, \`make bench-shapes\`); flagged where smpalloc's time is over glibc's or 2x the best peer's, or its peak RSS over max(glibc's, 2x the leanest peer's). A shape first flagged on time runs again (\`--recheck\`: 9 interleaved runs each of glibc, smpalloc and its best peer), and its row shows those medians."; then
    fenced "$WORK/shapes.out"
  fi
  printf '\n## The data\n\nWhat the README'\''s summary is rendered from (`bench/report/render.sh`; the keys are listed at the\ntop of `bench/report/report.sh`).\n\n'
  cat "$WORK/data.md"
} >"$new"

# Into place, once every part has run: the report and the charts its parts
# drew (a part that made none leaves no chart of an older run behind), then
# the README's block.
cp "$new" "$OUT/results.md" || exit 2
for c in seed suite; do
  if ok "$c" && [ -s "$WORK/$c.svg" ]; then cp "$WORK/$c.svg" "$OUT/results-$c.svg" || exit 2
  else rm -f "$OUT/results-$c.svg"; fi
done
echo "report.sh: wrote $OUT/results.md" >&2
if [ "$status" -ne 0 ]; then
  echo "report.sh: a part made no table ($(grep $'\tstatus\tfailed' "$DATA" | cut -f1 | tr '\n' ' ')); $README not touched" >&2
  exit 1
fi
if [ "$SPLICE" = 1 ]; then
  "${RENDER[@]}" --splice || exit 2
  echo "report.sh: rewrote the summary block of $README" >&2
fi
exit 0
