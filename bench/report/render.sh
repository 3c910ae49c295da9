#!/usr/bin/env bash
# bench/report/render.sh - the README's results summary, rendered from the
# data section of a report (docs/results.md, written by report.sh; `make
# bench-report` runs both).  The block is never edited by hand: this script
# prints it, checks it or splices it in, from the saved figures alone.
#
# The data section is the part of results.md between the lines
#   <!-- bench-report:data:begin -->   and   <!-- bench-report:data:end -->
# (a fenced block of tab-separated lines: PART KEY VALUE...; report.sh says
# what each one holds).  The README's block is what lies between the lines
#   <!-- bench-report:begin -->   and   <!-- bench-report:end -->
# each alone on its line, once; the marker lines themselves and everything
# outside them are left as they are.
#
# Needs bash, awk and coreutils.  --help for the modes.
set -u
cd "$(dirname "$0")/../.." || exit 2

RESULTS=docs/results.md
README=README.md
MODE=block
BEGIN_MARK='<!-- bench-report:begin -->'
END_MARK='<!-- bench-report:end -->'

usage() {
  cat <<'EOF'
usage: bench/report/render.sh [--results FILE] [--readme FILE] [MODE]

  --results FILE   the report whose data is read (default docs/results.md)
  --readme FILE    the README (default README.md); the block's link to the
                   report is relative to its folder
Modes (one; default --block):
  --block          print the README's block (the lines between the markers)
  --head           print the head of the report: title, machine, allocators
  --markers        check that the README has the two marker lines, once
                   each, in order (exit 1 with a message if not)
  --check          exit 0 when the README's block is exactly what --block
                   prints, else 1 with a diff
  --splice         rewrite the README's block with what --block prints;
                   nothing outside the markers changes
  -h, --help       this text
Exit status: 0 done, 1 no data, no markers or a block that differs, 2 usage.
EOF
}

while [ $# -gt 0 ]; do
  case $1 in
    --results) RESULTS=$2; shift 2 ;;
    --readme) README=$2; shift 2 ;;
    --block|--head|--markers|--check|--splice) MODE=${1#--}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "render.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

die() { echo "render.sh: $*" >&2; exit 1; }

# markers: the line numbers of the README's two markers into B and E, or a
# message saying what is wrong.
markers() {
  [ -f "$README" ] || die "$README does not exist"
  local nb ne
  nb=$(grep -cxF -- "$BEGIN_MARK" "$README")
  ne=$(grep -cxF -- "$END_MARK" "$README")
  if [ "$nb" -ne 1 ] || [ "$ne" -ne 1 ]; then
    die "$README must hold the lines '$BEGIN_MARK' and '$END_MARK', once each and alone on their lines (found $nb and $ne): they mark the results summary that make bench-report rewrites; add them where the summary goes"
  fi
  B=$(grep -nxF -- "$BEGIN_MARK" "$README" | cut -d: -f1)
  E=$(grep -nxF -- "$END_MARK" "$README" | cut -d: -f1)
  [ "$B" -lt "$E" ] || die "$README: '$END_MARK' (line $E) comes before '$BEGIN_MARK' (line $B)"
}

# data: the report's data lines on stdout.
data() {
  [ -f "$RESULTS" ] || die "$RESULTS does not exist: make bench-report writes it"
  local d
  d=$(awk '
    $0 == "<!-- bench-report:data:end -->" { on = 0 }
    on && !/^```/ { print }
    $0 == "<!-- bench-report:data:begin -->" { on = 1; seen = 1 }
    END { exit !seen }' "$RESULTS") \
    || die "$RESULTS has no data section (<!-- bench-report:data:begin -->): it was not written by make bench-report"
  grep -q $'^report\tversion\t1$' <<<"$d" || die "$RESULTS: its data is not of the version this script reads (1)"
  printf '%s\n' "$d"
}

# The link from the README's folder to the report.
link() {
  realpath -m --relative-to="$(dirname "$README")" "$RESULTS"
}

# render MODE (block or head): the text, from the data on stdin.
render() {
  awk -F'\t' -v mode="$1" -v link="$(link)" '
  function fmt_time(ns) {
    if (ns >= 1e9) return sprintf("%.2f s", ns / 1e9)
    if (ns >= 1e6) return sprintf("%.1f ms", ns / 1e6)
    return sprintf("%.0f us", ns / 1e3)
  }
  function fmt_bytes(b) {
    if (b >= 1073741824) return sprintf("%.2f GiB", b / 1073741824)
    if (b >= 1048576) return sprintf("%.1f MiB", b / 1048576)
    return sprintf("%.0f KiB", b / 1024)
  }
  function fmt_metric(m, v) { return m == "instructions" ? sprintf("%.1fM", v / 1e6) : fmt_time(v) }
  function ratio(x, b) { return (b > 0 && x != "") ? sprintf("%.2f×", x / b) : "-" }
  # One header line: what the table shows, then the date, the machine and
  # the command that made it.
  function header(title, part) {
    printf "**%s**: %s, %s, %s cores, Linux %s; `%s`%s\n\n", title, r["day"], m["cpu"], m["cores"], \
      m["kernel"], short[part], (r["quick"] == 1 ? " (a quick run, not for comparison)" : "")
  }
  # A part that did not run: one line says why, in place of its header and
  # table.
  function absent(title, part) {
    if (st[part] == "ok") return 0
    printf "**%s**: not measured in this report (%s).\n\n", title, st[part] == "" ? "no data" : st[part]
    return 1
  }
  $1 == "machine" { m[$2] = $3 }
  $1 == "report" { r[$2] = $3 }
  $1 == "alloc" { na++; al[na] = $2; alib[na] = $3 }
  $2 == "status" { st[$1] = $3 }
  $2 == "cmd" { cmd[$1] = $3 }
  $2 == "short" { short[$1] = $3 }
  $2 == "secs" { secs[$1] = $3 }
  $1 == "seed" && $2 == "metric" { metric = $3 }
  $1 == "seed" && $2 == "row" { sn++; sa[sn] = $3; sw[sn] = $4; sr[sn] = $5; sm[sn] = $6; sy[sn] = $7 }
  $1 == "suite" && $2 == "row" { un++; ua[un] = $3; uw[un] = $4; ur[un] = $5; uc[un] = $6; ut[un] = $7 }
  $1 == "fastpath" && $2 == "row" { fn++; fa[fn] = $3; fi[fn] = $4; fp[fn] = $5 }
  $1 == "shapes" && $2 == "summary" { shn = $3; shf = $4 }
  END {
    if (mode == "head") {
      printf "# smpalloc: benchmark results\n\n"
      printf "Made by `%s` on %s at commit `%s`%s. Every table below is\n", \
        r["invocation"], r["date"], r["commit"], (r["quick"] == 1 ? ", **a quick run** (few, short runs: not for comparison)" : "")
      printf "the output of the command shown above it; the README'\''s summary is rendered from the data\n"
      printf "at the end of this file (`bench/report/render.sh`). Do not edit: run the command again.\n\n"
      printf "## The machine\n\n"
      printf "- CPU: %s\n", m["cpu"]
      printf "- cores: %s (online: %s)\n", m["cores"], m["online"]
      printf "- memory: %s\n", m["memory"]
      printf "- kernel: Linux %s\n", m["kernel"]
      printf "- THP enabled: `%s`\n", m["thp"]
      printf "- THP defrag: `%s`\n", m["thp_defrag"]
      printf "- date: %s\n", r["date"]
      printf "- commit: %s\n", r["commit"]
      printf "\n## The allocators\n\n"
      for (i = 1; i <= na; i++)
        printf "- %s: %s\n", al[i], (alib[i] == "" ? "the C library'\''s own (no preload)" : "`" alib[i] "`")
      printf "\n## The parts\n\n"
      printf "| part | status | seconds | command |\n| :-- | :-- | --: | :-- |\n"
      split("seed suite fastpath shapes", parts, " ")
      for (k = 1; k <= 4; k++) {
        p = parts[k]
        printf "| %s | %s | %s | %s |\n", p, st[p], (p in secs) ? secs[p] : "-", (p in cmd) ? "`" cmd[p] "`" : "-"
      }
      exit
    }
    # ---- the README block
    printf "<!-- Made by `make bench-report` from %s (bench/report/render.sh): do not edit. -->\n\n", link
    if (!absent("The seed", "seed")) {
      header("The seed", "seed")
      base = 0
      for (i = 1; i <= sn; i++) if (sa[i] == "glibc" && sw[i] != "failed") base = i
      mname = (metric == "instructions") ? "instructions" : "CPU time"
      printf "| seed (bench/seed.c), medians | wall | peak RSS | %s |\n| :-- | --: | --: | --: |\n", mname
      for (i = 1; i <= sn; i++) {
        if (sw[i] == "failed") { printf "| %s | failed | | |\n", sa[i]; continue }
        if (i == base) printf "| %s | %s | %s | %s |\n", sa[i], fmt_time(sw[i]), fmt_bytes(sr[i]), fmt_metric(metric, sm[i])
        else if (base) printf "| %s | %s | %s | %s |\n", sa[i], ratio(sw[i], sw[base]), ratio(sr[i], sr[base]), ratio(sm[i], sm[base])
        else printf "| %s | %s | %s | %s |\n", sa[i], fmt_time(sw[i]), fmt_bytes(sr[i]), fmt_metric(metric, sm[i])
      }
      printf "\n"
    }
    if (!absent("The workload suite", "suite")) {
      header("The workload suite", "suite")
      printf "| suite, geomean vs glibc | time | peak RSS | workloads |\n| :-- | --: | --: | --: |\n"
      for (i = 1; i <= un; i++)
        if (uc[i] > 0) printf "| %s | %.2f× | %.2f× | %d of %d |\n", ua[i], uw[i], ur[i], uc[i], ut[i]
        else printf "| %s | - | - | 0 of %d |\n", ua[i], ut[i]
      printf "\n"
    }
    if (!absent("The fast path", "fastpath")) {
      header("The fast path", "fastpath")
      printf "| fast path (callgrind) | instructions per malloc/free pair |\n| :-- | --: |\n"
      for (i = 1; i <= fn; i++)
        printf "| %s | %s |\n", fa[i], (fp[i] == "failed") ? "failed under valgrind" : fp[i]
      printf "\n"
    }
    printf "Lower is better everywhere. The full tables, %sthe machine and the\n", \
      (st["shapes"] == "ok" ? sprintf("the shape sweep (%d shapes, %d flagged), ", shn, shf) : "")
    printf "charts: [%s](%s).\n", link, link
  }'
}

case $MODE in
  block) d=$(data) || exit 1; render block <<<"$d" ;;
  head) d=$(data) || exit 1; render head <<<"$d" ;;
  markers) markers ;;
  check)
    markers
    d=$(data) || exit 1
    want=$(render block <<<"$d")
    got=$(sed -n "$((B + 1)),$((E - 1))p" "$README")
    if [ "$got" != "$want" ]; then
      echo "render.sh: the block of $README is not what $RESULTS renders (run make bench-report; never edit the block by hand):" >&2
      diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/  /' >&2
      exit 1
    fi ;;
  splice)
    markers
    d=$(data) || exit 1
    block=$(render block <<<"$d") || exit 1
    new=$(mktemp "$README.XXXXXX") || exit 1
    # head and tail copy the bytes outside the block as they are (a last
    # line without a newline stays so).
    { head -n "$B" "$README"; printf '%s\n' "$block"; tail -n +"$E" "$README"; } >"$new" \
      && cat "$new" >"$README"
    rc=$?
    rm -f "$new"
    exit $rc ;;
esac
