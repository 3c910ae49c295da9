#!/usr/bin/env bash
# t_option_words: what the library says about its SMPALLOC_* options and
# who it says it about (src/options.c, src/stats.c), under
# LD_PRELOAD=build/libsmpalloc.so:
#   - booleans are exactly 0 or 1: yes, true, on, off, 2 and an empty value
#     each give one warning "want 0 or 1" and leave the option off (no
#     statistics at exit);
#   - an unknown name gets the nearest known one (SMPALLOC_STAT ->
#     SMPALLOC_STATS, SMPALLOC_THRESHOLD -> SMPALLOC_PURGE_THRESHOLD), a far
#     one none;
#   - a number out of range or unreadable names the range (1 to 128,
#     0 to 3600000, 0 to 65536g bytes);
#   - warnings print without SMPALLOC_VERBOSE;
#   - the verbose start-up line and the statistics name the program and
#     its pid (bash -c 'echo $$' prints the pid they must name).
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
for v in $(compgen -v SMPALLOC_); do unset "$v"; done
unset LD_PRELOAD
LIB=$(pwd -P)/build/libsmpalloc.so
[ -f "$LIB" ] || { echo "FAIL: $LIB is missing (make lib)"; exit 1; }

# warns VAR=VALUE PATTERN: `true` under the library prints exactly one
# line on stderr, and it matches the glob PATTERN.
warns() {
  local err
  err=$(env "$1" LD_PRELOAD="$LIB" true 2>&1 >/dev/null)
  if [ "$(wc -l <<<"$err")" -eq 1 ] && [[ "$err" == $2 ]]; then ok "$1: $err"
  else fail "$1: want one line like '$2', got: $err"; fi
}

echo "checks: strict booleans"
for v in yes true on off 2 ''; do
  warns "SMPALLOC_STATS=$v" "smpalloc: warning: SMPALLOC_STATS=$v: not a boolean, want 0 or 1 (default kept)"
  # and the option stayed off: no statistics from a bash that exits normally
  err=$(env "SMPALLOC_STATS=$v" LD_PRELOAD="$LIB" bash -c 'exit 0' 2>&1)
  grep -q 'smpalloc statistics' <<<"$err" && fail "SMPALLOC_STATS=$v turned statistics on"
done
err=$(env SMPALLOC_STATS=1 LD_PRELOAD="$LIB" bash -c 'exit 0' 2>&1)
grep -q '^smpalloc statistics' <<<"$err" || fail "SMPALLOC_STATS=1 gave no statistics"

echo "checks: the nearest known name"
warns SMPALLOC_STAT=1 "smpalloc: warning: unknown option SMPALLOC_STAT=1 (ignored; did you mean SMPALLOC_STATS?)"
warns SMPALLOC_verbose=1 "*did you mean SMPALLOC_VERBOSE?)"
warns SMPALLOC_THRESHOLD=1m "*did you mean SMPALLOC_PURGE_THRESHOLD?)"
warns SMPALLOC_PURGE_DELAY=5 "*did you mean SMPALLOC_PURGE_DELAY_MS?)"
warns SMPALLOC_SLOT=2 "*did you mean SMPALLOC_SLOTS?)"
warns SMPALLOC_FROBNICATE=1 "smpalloc: warning: unknown option SMPALLOC_FROBNICATE=1 (ignored)"

echo "checks: ranges in the warnings"
warns SMPALLOC_SLOTS=500 "smpalloc: warning: SMPALLOC_SLOTS=500: out of range, want 1 to 128 (default kept)"
warns SMPALLOC_SLOTS=x "smpalloc: warning: SMPALLOC_SLOTS=x: not a number, want 1 to 128 (default kept)"
warns SMPALLOC_PURGE_DELAY_MS=3600001 "*: out of range, want 0 to 3600000 (default kept)"
warns SMPALLOC_PURGE_THRESHOLD=12q "*: not a size, want 0 to 65536g bytes, suffix k, m or g allowed (default kept)"
warns SMPALLOC_PURGE_THRESHOLD=65537g "*: out of range, want 0 to 65536g bytes*"

echo "checks: warnings with SMPALLOC_VERBOSE=0 (the ones above ran without it)"
err=$(env SMPALLOC_VERBOSE=0 SMPALLOC_SLOTS=0 LD_PRELOAD="$LIB" true 2>&1)
[[ "$err" == "smpalloc: warning: SMPALLOC_SLOTS=0: out of range"* ]] \
  || fail "SMPALLOC_VERBOSE=0: the warning did not print: '$err'"

echo "checks: the program and its pid in the verbose line and the statistics"
out=$(env SMPALLOC_VERBOSE=1 SMPALLOC_STATS=1 LD_PRELOAD="$LIB" bash -c 'echo $$' 2>"${TMPDIR:-/tmp}/t_ow.$$")
err=$(cat "${TMPDIR:-/tmp}/t_ow.$$"); rm -f "${TMPDIR:-/tmp}/t_ow.$$"
if [[ "$out" =~ ^[0-9]+$ ]] && [[ "$(head -n 1 <<<"$err")" == "smpalloc: bash (pid $out): "[0-9]*.[0-9]*", "*" slots, "* ]]; then
  ok "verbose: $(head -n 1 <<<"$err")"
else
  fail "the verbose line does not name bash (pid $out): $(head -n 1 <<<"$err")"
fi
if grep -qx "smpalloc statistics: bash (pid $out)" <<<"$err"; then ok "statistics headed 'smpalloc statistics: bash (pid $out)'"
else fail "no statistics headed 'smpalloc statistics: bash (pid $out)':"; sed 's/^/  | /' <<<"$err" | head -5; fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all option word checks passed"
