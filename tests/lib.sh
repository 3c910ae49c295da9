# shellcheck shell=bash
# tests/lib.sh: what the tests/KIND/t_*.sh scripts share (not a test:
# tests/run.sh runs only t_*.sh).  Each script starts with
#
#   . "$(dirname "$0")/../lib.sh" || exit 2
#
# which turns on `set -u`, goes to the repository root ($SMP_ROOT, which
# tests/run.sh exports, else the folder above tests/) and sets
#
#   ROOT        the repository root (its physical path)
#   TEST_NAME   the script's name, t_NAME
#   BIN         build/tests/NAME: the test's own program, built by the .mk
#               next to the script (for the tests that have one)
#   LIB         the library under test: $SMP_LIB, else build/libsmpalloc.so
#   tmp         a fresh temporary directory, removed at exit
#   fails       the failures counted so far (0)
#   skipped     the parts skipped so far (none)
#
# A script passes (exit 0), fails (exit 1) or is skipped (exit 77); `finish`
# ends it with its last line.  The helpers:
#
#   fail MESSAGE         print "FAIL: MESSAGE", count a failure
#   ok MESSAGE           print "ok: MESSAGE"
#   need FILE...         fail at once (exit 1) if a program or library is
#                        missing
#   skip REASON          print REASON, skip the test (exit 77)
#   need_cmd CMD [HINT]  skip the test if CMD is not installed
#   own_env              for the tests of smpalloc's own behaviour: unset
#                        every SMPALLOC_* and LD_PRELOAD, LIB is this tree's
#                        build/libsmpalloc.so ($SMP_LIB does not apply)
#   check_run [-t SECS] [-v KB] [-n LINES] [-o RE]... [-x RE] LABEL CMD...
#                        run CMD and count a failure when it fails
#   control LABEL WHY CMD...
#                        a negative control, run with MEM_CONTROLS=1: CMD
#                        must fail
#   expect_abort CALL_RE PROBLEM_RE ADDR_RE CMD...
#                        CMD must abort with one "smpalloc:" line
#   finish               the last line; exit 1 with failures, 77 with skipped
#                        parts, else 0
set -u
cd "${SMP_ROOT:-$(dirname "${BASH_SOURCE[0]}")/..}" || exit 2
ROOT=$(pwd -P)
TEST_NAME=$(basename "$0" .sh)
BIN=build/tests/${TEST_NAME#t_}
LIB=${SMP_LIB:-$ROOT/build/libsmpalloc.so}
fails=0
skipped=()
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P) || exit 2

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

need() {
  local f
  for f in "$@"; do
    # A library need not be executable (SMP_LIB may name an installed one).
    if [[ $f == *.so || $f == *.so.* ]] && [ -f "$f" ]; then continue; fi
    [ -x "$f" ] || { echo "FAIL: $f is missing (make all test-bins)"; exit 1; }
  done
}

skip() { echo "$*"; exit 77; }
need_cmd() { command -v "$1" >/dev/null || skip "$1 is not installed${2:+ ($2)}"; }

own_env() {
  local v
  for v in $(compgen -v SMPALLOC_); do unset "$v"; done
  unset LD_PRELOAD
  LIB=$ROOT/build/libsmpalloc.so
}

# check_run [-t SECS] [-v KB] [-n LINES] [-o RE]... [-x RE] LABEL CMD...
#   Runs CMD (under `timeout -k 5 SECS` with -t, after `ulimit -v KB` with
#   -v), prints "== LABEL: CMD" and its output (the last LINES lines with -n)
#   and counts one failure when CMD exits non-zero (exit 124/137 with -t: it
#   hung), when an -o pattern matches no line of the output, or when the -x
#   pattern matches one (patterns are EREs).  Returns 1 on a failure; OUT
#   and RC hold the output and the exit status.
check_run() {
  local secs="" vm="" lines="" bad="" oks=() opt OPTIND=1
  while getopts t:v:n:o:x: opt; do
    case $opt in
      t) secs=$OPTARG ;; v) vm=$OPTARG ;; n) lines=$OPTARG ;;
      o) oks+=("$OPTARG") ;; x) bad=$OPTARG ;; *) return 2 ;;
    esac
  done
  shift $((OPTIND - 1))
  local label=$1 re; shift
  echo "== $label: $*"
  OUT=$( { [ -z "$vm" ] || ulimit -v "$vm"; } && ${secs:+timeout -k 5 "$secs"} "$@" 2>&1 )
  RC=$?
  if [ -z "$OUT" ]; then :
  elif [ -n "$lines" ]; then printf '%s\n' "$OUT" | tail -n "$lines"
  else printf '%s\n' "$OUT"; fi
  if [ -n "$secs" ] && { [ $RC -eq 124 ] || [ $RC -eq 137 ]; }; then
    fail "$label: still running after $secs s (a deadlock, a lock left held?)"; return 1
  fi
  [ $RC -eq 0 ] || { fail "$label (exit $RC)"; return 1; }
  for re in "${oks[@]}"; do
    grep -Eq -- "$re" <<<"$OUT" || { fail "$label: no line matches /$re/"; return 1; }
  done
  if [ -n "$bad" ] && grep -Eq -- "$bad" <<<"$OUT"; then
    fail "$label: the output matches /$bad/"; return 1
  fi
  return 0
}

# control LABEL WHY CMD...: with MEM_CONTROLS=1, a negative control of the
# test itself (a deliberate leak, corruption, hang...): CMD must fail (the
# end of its output is shown); if it passes, the test cannot see what it is
# meant to (WHY) and fails.
control() {
  [ "${MEM_CONTROLS:-0}" = 1 ] || return 0
  local label=$1 why=$2 out rc; shift 2
  echo "== control: $label: must fail"
  out=$("$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | tail -n 20
  if [ $rc -eq 0 ]; then fail "control passed: $why"; else echo "ok: control fails as it must (exit $rc)"; fi
}

# glibc_run SECS ARGS...
#   Runs $BIN --expect glibc ARGS under glibc (no preload), for comparison:
#   it must run, and its figures are printed, not asserted.
glibc_run() {
  local secs=$1; shift
  check_run -t "$secs" "glibc (no preload), for comparison: must run, its figures are not asserted" \
    "$BIN" --expect glibc "$@"
}

# expect_abort CALL_RE PROBLEM_RE ADDR_RE CMD...
#   CMD runs a program that prints "addr 0x..." on stdout and then misuses
#   that address.  It must die of SIGABRT (exit status 134) with exactly one
#   line on stderr, which starts with "smpalloc:", names the call (CALL_RE,
#   an ERE, right after the start or a non-word character: "free([^a-z]|$)",
#   "free\("), matches PROBLEM_RE (an ERE, "" for any) and holds the address
#   as a token matching ADDR_RE (hex, 0x optional).  Returns 0 if so, else 1
#   with the reason in WHY; OUT, ERR and LINE hold stdout, stderr and its
#   first line.
expect_abort() {
  local call_re=$1 problem_re=$2 addr_re=$3; shift 3
  local rc addr tok
  OUT=$("$@" 2>"$tmp/abort.err")
  rc=$?
  ERR=$(cat "$tmp/abort.err")
  LINE=$(head -n 1 "$tmp/abort.err")
  addr=$(sed -n 's/^addr \(0x[0-9a-fA-F]*\)$/\1/p' <<<"$OUT" | head -n 1)
  WHY=""
  if [ "$rc" -ne 134 ]; then WHY="exit status $rc, not 134 (SIGABRT)"
  elif [ -z "$addr" ]; then WHY="no address announced"
  elif [ "$(grep -c '' "$tmp/abort.err")" -ne 1 ]; then WHY="$(grep -c '' "$tmp/abort.err") lines on stderr, want 1"
  elif [[ $LINE != smpalloc:* ]]; then WHY="the stderr line does not start with smpalloc:"
  elif ! grep -Eq "(^|[^A-Za-z0-9_])$call_re" <<<"$LINE"; then WHY="does not name the call /$call_re/"
  elif [ -n "$problem_re" ] && ! grep -Eq "$problem_re" <<<"$LINE"; then WHY="does not name the problem /$problem_re/"
  else
    for tok in $(grep -oE "$addr_re" <<<"$LINE"); do
      [ $((16#${tok#0[xX]})) -eq $((addr)) ] && return 0
    done
    WHY="address $addr not in the message"
  fi
  return 1
}

finish() {
  if [ "$fails" -ne 0 ]; then echo "$TEST_NAME: $fails failed"; exit 1; fi
  if [ ${#skipped[@]} -ne 0 ]; then
    local msg
    msg=$(printf '%s; ' "${skipped[@]}")
    echo "skipped: ${msg%; }"
    exit 77
  fi
  echo "$TEST_NAME: passed"
  exit 0
}
