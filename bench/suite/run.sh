#!/usr/bin/env bash
# bench/suite/run.sh - runs the workload suite (bench/suite/*.c, built as
# BUILD/suite/NAME) through smpbench against glibc, smpalloc and every peer
# allocator installed, and prints ONE table: per workload, the median wall
# time and median peak RSS of each allocator relative to glibc, a
# geometric-mean row, and glibc's absolute figures.  `make bench-suite`
# calls it; run it with --help for the options.
#
# It depends only on smpbench's documented --csv output (columns
# record,benchmark,allocator,command,run,status,<measurements>; the
# 'median' record holds each allocator's medians, 'failed' marks an
# allocator under which the command failed; units ns and bytes) and needs
# bash, awk and coreutils - no Python.
set -u
cd "$(dirname "$0")/../.." || exit 2

BUILD=build
SVG=
TIME=6          # smpbench time budget per workload, all allocators together
MIN_RUNS=3
WARMUP=1
RUNS=           # exact run count (overrides TIME)
ONLY=
ALLOCS=
EXTRA_ALLOCS=() # --alloc NAME=PATH, passed on: the version before as a column
OUT=
REPORTS=1
RECHECK=15      # runs of each allocator in the recheck of a flagged row (0: none)
WL_TIMEOUT=150  # seconds for one workload's whole smpbench run

usage() {
  cat <<'EOF'
usage: bench/suite/run.sh [options]

Runs every suite workload through smpbench (glibc, smpalloc, each peer) and
prints median wall time and peak RSS relative to glibc, one row a workload.

  --build DIR       where libsmpalloc.so, smpbench and suite/ are (build)
  --svg FILE        also draw the table as a bar chart (SVG)
  --time S          smpbench time budget per workload (default 6)
  --min-runs N      at least N counted runs per allocator (default 3)
  --runs N          exactly N counted runs per allocator (ignores --time)
  --warmup N        uncounted runs per allocator first (default 1)
  --only A,B        only these workloads (names as in the table)
  --allocs LIST     passed to smpbench (default: glibc, smpalloc, peers)
  --alloc N=PATH    an allocator more, passed to smpbench (repeatable): the
                    version before as a column
  --out DIR         keep smpbench's CSV and logs here (default BUILD/suite-out)
  --recheck N       run each row where smpalloc is slower than 1.25x the
                    best peer again, N runs of glibc, smpalloc and that
                    peer, interleaved (default 15; 0: no recheck)
  --no-reports      skip the one-run -v reports of the memory workloads
  --list            print the workloads and their commands, run nothing
  -h, --help        this text

Exit status: 0 when every workload ran under every allocator, 1 when any
failed or timed out (the table still shows the rest), 2 on a usage error.
EOF
}

while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --svg) SVG=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --min-runs) MIN_RUNS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --allocs) ALLOCS=$2; shift 2 ;;
    --alloc) EXTRA_ALLOCS+=(--alloc "$2"); shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --recheck) RECHECK=$2; shift 2 ;;
    --no-reports) REPORTS=0; shift ;;
    --list) LIST=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$BUILD/suite-out}
case $RECHECK in
  ''|*[!0-9]*) echo "run.sh: --recheck wants a count of runs (0: none), not '$RECHECK'" >&2; exit 2 ;;
esac

# The workloads: table name, program, arguments.  Parameters are the
# programs' defaults (see bench/suite/README.md) except where given here.
WORKLOADS=(
  "glibc-simple   glibc-simple"
  "glibc-thread   glibc-thread"
  "larson         larson"
  "xmalloc-test   xmalloc-test"
  "cache-scratch  cache-scratch"
  "cache-thrash   cache-thrash"
  "alloc-test     alloc-test"
  "mstress        mstress"
  "mleak          mleak"
  "malloc-large   malloc-large"
  "realloc-grow   realloc-grow"
  "prodcons-rss   prodcons-rss"
  "rss-decay      rss-decay"
  "threads-1000   threads threads=1000"
  "threads-8      threads threads=8"
)
# Workloads whose -v report is printed below the table (one run each).
REPORT_NAMES="prodcons-rss rss-decay mleak threads-1000 threads-8"

# Real programs, each where it is installed (a row says "skipped" where it
# is not): their inputs are in bench/suite/real/, which says what they do.
# Python is Debian's /usr/bin/python3 where there is one (an optimised
# build, the same on every Debian machine), else python3 from PATH.
# SUITE_PYTHON, SUITE_SQLITE and SUITE_CC name other executables.
PROGRAMS=(python sqlite gcc)

# program_cmd NAME: the command of program NAME into CMD and the variables
# it runs with into ENVS (arrays); false, with the reason in WHY, when the
# program is not installed.
program_cmd() {
  local exe
  ENVS=()
  case $1 in
    python) # the interpreter itself (pyenv's python3 is a shell script);
            # PYTHONMALLOC=malloc: every object goes through the allocator
      local py=${SUITE_PYTHON:-python3}
      [ -z "${SUITE_PYTHON:-}" ] && [ -x /usr/bin/python3 ] && py=/usr/bin/python3
      exe=$("$py" -c 'import sys; print(sys.executable)' 2>/dev/null) \
        && [ -x "$exe" ] || { WHY="$py is not installed"; return 1; }
      ENVS=(PYTHONMALLOC=malloc)
      CMD=("$exe" bench/suite/real/objects.py) ;;
    sqlite)
      exe=$(command -v "${SUITE_SQLITE:-sqlite3}") || { WHY="${SUITE_SQLITE:-sqlite3} is not installed"; return 1; }
      CMD=("$exe" -bail :memory: ".read bench/suite/real/queries.sql") ;;
    gcc)
      exe=$(command -v "${SUITE_CC:-gcc}") || { WHY="${SUITE_CC:-gcc} is not installed"; return 1; }
      CMD=("$exe" -O2 -g -Iinclude -Isrc -c src/slot.c -o /dev/null) ;;
  esac
}

if [ -n "${LIST:-}" ]; then
  for w in "${WORKLOADS[@]}"; do
    read -r name prog args <<<"$w"
    printf '%-14s %s/suite/%s %s\n' "$name" "$BUILD" "$prog" "$args"
  done
  for name in "${PROGRAMS[@]}"; do
    if program_cmd "$name"; then printf '%-14s %s\n' "$name" "${ENVS[*]}${ENVS[*]:+ }${CMD[*]}"
    else printf '%-14s skipped: %s\n' "$name" "$WHY"; fi
  done
  exit 0
fi

SMPBENCH=$BUILD/smpbench
for f in "$SMPBENCH" "$BUILD/libsmpalloc.so"; do
  if [ ! -e "$f" ]; then echo "run.sh: $f is missing (make lib $BUILD/smpbench)" >&2; exit 2; fi
done
mkdir -p "$OUT" || exit 2

selected() { # $1 = name
  [ -z "$ONLY" ] && return 0
  [[ ",$ONLY," == *",$1,"* ]]
}

sched=(--min-runs "$MIN_RUNS" --warmup "$WARMUP")
if [ -n "$RUNS" ]; then sched+=(--runs "$RUNS"); else sched+=(--time "$TIME"); fi
[ -n "$ALLOCS" ] && sched+=(--allocs "$ALLOCS")
sched+=("${EXTRA_ALLOCS[@]}")

start=$(date +%s)
declare -A CMDLINE ARGLINE # a workload's smpbench command, before and after the options
names=()
status=0
# Every workload, then every program: name, then "prog args" or "-".
entries=("${WORKLOADS[@]}")
for name in "${PROGRAMS[@]}"; do entries+=("$name -"); done
for w in "${entries[@]}"; do
  read -r name prog args <<<"$w"
  selected "$name" || continue
  names+=("$name")
  csv=$OUT/$name.csv
  rm -f "$csv" "$OUT/$name.err" "$OUT/$name.skip"
  if [ "$prog" = - ]; then
    if ! program_cmd "$name"; then
      echo "$WHY" >"$OUT/$name.skip"; printf '  %-14s skipped: %s\n' "$name" "$WHY" >&2; continue
    fi
  else
    ENVS=()
    # shellcheck disable=SC2206
    CMD=("$BUILD/suite/$prog" $args)
    if [ ! -x "${CMD[0]}" ]; then
      echo "run.sh: ${CMD[0]} is missing (make suite-bins)" >&2
      echo "missing" >"$OUT/$name.err"; status=1; continue
    fi
  fi
  CMDLINE[$name]=$(printf '%q ' env "${ENVS[@]}" timeout -k 5 "$WL_TIMEOUT" "$SMPBENCH")
  ARGLINE[$name]=$(printf '%q ' -- "${CMD[@]}")
  printf '  %-14s ' "$name" >&2
  t0=$(date +%s)
  env "${ENVS[@]}" timeout -k 5 "$WL_TIMEOUT" "$SMPBENCH" "${sched[@]}" --color never --csv "$csv" \
    -- "${CMD[@]}" >"$OUT/$name.log" 2>&1
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "timeout after ${WL_TIMEOUT}s" >"$OUT/$name.err"; status=1
  elif [ ! -s "$csv" ]; then
    echo "smpbench exited $rc, no CSV (see $OUT/$name.log)" >"$OUT/$name.err"; status=1
  elif [ "$rc" -ne 0 ]; then
    status=1
  fi
  echo "$(( $(date +%s) - t0 ))s" >&2
done
elapsed=$(( $(date +%s) - start ))

# The start of an awk program that reads smpbench's CSV: split_csv, and the
# header's columns into col[] (wall_time, peak_rss and allocator must be
# there).  Its records then come with NR > 1.
CSV_AWK="$(cat bench/csv.awk)"'
    NR == 1 {
      n = split_csv($0, h)
      for (i = 1; i <= n; i++) col[h[i]] = i
      if (!("wall_time" in col) || !("peak_rss" in col) || !("allocator" in col)) {
        print "run.sh: unexpected CSV header: " $0 > "/dev/stderr"; exit 1
      }
      next
    }'

# ---- collect: one line per (workload, allocator): name alloc ok wall rss why
DATA=$OUT/suite.tsv
: >"$DATA"
for name in "${names[@]}"; do
  if [ -f "$OUT/$name.skip" ]; then
    printf '%s\t*\tskip\t\t\t%s\n' "$name" "$(cat "$OUT/$name.skip")" >>"$DATA"
    continue
  fi
  if [ -f "$OUT/$name.err" ]; then
    printf '%s\t*\tfail\t\t\t%s\n' "$name" "$(cat "$OUT/$name.err")" >>"$DATA"
    continue
  fi
  awk -v name="$name" '
  '"$CSV_AWK"'
    {
      split_csv($0, f)
      a = f[col["allocator"]]
      if (!(a in seen)) { seen[a] = 1; order[++na] = a }
      if (f[1] == "failed") why[a] = f[col["status"]]
      else if (f[1] == "median") { wall[a] = f[col["wall_time"]]; rss[a] = f[col["peak_rss"]] }
    }
    END {
      for (i = 1; i <= na; i++) {
        a = order[i]
        if (a in why || !(a in wall))
          printf "%s\t%s\tfail\t\t\t%s\n", name, a, (a in why) ? why[a] : "no median"
        else
          printf "%s\t%s\tok\t%s\t%s\t\n", name, a, wall[a], rss[a]
      }
    }' "$OUT/$name.csv" >>"$DATA" || status=1
done

# ---- the recheck: a row where smpalloc's median is more than 1.25x the best
# peer's, from a few runs on a noisy machine, runs again: glibc (the table's
# base), smpalloc and that peer, RECHECK runs each, interleaved.  The table
# then tells a confirmed gap (!) from one the recheck did not see (?).
RECHECKS=$OUT/recheck.tsv
: >"$RECHECKS"
if [ "$RECHECK" -gt 0 ]; then
  while IFS=$'\t' read -r name base best; do
    [ -n "${CMDLINE[$name]:-}" ] || continue
    printf '  recheck %-14s ' "$name" >&2
    t0=$(date +%s)
    eval "rcmd=(${CMDLINE[$name]})"
    eval "rargs=(${ARGLINE[$name]})"
    rcsv=$OUT/$name.recheck.csv
    rm -f "$rcsv"
    "${rcmd[@]}" --runs "$RECHECK" --warmup "$WARMUP" --allocs "$base,smpalloc,$best" --color never \
      --csv "$rcsv" "${rargs[@]}" </dev/null >"$OUT/$name.recheck.log" 2>&1
    got=fail
    if [ -s "$rcsv" ]; then
      got=$(awk -v best="$best" "$CSV_AWK"'
        { split_csv($0, f); if (f[1] == "median") wall[f[col["allocator"]]] = f[col["wall_time"]] }
        END {
          if (wall["smpalloc"] > 0 && wall[best] > 0) printf "%.6f", wall["smpalloc"] / wall[best]
          else printf "fail"
        }' "$rcsv")
    fi
    printf '%s\t%s\t%s\t%s\n' "$name" "$best" "$got" "$RECHECK" >>"$RECHECKS"
    echo "$(( $(date +%s) - t0 ))s" >&2
  done < <(awk -F'\t' '
    $2 != "*" && !(($1, $2) in seen) {
      seen[$1, $2] = 1
      if (base == "") base = $2
      if ($3 == "ok") wall[$1, $2] = $4 + 0
      if (!($1 in wseen)) { wseen[$1] = 1; wl[++nw] = $1 }
      if ($2 != base && $2 != "smpalloc") peers[$1] = peers[$1] " " $2
    }
    END {
      for (i = 1; i <= nw; i++) {
        w = wl[i]
        if (!((w, "smpalloc") in wall) || !((w, base) in wall)) continue
        n = split(peers[w], p, " "); best = ""
        for (k = 1; k <= n; k++)
          if (((w, p[k]) in wall) && (best == "" || wall[w, p[k]] < wall[w, best])) best = p[k]
        if (best != "" && wall[w, "smpalloc"] > 1.25 * wall[w, best]) printf "%s\t%s\t%s\n", w, base, best
      }
    }' "$DATA")
fi

# ---- the table (and the chart) ------------------------------------------------
awk -F'\t' -v svg="$SVG" -v elapsed="$elapsed" -v sched="${sched[*]}" -v programs="${PROGRAMS[*]}" \
    -v rechecks="$RECHECKS" '
  BEGIN {
    while ((getline line < rechecks) > 0) {
      split(line, r, "\t"); rc[r[1]] = r[3]; rcruns[r[1]] = r[4]
    }
  }
  function fmt_time(ns) {
    if (ns >= 1e9) return sprintf("%.2fs", ns / 1e9)
    if (ns >= 1e6) return sprintf("%.0fms", ns / 1e6)
    return sprintf("%.0fus", ns / 1e3)
  }
  function fmt_bytes(b) {
    if (b >= 1073741824) return sprintf("%.2fGiB", b / 1073741824)
    if (b >= 1048576) return sprintf("%.1fMiB", b / 1048576)
    return sprintf("%.0fKiB", b / 1024)
  }
  function ratio(x) { return sprintf("%.2fx", x) }
  function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
  {
    w = $1; a = $2
    if (!(w in wseen)) { wseen[w] = 1; wl[++nw] = w }
    if (a == "*" && $3 == "skip") { wskip[w] = $6; next }
    if (a == "*") { wfail[w] = $6; next }
    if (!(a in aseen)) { aseen[a] = 1; al[++na] = a }
    ok[w, a] = ($3 == "ok")
    if ($3 == "ok") { wall[w, a] = $4 + 0; rss[w, a] = $5 + 0 }
    else why[w, a] = $6
  }
  END {
    base = al[1]
    nprog = split(programs, pl, " ")
    for (k = 1; k <= nprog; k++) isprog[pl[k]] = 1
    nrun = 0 # the workloads that ran (not skipped), for the notes and the chart
    for (i = 1; i <= nw; i++) if (!(wl[i] in wskip)) rl[++nrun] = wl[i]
    # ratios to the baseline (the first allocator, glibc by default)
    for (i = 1; i <= nw; i++) {
      w = wl[i]
      for (j = 1; j <= na; j++) {
        a = al[j]
        have[w, a] = ((w, a) in ok) && ok[w, a] && ok[w, base] && wall[w, base] > 0 && rss[w, base] > 0
        if (have[w, a]) { rw[w, a] = wall[w, a] / wall[w, base]; rr[w, a] = rss[w, a] / rss[w, base] }
      }
    }
    # geometric means over the workloads each allocator completed: all of
    # them (g = 0), the synthetic ones (1), the real programs (2)
    for (j = 1; j <= na; j++) {
      a = al[j]
      for (g = 0; g <= 2; g++) { sw[g] = 0; sr[g] = 0; n[g] = 0 }
      for (i = 1; i <= nw; i++) {
        w = wl[i]
        if (!have[w, a]) continue
        k = (w in isprog) ? 2 : 1
        sw[0] += log(rw[w, a]); sr[0] += log(rr[w, a]); n[0]++
        sw[k] += log(rw[w, a]); sr[k] += log(rr[w, a]); n[k]++
      }
      for (g = 0; g <= 2; g++) {
        gk[g, a] = n[g]
        if (n[g] > 0) { gkw[g, a] = exp(sw[g] / n[g]); gkr[g, a] = exp(sr[g] / n[g]) }
      }
      gn[a] = n[0]; gw[a] = gkw[0, a]; gr[a] = gkr[0, a]
    }

    printf "\nMedian wall time and peak RSS relative to %s (lower is better)\n", base
    printf "smpbench %s per workload; suite ran in %ds\n\n", sched, elapsed
    # a column per allocator, as wide as its label (mimalloc-2.4.1) needs
    cw = 13
    for (j = 2; j <= na; j++) if (length(al[j]) > cw) cw = length(al[j])
    dashes = sprintf("%" cw "s", ""); gsub(/ /, "-", dashes)
    printf "%-14s %10s %10s", "workload", base " wall", base " RSS"
    for (j = 2; j <= na; j++) printf " | %-" cw "s", al[j]
    printf "\n%-14s %10s %10s", "", "", ""
    for (j = 2; j <= na; j++) printf " | %-" cw "s", sprintf("%6s %6s", "wall", "RSS")
    printf "\n"
    line = sprintf("%-14s %10s %10s", "", "", "")
    gsub(/./, "-", line); printf "%s", line
    for (j = 2; j <= na; j++) printf "-+-%s", dashes
    printf "\n"
    nflag = 0
    for (i = 1; i <= nw; i++) {
      w = wl[i]
      if ((w in isprog) && !((wl[i - 1]) in isprog)) { # the programs start
        printf "%s", line
        for (j = 2; j <= na; j++) printf "-+-%s", dashes
        printf "\n"
      }
      if (w in wskip) { printf "%-14s skipped: %s\n", w, wskip[w]; continue }
      if (w in wfail) {
        printf "%-14s FAILED: %s\n", w, wfail[w]
        flag[++nflag] = sprintf("%s: FAILED for every allocator (%s)", w, wfail[w])
        continue
      }
      if (ok[w, base]) printf "%-14s %10s %10s", w, fmt_time(wall[w, base]), fmt_bytes(rss[w, base])
      else printf "%-14s %21s", w, "FAILED"
      for (j = 2; j <= na; j++) {
        a = al[j]
        if (have[w, a]) {
          mark = " "
          if (a == "smpalloc") {
            best = 0
            for (k = 2; k <= na; k++)
              if (al[k] != "smpalloc" && have[w, al[k]] && (best == 0 || rw[w, al[k]] < best)) {
                best = rw[w, al[k]]; bestn = al[k]
              }
            if (best > 0 && rw[w, a] > 1.25 * best) {
              text = sprintf("%s: smpalloc wall %s of %s = %s, best peer %s %s = %s: %.2fx the best peer", \
                w, ratio(rw[w, a]), base, fmt_time(wall[w, a]), bestn, ratio(best), \
                fmt_time(wall[w, bestn]), rw[w, a] / best)
              if (!(w in rc)) mark = "!"
              else if (rc[w] == "fail") { mark = "!"; text = text "; the recheck failed" }
              else {
                mark = rc[w] + 0 > 1.25 ? "!" : "?"
                text = sprintf("%s; recheck, %d runs each: %.2fx%s", text, rcruns[w], rc[w], \
                  (mark == "!" ? " (confirmed)" : ""))
              }
              if (mark == "!") flag[++nflag] = text
              else unconfirmed[++nq] = text
            }
          }
          printf " | %-" cw "s", sprintf("%5s%s %6s", ratio(rw[w, a]), mark, ratio(rr[w, a]))
        } else if (((w, a) in ok) && !ok[w, a]) {
          printf " | %-" cw "s", "FAILED"
          flag[++nflag] = sprintf("%s: FAILED under %s (%s)", w, a, why[w, a])
        } else printf " | %-" cw "s", "-"
      }
      printf "\n"
    }
    printf "%s", line
    for (j = 2; j <= na; j++) printf "-+-%s", dashes
    printf "\n"
    # with programs among the rows, the geomean of each kind too
    both = 0
    for (j = 2; j <= na; j++) if (gk[1, al[j]] > 0 && gk[2, al[j]] > 0) both = 1
    split("geomean|  synthetic|  programs", gname, "|")
    for (g = 0; g <= (both ? 2 : 0); g++) {
      printf "%-14s %10s %10s", gname[g + 1], "", ""
      for (j = 2; j <= na; j++) {
        a = al[j]
        if (gk[g, a] > 0) printf " | %-" cw "s", sprintf("%5s  %6s", ratio(gkw[g, a]), ratio(gkr[g, a]))
        else printf " | %-" cw "s", "-"
      }
      printf "\n"
    }
    for (j = 2; j <= na; j++)
      if (gn[al[j]] < nrun) printf "  (%s: geomean over the %d of %d workloads it completed)\n", al[j], gn[al[j]], nrun
    if (nq > 0) {
      printf "\n? = smpalloc slower than 1.25x the best peer in these runs, not in the recheck\n"
      printf "    (glibc, smpalloc and that peer again, interleaved):\n"
      for (k = 1; k <= nq; k++) printf "  %s\n", unconfirmed[k]
    }
    if (nflag > 0) {
      printf "\n! = smpalloc slower than 1.25x the best peer; problems:\n"
      for (k = 1; k <= nflag; k++) printf "  %s\n", flag[k]
    } else printf "\nsmpalloc is within 1.25x of the best peer everywhere%s, no failures.\n", \
      (nq > 0 ? " once rechecked" : "")

    if (svg == "") exit
    # ---- SVG: two panels (wall, RSS), log scale 0.1x..10x, one group per
    # workload plus the geomean, one bar per allocator other than the base
    nb = na - 1; bw = 9; gap = 14
    ng = nrun + 1
    gwid = nb * bw + gap
    left = 90; W = left + ng * gwid + 30
    if (W < 780) W = 780
    ph = 230; top1 = 112; top2 = top1 + ph + 150; H = top2 + ph + 150
    split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf", col, " ")
    lo = log(0.1); hi = log(10)
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n", W, H, W, H > svg
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n" > svg
    printf "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">smpalloc workload suite: median relative to %s (log scale, lower is better)</text>\n", left, esc(base) > svg
    for (j = 2; j <= na; j++) {
      lx = left + (j - 2) * 130
      printf "<rect x=\"%d\" y=\"44\" width=\"14\" height=\"14\" fill=\"%s\"/><text x=\"%d\" y=\"56\" font-size=\"13\">%s</text>\n", lx, col[j - 1], lx + 20, esc(al[j]) > svg
    }
    printf "<text x=\"%d\" y=\"74\" font-size=\"11\" fill=\"#555\">bars start at %s = 1.00x; values beyond 0.1x..10x are clipped and labelled</text>\n", left, esc(base) > svg
    for (p = 1; p <= 2; p++) {
      top = (p == 1) ? top1 : top2
      printf "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", left, top - 8, (p == 1) ? "median wall time" : "median peak RSS" > svg
      split("0.1 0.2 0.5 1 2 5 10", ticks, " ")
      for (t = 1; t <= 7; t++) {
        y = top + ph - (log(ticks[t]) - lo) / (hi - lo) * ph
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"%s/>\n", left, y, W - 30, y, (ticks[t] == 1) ? "#333" : "#e5e5e5", (ticks[t] == 1) ? " stroke-dasharray=\"5,3\"" : "" > svg
        printf "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" fill=\"#555\">%sx</text>\n", left - 6, y + 4, ticks[t] > svg
      }
      y1 = top + ph - (0 - lo) / (hi - lo) * ph
      for (g = 1; g <= ng; g++) {
        w = (g <= nrun) ? rl[g] : "geomean"
        gx = left + (g - 1) * gwid + gap / 2
        for (j = 2; j <= na; j++) {
          a = al[j]; x = gx + (j - 2) * bw
          if (g <= nrun) { hv = have[w, a]; v = (p == 1) ? rw[w, a] : rr[w, a] }
          else { hv = gn[a] > 0; v = (p == 1) ? gw[a] : gr[a] }
          if (!hv) {
            printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#c00\" text-anchor=\"middle\">x</text>\n", x + bw / 2, y1 - 3 > svg
            continue
          }
          lv = log(v); clip = 0
          if (lv > hi) { lv = hi; clip = 1 }
          if (lv < lo) { lv = lo; clip = 1 }
          y = top + ph - (lv - lo) / (hi - lo) * ph
          yt = (y < y1) ? y : y1; hgt = (y < y1) ? y1 - y : y - y1
          if (hgt < 1) hgt = 1
          printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s %s: %.2fx</title></rect>\n", x, yt, bw - 1, hgt, col[j - 1], esc(w), esc(a), v > svg
          if (clip) printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.0fx</text>\n", x + bw / 2, (y < y1) ? y - 2 : y + 10, v > svg
          if (a == "smpalloc" && p == 1 && g <= nrun && (w, a) in ok) {
            for (fk = 1; fk <= nflag; fk++) if (index(flag[fk], w ": smpalloc wall") == 1)
              printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\" fill=\"#c00\" text-anchor=\"middle\">!</text>\n", x + bw / 2, ((y < y1) ? y : y1) - 4 > svg
            for (fk = 1; fk <= nq; fk++) if (index(unconfirmed[fk], w ": smpalloc wall") == 1)
              printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#777\" text-anchor=\"middle\">?</text>\n", x + bw / 2, ((y < y1) ? y : y1) - 4 > svg
          }
        }
        lab = w
        if (g <= nrun && p == 1 && ok[w, base]) lab = lab " (" fmt_time(wall[w, base]) ")"
        if (g <= nrun && p == 2 && ok[w, base]) lab = lab " (" fmt_bytes(rss[w, base]) ")"
        lx = gx + nb * bw / 2; ly = top + ph + 12
        printf "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" transform=\"rotate(-45 %.1f %.1f)\"%s>%s</text>\n", lx, ly, lx, ly, (g > nrun) ? " font-weight=\"bold\"" : "", esc(lab) > svg
      }
    }
    printf "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">labels: workload (%s median); x = failed; ! = smpalloc slower than 1.25x the best peer; ? = not in the recheck</text>\n", left, H - 12, esc(base) > svg
    printf "</svg>\n" > svg
    close(svg)
  }' "$DATA" || status=1
[ -n "$SVG" ] && [ -s "$SVG" ] && echo "chart: $SVG"

# ---- one -v run of the memory workloads under each allocator ----------------
if [ "$REPORTS" -eq 1 ]; then
  # the allocators and their preloads, as smpbench finds them
  declare -A PRE=()
  while IFS=$'\t' read -r a path; do PRE[$a]=$path; done \
    < <("$SMPBENCH" --list-allocs ${ALLOCS:+--allocs "$ALLOCS"} "${EXTRA_ALLOCS[@]}" 2>/dev/null)
  mapfile -t allocs < <(awk -F'\t' '$2 != "*" && !s[$2]++ { print $2 }' "$DATA")
  printed=0
  for w in "${WORKLOADS[@]}"; do
    read -r name prog args <<<"$w"
    [[ " $REPORT_NAMES " == *" $name "* ]] || continue
    selected "$name" || continue
    [ "$printed" -eq 0 ] && printf '\nOne -v run of each memory / thread-count workload:\n'
    printed=1
    printf '%s (%s):\n' "$name" "$BUILD/suite/$prog -v${args:+ $args}"
    for a in "${allocs[@]}"; do
      [ -n "${PRE[$a]+x}" ] || continue
      # shellcheck disable=SC2086
      out=$(LD_PRELOAD=${PRE[$a]} timeout 60 "$BUILD/suite/$prog" -v $args 2>&1)
      rc=$?
      [ "$rc" -ne 0 ] && out="FAILED (exit $rc): $out"
      printf '  %-14s %s\n' "$a" "${out#"$prog: "}"
    done
  done
fi
exit "$status"
