# san_lib.sh - sourced by the sanitizer tests (t_sanitize_tsan.sh,
# t_sanitize_ubsan.sh, t_asan.sh): the shared checks.
#
#   san_need BIN...          fail at once if a program is missing
#   san_run PATTERN LABEL COMMAND...
#                            run COMMAND, show the end of its output, count a
#                            failure in $fails if it exits non-zero or its
#                            output matches PATTERN (the sanitizer's report)
fails=0
san_need() {
  local f
  for f in "$@"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make test-bins)"; exit 1; }
  done
}
san_run() {
  local pattern=$1 label=$2; shift 2
  echo "== $label: $*"
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | tail -n 60
  if [ $rc -ne 0 ]; then echo "FAIL: $label (exit $rc)"; fails=$((fails + 1)); return; fi
  if grep -q "$pattern" <<<"$out"; then
    echo "FAIL: $label: sanitizer report"; fails=$((fails + 1))
  fi
}
