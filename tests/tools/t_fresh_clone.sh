#!/usr/bin/env bash
# t_fresh_clone: `make bench`, the first command the README gives, works in
# a fresh clone (it once ran smpbench before build/seed existed):
#   1. clone this repository (with the uncommitted changes to tracked files,
#      so the tree as it is now is what is checked) into an empty folder,
#      with no ../shared next to it, and run `make bench` there with a short
#      run (BENCH_ARGS='--runs 2 --warmup 0'): exit 0, a table with glibc
#      and smpalloc (2 runs each), smpalloc's ratio line, no failed row, and
#      no peer but Debian's (the clone has no peer folder);
#   2. with a ../shared/peers folder next to the clone holding one build
#      (libfake-1.0.so), `make bench` again has a [fake-1.0] row;
#   3. `make test` can follow: make -n test resolves and ends in tests/run.sh.
# Exit 0 pass, 77 skip (not a git checkout), else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
ROOT=$(pwd -P)
unset MAKEFLAGS MFLAGS MAKELEVEL     # not the parent make's jobserver
if ! command -v git >/dev/null || ! git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout (or no git): nothing to clone"; exit 77
fi

C=$tmp/w/clone
echo "checks: make bench in a fresh clone of $ROOT (in $C)"
git clone -q "$ROOT" "$C" || { echo "FAIL: git clone failed"; exit 1; }
if ! git -C "$ROOT" diff --quiet HEAD; then
  git -C "$ROOT" diff --binary HEAD | git -C "$C" apply || { echo "FAIL: cannot apply the uncommitted changes"; exit 1; }
  echo "(with the uncommitted changes of $(git -C "$ROOT" diff --name-only HEAD | wc -l) tracked files)"
fi
[ ! -e "$C/build" ] || fail "the clone has a build folder before make"

(cd "$C" && make bench BENCH_ARGS='--runs 2 --warmup 0 --color never') >"$tmp/bench1.out" 2>&1
rc=$?
table=$(grep -v '^\(cc\|gcc\|ar\|ln\|build/smpbench\) ' "$tmp/bench1.out")
if [ "$rc" -ne 0 ]; then
  fail "make bench in the fresh clone: exit $rc"; tail -n 20 "$tmp/bench1.out"
else
  for want in "Benchmark 1 (2 runs): [glibc] build/seed" "Benchmark 2 (2 runs): [smpalloc] build/seed"; do
    grep -qxF "$want" <<<"$table" || fail "make bench: no line '$want'"
  done
  grep -Eq '^smpalloc: wall [0-9.]+x glibc, peak_rss [0-9.]+x glibc \(medians\)$' <<<"$table" \
    || fail "make bench: no ratio line for smpalloc"
  grep -n 'failed\|cannot' <<<"$table" && fail "make bench: a failed benchmark"
  # the labels: glibc, smpalloc and Debian's peers, nothing from a folder
  want=$("$C/build/smpbench" --peer-dir '' --list-allocs | cut -f1 | tr '\n' ' ')
  got=$(sed -n 's/^Benchmark [0-9]* ([0-9]* runs): \[\(.*\)\] build\/seed$/\1/p' <<<"$table" | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "make bench compared '$got', want '$want'"
  [ "$fails" -eq 0 ] && ok "make bench in a fresh clone: $(grep -c '^Benchmark' <<<"$table") benchmarks ($got)"
fi

echo "checks: make bench with ../shared/peers next to the clone"
mkdir -p "$tmp/w/shared/peers"
echo 'int fake_peer;' | gcc -shared -fPIC -x c - -o "$tmp/w/shared/peers/libfake-1.0.so" || exit 1
(cd "$C" && make bench BENCH_ARGS='--runs 2 --warmup 0 --color never') >"$tmp/bench2.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -qxF "Benchmark 3 (2 runs): [fake-1.0] build/seed" "$tmp/bench2.out"; then
  ok "make bench with ../shared/peers: a [fake-1.0] row"
else
  fail "make bench with ../shared/peers/libfake-1.0.so: exit $rc, no 'Benchmark 3 (2 runs): [fake-1.0] build/seed'"
  tail -n 20 "$tmp/bench2.out"
fi

echo "checks: make test can follow make bench"
out=$(cd "$C" && make -n test 2>&1); rc=$?
[ "$rc" -eq 0 ] && grep -q 'tests/run\.sh' <<<"$out" || { fail "make -n test after make bench: exit $rc"; tail -n 5 <<<"$out"; }

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all fresh-clone checks passed"
