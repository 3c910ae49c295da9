#!/usr/bin/env bash
# t_smpbench_peers: which allocators smpbench compares (tools/smpbench_alloc.c)
#   - a peer folder's libNAME-VERSION.so files are labelled NAME-VERSION,
#     sorted in version order (foo-1.2 before foo-1.10), after glibc and
#     smpalloc; other files are ignored, a lib*.so that is not a library is
#     left out with a note; --peer-dir is repeatable, '' looks in none;
#   - --allocs takes labels, or a family name for every version;
#   - the default folder of a build tree's smpbench is ../shared/peers next
#     to its checkout, and a checkout without it still works;
#   - Debian's peers (found in SMPBENCH_LIB_DIRS here) are labelled with
#     the version of the package owning the file (dpkg-query; libm stands in
#     for a peer, owned by libc6), NAME (Debian) when that is unknown, and
#     NAME-VERSION (Debian) next to a folder build of the same version;
#   - a run preloads each peer's library under its label, and the workload
#     suite (bench/suite/run.sh, what make bench-suite runs) has a column and
#     a -v report line for a folder peer;
#   - the real ../shared/peers, when this checkout has one: every build in
#     it is in the default list.
# Exit 0 pass, 77 when dpkg-query is missing (the rest passed), else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
ROOT=$(pwd -P)
SMPBENCH=build/smpbench
for f in "$SMPBENCH" build/libsmpalloc.so build/suite/mleak; do
  [ -e "$f" ] || { echo "FAIL: $f is missing (make test builds it)"; exit 1; }
done
mkdir "$tmp/empty"
export SMPBENCH_LIB_DIRS=$tmp/empty     # no Debian peers unless said
# labels ARGS...: the labels smpbench --list-allocs prints, space-separated
labels() { "$SMPBENCH" "$@" --list-allocs 2>"$tmp/list.err" | cut -f1 | tr '\n' ' ' | sed 's/ $//'; }
expect() { # WHAT WANT GOT
  if [ "$2" = "$3" ]; then ok "$1: $3"; else fail "$1: '$3', want '$2'"; fi
}

echo "checks: a peer folder"
mkdir "$tmp/peers" "$tmp/more"
for lib in foo-1.2 foo-1.10 bar-0.1; do
  echo "int peer_${lib//[-.]/_};" | gcc -shared -fPIC -x c - -o "$tmp/peers/lib$lib.so" || exit 1
done
cp "$tmp/peers/libbar-0.1.so" "$tmp/more/libbaz-2.0.so"
echo "not a library" >"$tmp/peers/libtext-1.0.so"
cp "$tmp/peers/libbar-0.1.so" "$tmp/peers/libbar.so.1"   # not *.so: ignored
echo readme >"$tmp/peers/README.md"
expect "--peer-dir" "glibc smpalloc bar-0.1 foo-1.2 foo-1.10" "$(labels --peer-dir "$tmp/peers")"
grep -qx "smpbench: note: leaving out text-1.0: $tmp/peers/libtext-1.0.so: not an ELF shared library" "$tmp/list.err" \
  || fail "no note about libtext-1.0.so: $(cat "$tmp/list.err")"
expect "two --peer-dir" "glibc smpalloc bar-0.1 baz-2.0 foo-1.2 foo-1.10" \
  "$(labels --peer-dir "$tmp/peers" --peer-dir "$tmp/more")"
expect "--peer-dir ''" "glibc smpalloc" "$(labels --peer-dir '')"
expect "--allocs foo (a family)" "foo-1.2 foo-1.10" "$(labels --peer-dir "$tmp/peers" --allocs foo)"
expect "--allocs foo-1.10,glibc" "foo-1.10 glibc" "$(labels --peer-dir "$tmp/peers" --allocs foo-1.10,glibc)"
got=$("$SMPBENCH" --peer-dir "$tmp/peers" --allocs foo-1.2 --list-allocs | cut -f2)
expect "foo-1.2's library" "$tmp/peers/libfoo-1.2.so" "$got"

echo "checks: a run under the peers"
"$SMPBENCH" --color never --runs 1 --warmup 0 --show-output --peer-dir "$tmp/peers" \
  --allocs glibc,foo -- sh -c 'echo "preload=[$LD_PRELOAD]"' >"$tmp/run.out" 2>&1 || fail "the run failed"
for want in "preload=[]" "preload=[$tmp/peers/libfoo-1.2.so]" "preload=[$tmp/peers/libfoo-1.10.so]"; do
  grep -qxF "$want" "$tmp/run.out" || fail "the run lacks the line $want"
done
grep -q '^Benchmark 3 (1 runs): \[foo-1.10\] sh -c' "$tmp/run.out" || fail "no benchmark labelled [foo-1.10]"
grep -q '^foo-1.10: wall [0-9.]*x glibc' "$tmp/run.out" || fail "no summary line for foo-1.10"

echo "checks: the default folder, ../shared/peers next to the checkout"
mkdir -p "$tmp/co/build" "$tmp/shared/peers"
cp "$SMPBENCH" build/libsmpalloc.so "$tmp/co/build/"
mkdir "$tmp/co/build/suite" && cp build/suite/mleak "$tmp/co/build/suite/"
cp "$tmp/peers/libfoo-1.2.so" "$tmp/shared/peers/"
expect "a checkout next to shared/peers" "glibc smpalloc foo-1.2" "$("$tmp/co/build/smpbench" --list-allocs | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
out=$(bash bench/suite/run.sh --build "$tmp/co/build" --only mleak --runs 1 --warmup 0 --out "$tmp/so" 2>&1)
if grep -q '^workload .*| smpalloc .*| foo-1.2' <<<"$out" && grep -q '^mleak .*|.*|.*[0-9]x' <<<"$out" \
   && grep -q '^  foo-1.2 .* rounds' <<<"$out"; then
  ok "the workload suite has a foo-1.2 column and report line"
else
  fail "bench/suite/run.sh through the checkout's smpbench:"; sed 's/^/  | /' <<<"$out" | tail -n 15
fi
mv "$tmp/shared" "$tmp/shared.away"
expect "a checkout without ../shared" "glibc smpalloc" "$("$tmp/co/build/smpbench" --list-allocs | cut -f1 | tr '\n' ' ' | sed 's/ $//')"

echo "checks: Debian's peers"
mkdir "$tmp/sys" "$tmp/fakebin"
libm=$(ldd "$SMPBENCH" | awk '/libm\.so/ { print $3 }')
ln -s "$libm" "$tmp/sys/libmimalloc.so.2"
printf '#!/bin/sh\nexit 1\n' >"$tmp/fakebin/dpkg-query"; chmod +x "$tmp/fakebin/dpkg-query"
got=$(PATH="$tmp/fakebin:$PATH" SMPBENCH_LIB_DIRS=$tmp/sys labels --peer-dir '')
expect "version unknown" "glibc smpalloc mimalloc (Debian)" "$got"
if command -v dpkg-query >/dev/null && owner=$(dpkg-query -S "$(realpath "$libm")" 2>/dev/null || dpkg-query -S "$libm" 2>/dev/null); then
  pkg=${owner%%: *}
  v=$(dpkg-query -W -f='${Version}' "$pkg"); v=${v#*:}; v=${v%-*}; v=${v%%[+~]*}
  expect "libm as mimalloc, owned by $pkg $v" "glibc smpalloc mimalloc-$v" \
    "$(SMPBENCH_LIB_DIRS=$tmp/sys labels --peer-dir '')"
  cp "$tmp/peers/libfoo-1.2.so" "$tmp/more/libmimalloc-$v.so"
  expect "a folder build of the same version" "glibc smpalloc baz-2.0 mimalloc-$v mimalloc-$v (Debian)" \
    "$(SMPBENCH_LIB_DIRS=$tmp/sys labels --peer-dir "$tmp/more")"
else
  skipped+=("dpkg-query cannot tell the owner of $libm: Debian versions not checked")
fi

echo "checks: the real ../shared/peers"
if [ -d ../shared/peers ]; then
  list=$(labels)
  for f in ../shared/peers/lib*.so; do
    [ -f "$f" ] || continue
    l=${f##*/lib}; l=${l%.so}
    [[ " $list " == *" $l "* ]] || fail "$f is not in the default list: $list"
  done
  ok "default list: $list"
else
  echo "note: no ../shared/peers next to this checkout"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
if [ ${#skipped[@]} -ne 0 ]; then echo "skipped: ${skipped[*]}"; exit 77; fi
echo "all peer checks passed"
