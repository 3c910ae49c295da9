#!/usr/bin/env bash
# t_suite_python: part of CPython's own regression suite (python3 -m test,
# -j2, PYTHONMALLOC=malloc so every object goes through malloc) under
# LD_PRELOAD=build/libsmpalloc.so; the outcome of every test case
# (passed / failed / error / skipped, from --junit-xml) and of every test
# module must equal the outcome without the preload.  Test cases that
# differ are run again both ways once (a load-sensitive test may flake);
# only a difference that repeats fails.
# make test: a set of about ten modules (test_threading among them);
# TRUST_LONG=1 (make check-long): some forty modules.
# The interpreter: the first of python3 (its real executable: pyenv shims
# are scripts) and /usr/bin/python3 that ships the test package; Debian's
# python3 needs the package libpython3.11-testsuite (else: skip, 77).
. "$(dirname "$0")/../lib.sh" || exit 2
need "$LIB"
SHORT=(test_threading test_json test_re test_collections test_dict test_set test_struct
       test_deque test_functools test_unittest test_list test_bisect test_heapq)
LONG=("${SHORT[@]}" test_pickle test_itertools test_bytes test_unicode test_str test_weakref
      test_gc test_sqlite3 test_decimal test_email test_xml_etree test_zlib test_hashlib
      test_io test_os test_subprocess test_concurrent_futures test_queue test_thread
      test_threadsignals test_array test_sort test_tuple test_long test_float test_format
      test_ordered_dict test_csv test_difflib test_textwrap test_codecs test_fstring
      test_bz2 test_lzma test_tarfile test_zipfile test_pprint test_copy test_enum)
if [ "${TRUST_LONG:-0}" = 1 ]; then want=("${LONG[@]}"); else want=("${SHORT[@]}"); fi

PY=""
for cand in "$(command -v python3 >/dev/null && python3 -c 'import sys; print(sys.executable)' 2>/dev/null)" /usr/bin/python3; do
  [ -n "$cand" ] && [ -x "$cand" ] || continue
  if "$cand" -c 'import test.support, test.libregrtest, test.test_json' >/dev/null 2>&1; then PY=$cand; break; fi
done
[ -n "$PY" ] || skip "no python3 with its regression suite (Debian: apt-get install libpython3.11-testsuite)"
# Only the modules this interpreter ships.
tests=()
for t in "${want[@]}"; do
  "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('test.$t') is None)" 2>/dev/null && tests+=("$t")
done
echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])')), ${#tests[@]} test modules: ${tests[*]}"

# run_suite LABEL PRELOAD MODULES...: writes $tmp/LABEL.cases and .modules
run_suite() {
  local label=$1 pre=$2; shift 2
  local envs=(PYTHONMALLOC=malloc)
  [ -n "$pre" ] && envs+=(LD_PRELOAD="$pre")
  (cd "$tmp" && env "${envs[@]}" timeout 900 "$PY" -m test -j2 --junit-xml "$tmp/$label.xml" "$@" >"$tmp/$label.out" 2>&1)
  local rc=$?
  # Module outcomes from the progress lines ("[3/10] test_x passed ...").
  sed -nE 's/.*\] (test_[A-Za-z0-9_.]+) (passed|failed|skipped|crashed|resource denied|interrupted|timed out|env changed|ran no tests).*/\1 \2/p' \
    "$tmp/$label.out" | sort -u >"$tmp/$label.modules"
  # Test-case outcomes from the JUnit file.
  "$PY" - "$tmp/$label.xml" >"$tmp/$label.cases" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print("no-junit-file", type(e).__name__); sys.exit(0)
out = set()
for tc in root.iter("testcase"):
    st = "passed"
    for ch in tc:
        if ch.tag in ("failure", "error", "skipped"):
            st = ch.tag
    out.add("%s %s" % (tc.get("name"), st))
print("\n".join(sorted(out)))
PYEOF
  echo "$label: exit $rc, $(grep -c '' <"$tmp/$label.cases") test cases, $(grep -c ' passed$' <"$tmp/$label.cases") passed, $(grep -c ' skipped$' <"$tmp/$label.cases") skipped, $(grep -cE ' (failure|error)$' <"$tmp/$label.cases") failed"
  tail -n 12 "$tmp/$label.out" | sed 's/^/    | /'
}

probe=$(env LD_PRELOAD="$LIB" "$PY" -c 'import ctypes; print(ctypes.CDLL(None).smp_usable_size is not None)' 2>&1)
[ "$probe" = True ] || { echo "FAIL: the preload did not take effect: $probe"; exit 1; }

run_suite ref "" "${tests[@]}"
run_suite smp "$LIB" "${tests[@]}"
if [ "$(grep -c ' passed$' <"$tmp/ref.cases")" -lt 100 ]; then
  echo "FAIL: the reference run passed fewer than 100 test cases"; exit 1
fi
if ! cmp -s "$tmp/ref.cases" "$tmp/smp.cases" || ! cmp -s "$tmp/ref.modules" "$tmp/smp.modules"; then
  echo "== outcomes differ:"
  diff "$tmp/ref.modules" "$tmp/smp.modules" | head -n 20
  diff "$tmp/ref.cases" "$tmp/smp.cases" | head -n 40
  # Again, both ways, for the modules that differ.
  again=$( { diff "$tmp/ref.modules" "$tmp/smp.modules"; diff "$tmp/ref.cases" "$tmp/smp.cases"; } |
          sed -nE 's/^[<>] (test\.)?(test_[A-Za-z0-9_]+).*/\2/p' | sort -u)
  echo "== running again: $again"
  # shellcheck disable=SC2086
  run_suite ref2 "" $again
  # shellcheck disable=SC2086
  run_suite smp2 "$LIB" $again
  if ! cmp -s "$tmp/ref2.cases" "$tmp/smp2.cases" || ! cmp -s "$tmp/ref2.modules" "$tmp/smp2.modules"; then
    fail "outcomes differ under the preload, twice:"
    diff "$tmp/ref2.modules" "$tmp/smp2.modules" | head -n 20
    diff "$tmp/ref2.cases" "$tmp/smp2.cases" | head -n 40
  else
    echo "the second run agrees: the first difference was not the allocator's"
  fi
fi
finish
