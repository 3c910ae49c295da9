#!/usr/bin/env bash
# t_bench_report: the published results are made by `make bench-report`
# (bench/report/report.sh, bench/report/render.sh), never by hand:
#   1. README.md's summary block, between <!-- bench-report:begin --> and
#      <!-- bench-report:end -->, is exactly what render.sh renders from
#      docs/results.md's data, and docs/results.md starts with the head
#      rendered from that data (so a hand edit of either, or a block the
#      command did not make, fails); it is a full run of every part (the
#      fast path may be left out for want of valgrind), not --quick; the
#      charts it shows exist.
#   2. the whole pipeline in its quickest form (the seed 2 runs, one suite
#      workload, 10,000 fast path pairs, one shape; every allocator found),
#      into a temporary folder, on a copy of a README with markers: exit 0;
#      results.md has the machine lines (CPU, cores, memory, kernel, THP,
#      date, commit), each part's command and full table and the charts;
#      the block has its three tables, each under one line with the date,
#      the machine and the command, one row an allocator, figures that
#      agree with the full tables, and the link to results.md; nothing
#      outside the markers changed; render.sh --check agrees with it.
#   3. controls: a figure edited in the block, or in the data, fails
#      render.sh --check; a README without the markers (or with them
#      reversed) stops report.sh at once (exit 2, the markers named), with
#      the README unchanged and no report written.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
unset LD_PRELOAD
RENDER=bench/report/render.sh
REPORT=bench/report/report.sh
need build/smpbench build/libsmpalloc.so build/seed build/suite/cache-thrash build/fastpath build/shape

BEGIN_MARK='<!-- bench-report:begin -->'
END_MARK='<!-- bench-report:end -->'
# block FILE: the lines between the markers
block() { sed -n "\\|^$BEGIN_MARK\$|,\\|^$END_MARK\$|p" "$1" | sed '1d;$d'; }
# outside FILE: every byte outside the block (the marker lines included)
outside() { sed "\\|^$BEGIN_MARK\$|,\\|^$END_MARK\$|{ \\|^$BEGIN_MARK\$|!{ \\|^$END_MARK\$|!d; }; }" "$1"; }

echo "checks: 1. README.md's block is what docs/results.md renders"
if ! grep -qxF "$BEGIN_MARK" README.md || ! grep -qxF "$END_MARK" README.md; then
  fail "README.md has no '$BEGIN_MARK' / '$END_MARK' lines: the results summary must be made by make bench-report"
elif [ ! -f docs/results.md ]; then
  fail "docs/results.md is missing: run make bench-report (when the machine is quiet)"
elif out=$(bash "$RENDER" --check 2>&1); then
  ok "README.md's block is what bench/report/render.sh renders from docs/results.md"
  head=$(bash "$RENDER" --head)
  if [ "$(head -n "$(wc -l <<<"$head")" docs/results.md)" = "$head" ]; then
    ok "docs/results.md starts with the head rendered from its data"
  else
    fail "docs/results.md's head (the machine, the allocators, the parts) is not what its data renders: edited by hand?"
  fi
  data=$(sed -n '/^<!-- bench-report:data:begin -->$/,$p' docs/results.md)
  grep -q $'^report\tquick\t0$' <<<"$data" \
    || fail "docs/results.md is a quick run (make bench-report REPORT_ARGS=--quick): not for publishing"
  # every part, but the fast path where valgrind was not installed
  for p in seed suite fastpath shapes; do
    st=$(sed -n "s/^$p"$'\tstatus\t'"//p" <<<"$data")
    [ "$st" = ok ] || [ "$p/$st" = "fastpath/skipped: valgrind is not installed" ] \
      || fail "docs/results.md: the $p part was not measured ($st): the published report has every part"
  done
  for svg in $(grep -o '](results-[a-z]*\.svg)' docs/results.md | sed 's/^](//; s/)$//'); do
    [ -s "docs/$svg" ] || fail "docs/results.md shows docs/$svg, which is missing"
  done
else
  printf '%s\n' "$out" | head -n 30
  fail "README.md's block is not what docs/results.md renders (make bench-report makes both; never edit the block)"
fi

echo "checks: 2. the pipeline, quickest, into $tmp"
mkdir -p "$tmp/r"
R=$tmp/r/README.md
printf '# A project\n\nIntro text.\n\n%s\nan old block, by hand\n| a | b |\n%s\n\n## After\n\nlast line, no newline' \
  "$BEGIN_MARK" "$END_MARK" >"$R"
cp "$R" "$tmp/README.orig"
start=$(date +%s)
check_run -t 240 -n 12 "report.sh, quickest" bash "$REPORT" --quick --out "$tmp/out" --work "$tmp/work" --readme "$R" \
  --seed-args '--runs 2' --suite-args '--only cache-thrash' --fastpath-args '--pairs 10000' \
  --shapes-args '--only tiny/T1/W100/first/random'
echo "(took $(( $(date +%s) - start )) s)"
M=$tmp/out/results.md
[ -f "$M" ] || { fail "no $M"; finish; }

# the machine lines
cpu=$(awk -F': *' '/^(model name|Model Name|cpu model|Hardware)[ \t]*:/ { print $2; exit }' /proc/cpuinfo)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
want=(
  "^- CPU: ${cpu:-.+}\$"
  "^- cores: $(nproc) "
  '^- memory: [0-9.]+ GiB$'
  "^- kernel: Linux $(uname -r)\$"
  '^- THP enabled: `.+`$'
  '^- THP defrag: `.+`$'
  '^- date: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC$'
  "^- commit: $commit(-dirty)?\$"
  '^Made by `bench/report/report.sh --quick .*` on .* at commit'
  '^Made by `build/smpbench --runs 3 --warmup 0 --runs 2 .*-- build/seed` \([0-9]+ s\)\.$'
  '^Made by `bash bench/suite/run.sh .*--only cache-thrash .*` \([0-9]+ s\)\.$'
  '^Made by `bash bench/shapes/run.sh --quick --only .*` \([0-9]+ s\)\.$'
  '^smpalloc: wall [0-9.]+x glibc, peak_rss [0-9.]+x glibc \(medians\)$'
  '^geomean +\| '
  '^1 shapes; flagged: [01]$'
  '!\[.*\]\(results-seed\.svg\)'
  '!\[.*\]\(results-suite\.svg\)'
  '^<!-- bench-report:data:begin -->$'
)
command -v valgrind >/dev/null && want+=('^Made by `bash bench/fastpath.sh --pairs 100000 --pairs 10000` \([0-9]+ s\)\.$'
                                         '^smpalloc +[0-9]+ +[0-9.]+$')
n=0
for re in "${want[@]}"; do
  grep -Eq -- "$re" "$M" || { fail "results.md has no line matching /$re/"; n=$((n + 1)); }
done
[ "$n" -eq 0 ] && ok "results.md: the machine, the date, the commit, each part's command and table"
for svg in seed suite; do
  f=$tmp/out/results-$svg.svg
  if command -v python3 >/dev/null; then
    python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"; assert len(d.getElementsByTagName("rect")) > 3' "$f" 2>/dev/null \
      || fail "results-$svg.svg: not a well-formed SVG with bars"
  else
    grep -q '</svg>' "$f" 2>/dev/null || fail "results-$svg.svg: no SVG"
  fi
done

# the block
f0=$fails
B=$(block "$R")
printf '%s\n' "$B" | sed 's/^/  | /'
mapfile -t allocs < <(build/smpbench --list-allocs | cut -f1)
day=$(date -u +%Y-%m-%d)
head_re="^\\*\\*The (seed|workload suite|fast path)\\*\\*: $day, $(sed 's/[][\\.*^$()+?{}|]/\\&/g' <<<"${cpu:-unknown}"), $(nproc) cores, Linux $(uname -r); \`[^\`]+\` \\(a quick run, not for comparison\\)\$"
ntab=3
command -v valgrind >/dev/null || ntab=2
[ "$(grep -Ec "$head_re" <<<"$B")" -eq "$ntab" ] \
  || fail "the block has not $ntab header lines /$head_re/"
[ "$(grep -c '^| :-- |' <<<"$B")" -eq "$ntab" ] || fail "the block has not $ntab tables"
# each table: under its header line, one row an allocator, in smpbench's order
rows() { awk -v t="$1" '/^\*\*/ { on = (index($0, "**" t "**") == 1) } on && /^\| / && !/^\| :--/ { print }' <<<"$B" | sed 1d | cut -d'|' -f2 | tr -d ' '; }
[ "$(rows 'The seed' | tr '\n' ' ')" = "${allocs[*]} " ] \
  || fail "the seed table's rows '$(rows 'The seed' | tr '\n' ' ')', want '${allocs[*]} '"
[ "$(rows 'The workload suite' | tr '\n' ' ')" = "${allocs[*]:1} " ] \
  || fail "the suite table's rows '$(rows 'The workload suite' | tr '\n' ' ')', want '${allocs[*]:1} '"
if command -v valgrind >/dev/null; then
  [ "$(rows 'The fast path' | tr '\n' ' ')" = "${allocs[*]} " ] \
    || fail "the fast path table's rows '$(rows 'The fast path' | tr '\n' ' ')', want '${allocs[*]} '"
else
  grep -q '^\*\*The fast path\*\*: not measured in this report (skipped: valgrind is not installed)\.$' <<<"$B" \
    || fail "no note for the fast path without valgrind"
fi
grep -qF '[../out/results.md](../out/results.md)' <<<"$B" || fail "the block does not link to the report (../out/results.md)"
# the figures agree with the full tables: smpalloc's seed ratios with
# smpbench's ratio line, its suite geomean with run.sh's geomean row, its
# fast path count with fastpath.sh's line
cell() { grep -E "^\\| smpalloc \\|" <<<"$(awk -v t="$1" '/^\*\*/ { on = (index($0, "**" t "**") == 1) } on' <<<"$B")" \
         | cut -d'|' -f"$2" | tr -d ' ×'; }
sr=$(sed -n 's/^smpalloc: wall \([0-9.]*\)x glibc, peak_rss \([0-9.]*\)x glibc (medians)$/\1 \2/p' "$M")
[ "$(cell 'The seed' 3) $(cell 'The seed' 4)" = "$sr" ] \
  || fail "the block's seed ratios '$(cell 'The seed' 3) $(cell 'The seed' 4)' are not smpbench's '$sr'"
gb=$(awk '{ printf "%.2f %.2f", $1, $2 }' <<<"$(cell 'The workload suite' 3) $(cell 'The workload suite' 4)")
[ "$(awk '{ printf "%.2f %.2f", $1, $2 }' <<<"$(grep -E '^geomean +\|' "$M" | cut -d'|' -f2 | tr -d x)")" = "$gb" ] \
  || fail "the block's suite geomean '$gb' is not run.sh's '$(grep -E '^geomean' "$M" | cut -d'|' -f2)'"
if command -v valgrind >/dev/null; then
  fp=$(awk '$1 == "smpalloc" && NF == 3 { print $3 }' "$M")
  [ -n "$fp" ] && [ "$(cell 'The fast path' 3)" = "$fp" ] \
    || fail "the block's fast path '$(cell 'The fast path' 3)' is not fastpath.sh's '$fp'"
fi
[ "$fails" -eq "$f0" ] && ok "the block: its $ntab tables under their header lines, every allocator, the full tables' figures"
if cmp -s <(outside "$tmp/README.orig") <(outside "$R"); then
  ok "nothing outside the markers changed (the last line still has no newline)"
else
  fail "the README changed outside the markers:"; diff <(outside "$tmp/README.orig") <(outside "$R") | head
fi
bash "$RENDER" --results "$M" --readme "$R" --check || fail "render.sh --check disagrees with the block report.sh spliced in"

echo "checks: 3. controls"
cp "$R" "$tmp/hand.md"
sed -i '0,/^| smpalloc | [0-9.]*× /s//| smpalloc | 0.01× /' "$tmp/hand.md"
if cmp -s "$R" "$tmp/hand.md"; then fail "control: could not edit a figure in the block"
elif bash "$RENDER" --results "$M" --readme "$tmp/hand.md" --check >/dev/null 2>&1; then
  fail "control: a figure edited by hand in the block passes render.sh --check"
else ok "control: a figure edited by hand in the block fails render.sh --check"; fi
sed $'s/^\\(seed\trow\tsmpalloc\t\\)[0-9]*/\\11/' "$M" >"$tmp/data.md"
if cmp -s "$M" "$tmp/data.md"; then fail "control: could not edit the data"
elif bash "$RENDER" --results "$tmp/data.md" --readme "$R" --check >/dev/null 2>&1; then
  fail "control: a block that the data no longer renders passes render.sh --check"
else ok "control: data that no longer renders the block fails render.sh --check"; fi
for kind in none reversed; do
  case $kind in
    none) printf '# A README\n\nno markers\n' >"$tmp/bad.md" ;;
    reversed) printf '# A README\n%s\n%s\n' "$END_MARK" "$BEGIN_MARK" >"$tmp/bad.md" ;;
  esac
  cp "$tmp/bad.md" "$tmp/bad.orig"
  t0=$(date +%s)
  out=$(bash "$REPORT" --quick --out "$tmp/out-$kind" --work "$tmp/work-$kind" --readme "$tmp/bad.md" 2>&1)
  rc=$?
  if [ "$rc" -eq 2 ] && grep -qF -- "$BEGIN_MARK" <<<"$out" && cmp -s "$tmp/bad.md" "$tmp/bad.orig" \
     && [ ! -e "$tmp/out-$kind/results.md" ] && [ $(( $(date +%s) - t0 )) -lt 5 ]; then
    ok "control: a README with markers $kind stops report.sh at once: $out"
  else
    fail "control: a README with markers $kind: exit $rc (want 2 at once, markers named, nothing written): $out"
  fi
done

finish
