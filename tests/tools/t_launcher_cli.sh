#!/usr/bin/env bash
# t_launcher_cli: the launcher tools/smpalloc as a newcomer meets it
# (tests/tools/t_launcher.sh has the preloading itself):
#   - -h is --help; an unknown option names the nearest known one;
#   - a command that cannot run is one line in the launcher's words, not
#     the shell's: not found 127, a directory or a file without execute
#     permission 126;
#   - --stats: one summary for all the processes of the command, the sum
#     of the reports each process wrote into SMPALLOC_STATS_DIR (kept when
#     given; the temporary one removed otherwise), a single report printed
#     as it is, a note when none was written, a non-empty directory refused;
#     the command's exit status passed on (128 + N for a signal); a Ctrl-C
#     to the process group held until the command ends;
#   - --stats=each: each process's report as it exits, named by program and
#     pid.
# Exit 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
for v in $(compgen -v SMPALLOC_); do unset "$v"; done
unset LD_PRELOAD
S=$(pwd -P)/tools/smpalloc
[ -f build/libsmpalloc.so ] || { echo "FAIL: build/libsmpalloc.so is missing (make lib)"; exit 1; }
# run ARGS...: the launcher; sets RC, OUT, ERR
run() { "$S" "$@" >"$tmp/out" 2>"$tmp/err"; RC=$?; OUT=$(cat "$tmp/out"); ERR=$(cat "$tmp/err"); }
one_line() { [ -n "$ERR" ] && [ "$(wc -l <<<"$ERR")" -eq 1 ]; }

echo "checks: -h, unknown options"
run -h
[ "$RC" -eq 0 ] && [[ "$OUT" == "usage: smpalloc "* ]] || fail "-h: exit $RC, '$OUT'"
for pair in --stat:--stats -stats:--stats --verbos:--verbose --checkd:--checked --hlep:--help --versoin:--version; do
  run "${pair%%:*}" true
  if [ "$RC" -eq 2 ] && one_line && [[ "$ERR" == *"(did you mean ${pair#*:}?)"* ]]; then ok "${pair%%:*}: $ERR"
  else fail "${pair%%:*}: exit $RC, '$ERR' (want 2 and 'did you mean ${pair#*:}?')"; fi
done
run --frobnicate true
[ "$RC" -eq 2 ] && one_line && [[ "$ERR" != *"did you mean"* ]] || fail "--frobnicate: exit $RC, '$ERR'"
run --stats=all true
[ "$RC" -eq 2 ] && one_line || fail "--stats=all: exit $RC, '$ERR'"

echo "checks: a command that cannot run"
mkdir "$tmp/bin" "$tmp/dir"
printf '#!/bin/sh\necho ran\n' >"$tmp/bin/noexec"
chmod 644 "$tmp/bin/noexec"
expect_refusal() { # RC WORDS ARGS...
  local want=$1 words=$2; shift 2
  run "$@"
  if [ "$RC" -eq "$want" ] && one_line && [[ "$ERR" == "smpalloc: "*"$words"* ]] && [ -z "$OUT" ]; then
    ok "$*: exit $RC, $ERR"
  else
    fail "$*: exit $RC (want $want), stderr '$ERR' (want one line 'smpalloc: ...$words...'), stdout '$OUT'"
  fi
}
expect_refusal 127 "no-such-program-t: command not found" no-such-program-t arg
expect_refusal 127 "$tmp/nope: no such file" "$tmp/nope"
expect_refusal 126 "is a directory" "$tmp/dir"
expect_refusal 126 "not executable" "$tmp/bin/noexec"
PATH="$tmp/bin:$PATH" expect_refusal 126 "noexec: not executable" noexec
expect_refusal 127 "empty string" ""

echo "checks: --stats, one summary"
# three bash processes exit normally (the outer one runs a builtin last, so
# it does not exec its last command)
CMD=(bash -c 'bash -c true; bash -c true; true')
mkdir "$tmp/d"
SMPALLOC_STATS_DIR=$tmp/d run --stats "${CMD[@]}"
files=("$tmp"/d/stats.*)
if [ "$RC" -ne 0 ] || [ "${#files[@]}" -ne 3 ] || [ ! -f "${files[0]}" ]; then
  fail "--stats with SMPALLOC_STATS_DIR: exit $RC, ${#files[@]} reports kept (want 3)"
else
  # the sums, computed here from the kept reports
  want=$(awk '/^  in use /{u+=$3} /^  mapped /{m+=$2} /^  slabs /{s+=$2}
              /^ +0 +8 +[0-9]+ +[0-9]+$/{c+=$3} END{printf "%d %d %d %d", u, m, s, c}' "${files[@]}")
  got=$(awk '/^  in use /{u=$3} /^  mapped /{m=$2} /^  slabs /{s=$2}
             /^ +0 +8 +[0-9]+ +[0-9]+$/{c=$3} END{printf "%d %d %d %d", u, m, s, c}' <<<"$ERR")
  head1=$(head -n 1 <<<"$ERR")
  if [ "$head1" = "smpalloc statistics: 3 processes, each at its exit, summed" ] \
     && grep -qx '  programs     bash 3' <<<"$ERR" && [ "$want" = "$got" ]; then
    ok "--stats: '$head1', in use/mapped/slabs/class-0 blocks $got = the sum of the 3 reports"
  else
    fail "--stats: summary '$head1', sums '$got', want '$want' from the reports:"; sed 's/^/  | /' <<<"$ERR" | head -12
  fi
fi
SMPALLOC_STATS_DIR=$tmp/d run --stats touch "$tmp/ran"
[ "$RC" -eq 2 ] && one_line && [ ! -e "$tmp/ran" ] || fail "--stats with a non-empty SMPALLOC_STATS_DIR: exit $RC, '$ERR'"

mkdir "$tmp/t"
TMPDIR=$tmp/t run --stats bash -c 'echo program-out; exit 3'
if [ "$RC" -eq 3 ] && [ "$OUT" = program-out ] && [[ "$(head -n 1 <<<"$ERR")" == "smpalloc statistics: bash (pid "*")" ]] \
   && [ -z "$(ls -A "$tmp/t")" ]; then
  ok "--stats, one process: its report as it is, exit 3 passed on, the temporary directory removed"
else
  fail "--stats, one process: exit $RC, stdout '$OUT', stderr '$(head -n 1 <<<"$ERR")', left in TMPDIR: $(ls -A "$tmp/t")"
fi
TMPDIR=$tmp/t run --stats bash -c 'sleep 0; exit 0'
grep -q '^  programs     \(bash 1, sleep 1\|sleep 1, bash 1\)$' <<<"$ERR" \
  || { fail "--stats of bash and sleep: no 'programs' line naming both:"; head -n 3 <<<"$ERR"; }
run --stats sh -c 'kill -TERM $$'
[ "$RC" -eq 143 ] && [[ "$ERR" == *"smpalloc: no statistics: "* ]] \
  || fail "--stats of a command killed by SIGTERM: exit $RC (want 143), '$ERR'"

# Ctrl-C: SIGINT to the whole process group (as a terminal sends it): the
# command's trap exits 5, the launcher holds the signal, waits, and prints
# the summary.  python3 starts it in a new session with SIGINT at its
# default (a background job of this script would have it ignored) and
# sends the signal once the command has said it is ready (a FIFO: no sleep).
if command -v python3 >/dev/null; then
  mkfifo "$tmp/ready"
  out=$(python3 - "$S" "$tmp/ready" <<'PY'
import os, signal, subprocess, sys
launcher, fifo = sys.argv[1], sys.argv[2]
script = 'trap \'kill $! 2>/dev/null; exit 5\' INT; bash -c true; sleep 1000 & echo ready >' + fifo + '; wait'
p = subprocess.Popen([launcher, '--stats', 'bash', '-c', script], start_new_session=True,
                     stderr=subprocess.PIPE,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
with open(fifo) as f:
    f.read()
os.killpg(p.pid, signal.SIGINT)
err = p.stderr.read().decode()
print(p.wait())
print(err.splitlines()[0] if err else "")
PY
)
  if [ "$out" = $'5\nsmpalloc statistics: 2 processes, each at its exit, summed' ]; then
    ok "Ctrl-C: the command exits 5, the launcher passes it on after the summary of 2 processes"
  else
    fail "Ctrl-C to the process group under --stats: '$out'"
  fi
else
  echo "note: python3 is not installed: the Ctrl-C check did not run"
fi

echo "checks: --stats=each"
run --stats=each "${CMD[@]}"
n=$(grep -c '^smpalloc statistics: bash (pid [0-9]*)$' <<<"$ERR")
[ "$RC" -eq 0 ] && [ "$n" -eq 3 ] && ok "--stats=each: 3 reports, each named 'bash (pid N)'" \
  || fail "--stats=each: exit $RC, $n reports named 'smpalloc statistics: bash (pid N)' (want 3)"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all launcher command-line checks passed"
