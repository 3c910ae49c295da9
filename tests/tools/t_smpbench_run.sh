#!/usr/bin/env bash
# t_smpbench_run: smpbench running small real commands.
#   - a command that succeeds, one exiting 3, one killed by SIGSEGV and a
#     script whose interpreter is missing, in one comparison: each failure is reported in its
#     benchmark's place, the runs after it go on, the exit status is 1
#   - the schedule: runs interleaved and the order rotated each round,
#     warm-up runs not counted, --runs exact, --min-runs with --time 0
#   - allocators: LD_PRELOAD set for each and removed for glibc, a missing
#     smpalloc left out with a note, an unknown allocator name or option is
#     a usage error (exit 2) (the peers found, and inputs refused before
#     the first run: tests/tools/t_smpbench_peers.sh, t_smpbench_inputs.sh)
#   - --help documents every option; --csv and --json carry every run
# No timing: every check is on counts, names and order.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
SMPBENCH=build/smpbench
need "$SMPBENCH"
ulimit -c 0                     # the SIGSEGV case must not write a core
# has FILE LINE: FILE holds exactly this line
has() { grep -Fxq -- "$2" "$1" || { fail "$1 lacks the line: $2"; sed 's/^/    | /' "$1"; }; }
sb() { "$SMPBENCH" --color never "$@"; }

# --- failures are reported in place and the comparison goes on ------------
printf '#!/nonexistent/interpreter\n' >"$tmp/badinterp"; chmod +x "$tmp/badinterp"
sb --runs 3 --warmup 0 --csv "$tmp/f.csv" --json "$tmp/f.json" \
   --cmds true "sh -c 'exit 3'" "sh -c 'kill -SEGV \$\$'" \
   "$tmp/badinterp" true >"$tmp/f.out" 2>"$tmp/f.err"
rc=$?
[ "$rc" -eq 1 ] || fail "exit status $rc with failed benchmarks, want 1"
has "$tmp/f.out" "Benchmark 1 (3 runs): true"
has "$tmp/f.out" "Benchmark 2: sh -c 'exit 3' — failed: exit status 3"
has "$tmp/f.out" "Benchmark 3: sh -c 'kill -SEGV \$\$' — failed: killed by signal 11 (Segmentation fault)"
has "$tmp/f.out" "Benchmark 4: $tmp/badinterp — failed: cannot run '$tmp/badinterp': No such file or directory"
has "$tmp/f.out" "Benchmark 5 (3 runs): true"
grep -Eq '^true: wall [0-9.]+x true, peak_rss [0-9.]+x true \(medians\)$' "$tmp/f.out" ||
  fail "no summary line for benchmark 5"
n1=$(grep -c '^run,1,' "$tmp/f.csv"); n5=$(grep -c '^run,5,' "$tmp/f.csv")
if [ "$n1" != 3 ] || [ "$n5" != 3 ]; then
  fail "CSV has $n1 and $n5 runs of benchmarks 1 and 5, want 3"
fi
grep -q '^failed,3,,.*,killed by signal 11 (Segmentation fault),' "$tmp/f.csv" ||
  fail "CSV lacks benchmark 3's failure"
if command -v python3 >/dev/null; then
  python3 - "$tmp/f.json" <<'PY' || fail "JSON of the real run"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["benchmarks"]
assert [x["status"] for x in b] == ["ok", "failed", "failed", "failed", "ok"]
assert b[0]["runs"] == 3 and len(b[0]["samples"]["wall_time"]) == 3
assert all(v > 0 for v in b[0]["samples"]["wall_time"])
assert b[1]["failure"] == "exit status 3"
PY
fi

# A failure in the warm-up run is reported too (default: 1 warm-up run).
sb --runs 2 --cmds "sh -c 'exit 7'" true >"$tmp/w.out" 2>&1
[ $? -eq 1 ] || fail "warm-up failure: exit status not 1"
has "$tmp/w.out" "Benchmark 1: sh -c 'exit 7' — failed: exit status 7"
has "$tmp/w.out" "Benchmark 2 (2 runs): true"

# --- the schedule ----------------------------------------------------------
# 1 warm-up round then 3 counted, the starting benchmark rotating:
# ABC (warm-up) BCA CAB ABC.
log=$tmp/order
sb --runs 3 --warmup 1 --cmds "sh -c 'printf A >>$log'" \
   "sh -c 'printf B >>$log'" "sh -c 'printf C >>$log'" >"$tmp/o.out" 2>&1 ||
  fail "order run failed"
[ "$(cat "$log")" = ABCBCACABABC ] ||
  fail "run order $(cat "$log"), want ABCBCACABABC (interleaved, rotated)"
has "$tmp/o.out" "Benchmark 3 (3 runs): sh -c 'printf C >>$log'"

# --time 0: stop as soon as every benchmark has --min-runs.
sb --time 0 --min-runs 4 --warmup 2 --cmds true "sh -c true" >"$tmp/m.out" 2>&1
has "$tmp/m.out" "Benchmark 1 (4 runs): true"
has "$tmp/m.out" "Benchmark 2 (4 runs): sh -c true"

# --- allocators --------------------------------------------------------------
# Preload a harmless real library (the libm smpbench itself uses) as an
# allocator, with LD_PRELOAD also set in smpbench's own environment: the
# glibc benchmark must see none, the other exactly its library.
libm=$(ldd "$SMPBENCH" | awk '/libm\.so/ { print $3 }')
if [ -n "$libm" ] && [ -f "$libm" ]; then
  libm=$(realpath "$libm")
  # shellcheck disable=SC2016  # $LD_PRELOAD is for the command's shell
  LD_PRELOAD=$libm sb --show-output --runs 1 --warmup 0 --alloc "m=$libm" \
    --allocs glibc,m -- sh -c 'echo "preload=[$LD_PRELOAD]"' >"$tmp/p.out" 2>&1 ||
    fail "preload run failed"
  has "$tmp/p.out" "preload=[]"
  has "$tmp/p.out" "preload=[$libm]"
  has "$tmp/p.out" "Benchmark 2 (1 runs): [m] sh -c 'echo \"preload=[\$LD_PRELOAD]\"'"
else
  echo "note: no libm found through ldd; preload check skipped"
fi

# smpalloc missing from the default list: a note, the rest goes on.
sb --runs 1 --warmup 0 --lib /nonexistent/libsmpalloc.so -- true >"$tmp/n.out" 2>"$tmp/n.err" ||
  fail "missing smpalloc in the default list made smpbench fail"
grep -q "leaving out smpalloc: /nonexistent/libsmpalloc.so: No such file or directory" "$tmp/n.err" ||
  fail "no note about the missing smpalloc library"

# --- usage errors -------------------------------------------------------------
sb --allocs glibc,nosuch -- true >"$tmp/u1.out" 2>&1
[ $? -eq 2 ] || fail "unknown allocator: exit status not 2"
grep -q "unknown allocator 'nosuch'" "$tmp/u1.out" || fail "unknown allocator not named"
sb --no-such-option -- true >"$tmp/u2.out" 2>&1
[ $? -eq 2 ] || fail "unknown option: exit status not 2"
grep -q "^usage: smpbench" "$tmp/u2.out" || fail "unknown option: no usage message"
sb >"$tmp/u3.out" 2>&1
[ $? -eq 2 ] || fail "no command: exit status not 2"
sb --runs 0 -- true >"$tmp/u4.out" 2>&1
[ $? -eq 2 ] || fail "--runs 0: exit status not 2"

# --help documents every long option smpbench accepts.
"$SMPBENCH" --help >"$tmp/help.out" 2>&1 || fail "--help: exit status not 0"
opts=$(sed -n 's/^ *{ "\([a-z-]*\)", [a-z_]*_argument.*/\1/p' tools/smpbench.c)
[ -n "$opts" ] || fail "no options found in tools/smpbench.c"
for o in $opts; do
  grep -q -- "--$o\b" "$tmp/help.out" || fail "--help does not document --$o"
done
grep -q SMPBENCH_FORCE_NO_HW "$tmp/help.out" || fail "--help does not document SMPBENCH_FORCE_NO_HW"

finish
