#!/usr/bin/env bash
# t_smpbench_format: smpbench's table, byte for byte.
#   1. The seed post's table, rebuilt from its summaries by the table
#      printer (tests/tools/smpbench_format.c), equals the post's text.
#   2. `smpbench --from-csv` on fixed recorded samples (two allocators and a
#      failed one, a command with a comma and quotes) prints the expected
#      table and summary lines.
#   3. The JSON and SVG written from the same samples are well-formed and
#      carry the numbers (checked with python3 when it is installed).
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
DATA=tests/tools/data/smpbench
SMPBENCH=build/smpbench
FMT=$BIN
need "$SMPBENCH" "$FMT"

# 1. the seed post's table
if "$FMT" >"$tmp/seed.txt"; then
  cmp -s "$tmp/seed.txt" "$DATA/seed_table.txt" ||
    { fail "seed table differs:"; diff "$DATA/seed_table.txt" "$tmp/seed.txt"; }
else
  fail "smpbench_format's own checks:"; cat "$tmp/seed.txt"
fi

# 2. the table from recorded samples (colour off even on a terminal)
"$SMPBENCH" --from-csv "$DATA/samples.csv" --color never \
  --json "$tmp/s.json" --svg "$tmp/s.svg" --csv "$tmp/s.csv" >"$tmp/table.txt"
rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc with a failed benchmark recorded, want 1"
cmp -s "$tmp/table.txt" "$DATA/samples_table.txt" ||
  { fail "table from samples differs:"; diff "$DATA/samples_table.txt" "$tmp/table.txt"; }

# The CSV written back re-renders to the same table (nothing is lost).
"$SMPBENCH" --from-csv "$tmp/s.csv" --color never >"$tmp/table2.txt"
cmp -s "$tmp/table2.txt" "$DATA/samples_table.txt" ||
  { fail "CSV round trip changes the table:"; diff "$DATA/samples_table.txt" "$tmp/table2.txt"; }

# --color always colours, the plain table is the same text without escapes.
"$SMPBENCH" --from-csv "$DATA/samples.csv" --color always >"$tmp/color.txt"
grep -q $'\033\\[' "$tmp/color.txt" || fail "--color always printed no escapes"
sed 's/\x1b\[[0-9;]*m//g' "$tmp/color.txt" | cmp -s - "$DATA/samples_table.txt" ||
  fail "coloured table differs from the plain one beyond the escapes"

# 3. JSON and SVG
if command -v python3 >/dev/null; then
  python3 - "$tmp/s.json" "$tmp/s.svg" <<'PY' || fail "JSON/SVG checks"
import json, sys, xml.etree.ElementTree as ET
j = json.load(open(sys.argv[1]))
assert j["counters"] == "software", j["counters"]
b = j["benchmarks"]
assert [x["status"] for x in b] == ["ok", "ok", "failed"], b
assert b[2]["failure"] == "exit status 1"
assert b[0]["samples"]["wall_time"] == [4100000, 4200000, 4150000, 4300000, 9000000]
s = b[1]["summary"]["wall_time"]
assert s["median"] == 2050000 and s["verdict"] == "better", s
assert b[1]["summary"]["sys_time"]["verdict"] == "same"
assert b[0]["summary"]["wall_time"]["outliers"] == 1
assert b[1]["summary"]["peak_rss"]["verdict"] == "better"
svg = ET.parse(sys.argv[2]).getroot()
texts = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
for want in ("median wall time", "median peak RSS", "1.00x", "0.49x", "glibc", "smpalloc"):
    assert want in texts, (want, texts)
assert "tcmalloc" not in texts, "failed benchmark charted"
PY
else
  echo "note: python3 not installed, JSON/SVG contents not checked"
fi
finish
