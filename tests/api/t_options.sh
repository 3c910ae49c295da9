#!/usr/bin/env bash
# t_options: each SMPALLOC_* option does what smpalloc(3) says, seen by its
# effect on tests/api/options.c run under LD_PRELOAD=build/libsmpalloc.so:
#   SMPALLOC_STATS=1           statistics on stderr at exit (none without)
#   SMPALLOC_VERBOSE=1         a start-up line "smpalloc: ..." before main
#   SMPALLOC_CHECKED=1         free(a); free(b); free(a) aborts with one line
#                              "smpalloc: ..."; a correct program runs as usual
#   SMPALLOC_SLOTS=N           smp_stats_get reports N slots (default: CPUs)
#   SMPALLOC_SLOT_SPREAD=1     threads started one after another land on
#                              slots in turn (4 slabs for 4 threads' blocks
#                              of a class), not on the least used (1 slab)
#   SMPALLOC_PURGE_DELAY_MS    0: RSS falls as 64 MiB of small blocks are
#                              freed; an hour: it does not (threshold 1g)
#   SMPALLOC_PURGE_THRESHOLD   1m: RSS falls despite an hour's delay; unset
#                              (64m), 32 MiB freed and at once allocated
#                              again keeps its pages (under a quarter of the
#                              first round's page faults, peak RSS within
#                              8 MiB of the first peak); set to 8m, the pages
#                              went back (over half the faults again); and a
#                              program that frees 160 MiB and goes idle
#                              holds at most 64 MiB + 8 MiB of it; with four
#                              threads on four slots the cap is 128 MiB, and
#                              it holds more than 72 MiB and at most 136
#   unknown names, bad values  one warning line "smpalloc: ..." naming the
#                              variable; the program runs, with the default
# and, linked with build/libsmpalloc.a, VERBOSE and warnings work too.
# Run from the repository root (tests/run.sh does); 0 pass, else fail.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
ulimit -c 0
need "$BIN" "${BIN}_static" "$LIB"

MARKS=$'main-start\nmain-done'
# run [VAR=VALUE...] -- MODE: options MODE under the preload (only the program:
# env itself runs without it); sets RC, OUT, ERR.
# srun: the same with the static build.
run_prog() {
  local prog=$1 preload=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  timeout 120 env ${preload:+LD_PRELOAD=$preload} "${envs[@]}" "$prog" "$@" \
    >"$tmp/out" 2>"$tmp/err"
  RC=$?
  OUT=$(cat "$tmp/out")
  ERR=$(cat "$tmp/err")
}
run() { run_prog "$BIN" "$LIB" "$@"; }
srun() { run_prog "${BIN}_static" "" "$@"; }
show() { echo "  exit $RC, stdout:"; sed 's/^/  | /' <<<"$OUT" | head -n 5
         echo "  stderr:"; sed 's/^/  | /' <<<"$ERR" | head -n 20; }
# The program ran normally and wrote nothing but its own markers.
quiet_ok() { [ "$RC" -eq 0 ] && [ "$OUT" = ok ] && [ "$ERR" = "$MARKS" ]; }

# ---- the baseline: nothing set, nothing said -------------------------------
run -- plain
if quiet_ok; then ok "no options: the program runs, stderr has only its own lines"
else fail "no options:"; show; fi
for v in SMPALLOC_STATS=0 SMPALLOC_VERBOSE=0 SMPALLOC_CHECKED=0; do
  run "$v" -- plain
  quiet_ok || { fail "$v:"; show; }
done

# ---- SMPALLOC_STATS ------------------------------------------------------------
run SMPALLOC_STATS=1 -- plain
if [ "$RC" -eq 0 ] && [ "$OUT" = ok ] && [[ "$ERR" == "$MARKS"$'\n'* ]] \
   && tail -n +3 <<<"$ERR" | grep -q smpalloc; then
  ok "SMPALLOC_STATS=1: statistics on stderr at exit"
else
  fail "SMPALLOC_STATS=1: no statistics (naming smpalloc) on stderr after main returned:"; show
fi

# ---- SMPALLOC_VERBOSE ----------------------------------------------------------
run SMPALLOC_VERBOSE=1 -- plain
if [ "$RC" -eq 0 ] && [ "$OUT" = ok ] && [[ "$(head -n 1 <<<"$ERR")" == smpalloc:* ]] \
   && [[ "$ERR" == *$'\n'"$MARKS" ]]; then
  ok "SMPALLOC_VERBOSE=1: start-up line: $(head -n 1 <<<"$ERR")"
else
  fail "SMPALLOC_VERBOSE=1: no start-up line 'smpalloc: ...' before main:"; show
fi
# The line gives the options in effect: the huge page mode and checked mode.
for v in 0 1 2; do
  run SMPALLOC_VERBOSE=1 SMPALLOC_HUGEPAGES=$v -- plain
  if [ "$RC" -eq 0 ] && [[ "$(head -n 1 <<<"$ERR")" == *", huge pages $v, checked off" ]]; then
    ok "SMPALLOC_HUGEPAGES=$v: the start-up line says huge pages $v"
  else
    fail "SMPALLOC_HUGEPAGES=$v: the start-up line does not end ', huge pages $v, checked off':"; show
  fi
done

# The page map: flat (a 16 GiB read-only reservation) by default, two-level
# when the process has an address-space limit (`ulimit -v`, any size).
run SMPALLOC_VERBOSE=1 -- plain
if [ "$RC" -eq 0 ] && [[ "$(head -n 1 <<<"$ERR")" == *", page map flat, huge pages "* ]]; then
  ok "no address-space limit: the start-up line says page map flat"
else
  fail "no address-space limit: the start-up line does not say ', page map flat,':"; show
fi
RC=0; ERR=$( (ulimit -v 1073741824 && exec env LD_PRELOAD="$LIB" SMPALLOC_VERBOSE=1 "$BIN" plain) 2>&1 >/dev/null) || RC=$?
if [ "$RC" -eq 0 ] && [[ "$(head -n 1 <<<"$ERR")" == *", page map two-level, huge pages "* ]]; then
  ok "ulimit -v 1 TiB: the start-up line says page map two-level"
else
  fail "ulimit -v 1 TiB: the start-up line does not say ', page map two-level,':"; show
fi

# ---- SMPALLOC_CHECKED ----------------------------------------------------------
run -- doublefree
echo "info: without checked mode free(a); free(b); free(a) gives exit $RC, stderr: $(tail -n +2 <<<"$ERR" | head -n 1)"
run SMPALLOC_CHECKED=1 -- doublefree
if [ "$RC" -eq 134 ] && [ "$OUT" != survived ] && [ "$(head -n 1 <<<"$ERR")" = main-start ] \
   && [ "$(wc -l <<<"$ERR")" -eq 2 ] && [[ "$(tail -n 1 <<<"$ERR")" == smpalloc:* ]]; then
  ok "SMPALLOC_CHECKED=1: the double free aborts: $(tail -n 1 <<<"$ERR")"
else
  fail "SMPALLOC_CHECKED=1: free(a); free(b); free(a) did not abort (SIGABRT, exit 134) with one line 'smpalloc: ...':"; show
fi
run SMPALLOC_CHECKED=1 -- plain
quiet_ok || { fail "SMPALLOC_CHECKED=1: a correct program does not run quietly:"; show; }

# ---- SMPALLOC_SLOTS ------------------------------------------------------------
cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)   # the CPUs we may run on
default_slots=$(( cpus < 128 ? cpus : 128 ))
other=$(( default_slots < 128 ? default_slots + 1 : 64 ))
before=$fails
for setting in "" 1 "$other" 128; do
  want=${setting:-$default_slots}
  run ${setting:+SMPALLOC_SLOTS=$setting} -- slots
  if [ "$RC" -ne 0 ] || [ "$OUT" != "$want" ] || [ "$ERR" != "$MARKS" ]; then
    fail "SMPALLOC_SLOTS=${setting:-(unset)}: want $want slots from smp_stats_get:"; show
  fi
done
[ "$fails" -eq "$before" ] && ok "SMPALLOC_SLOTS: unset gives $default_slots, 1, $other and 128 are honoured"

# SMPALLOC_SLOT_SPREAD=1: four threads, one after another, each keep a
# block of one class: on the least used slot they share one slab (the
# first thread's slot is free again when the next starts); spread, each
# is on the next of 4 slots, with a slab of its own.
for v in 0:1 1:4; do
  run SMPALLOC_SLOTS=4 SMPALLOC_SLOT_SPREAD=${v%%:*} -- spread
  if [ "$RC" -eq 0 ] && [ "$OUT" = "${v#*:}" ] && [ "$ERR" = "$MARKS" ]; then
    ok "SMPALLOC_SLOT_SPREAD=${v%%:*}: 4 threads in turn, their blocks on ${v#*:} slab(s)"
  else fail "SMPALLOC_SLOT_SPREAD=${v%%:*}: want ${v#*:} slab(s) for 4 threads' blocks:"; show; fi
done

# Without the option the slot count follows the CPUs the process may use:
# started under taskset with one CPU, one slot.
if command -v taskset >/dev/null && [ "$cpus" -gt 1 ]; then
  LD_PRELOAD=$LIB taskset -c 0 "$BIN" slots >"$tmp/ts.out" 2>/dev/null
  if [ "$(cat "$tmp/ts.out")" = 1 ]; then ok "taskset -c 0: one slot"
  else fail "taskset -c 0: want 1 slot, got '$(cat "$tmp/ts.out")'"; fi
fi
# ... and it is read again when a thread starts (the first re-read comes
# with the second thread: the first thread's start does not read the clock,
# t_mem_startup): narrowed to one CPU, the next thread sees one slot.
if [ "$cpus" -gt 1 ]; then
  LD_PRELOAD=$LIB "$BIN" narrowed >"$tmp/nr.out" 2>/dev/null
  if [ "$(cat "$tmp/nr.out")" = "$default_slots 1" ]; then ok "narrowed to one CPU: the next thread sees one slot"
  else fail "narrowed to one CPU: want '$default_slots 1', got '$(cat "$tmp/nr.out")'"; fi
fi

# ---- SMPALLOC_PURGE_DELAY_MS, SMPALLOC_PURGE_THRESHOLD -------------------------
# options purge prints the RSS before and right after freeing 64 MiB.
MiB=$((1 << 20))
purge() { # EXPECT(falls|stays) VAR=VALUE...
  local expect=$1; shift
  run "$@" -- purge
  local peak after drop
  peak=$(sed -n 's/^peak=\([0-9]*\) after=.*/\1/p' <<<"$OUT")
  after=$(sed -n 's/^peak=[0-9]* after=\([0-9]*\)$/\1/p' <<<"$OUT")
  if [ "$RC" -ne 0 ] || [ -z "$peak" ] || [ -z "$after" ] || [ "$ERR" != "$MARKS" ]; then
    fail "purge with $*:"; show; return
  fi
  drop=$(( (peak - after) / MiB ))
  if [ "$expect" = falls ] && [ $((peak - after)) -lt $((48 * MiB)) ]; then
    fail "$*: RSS fell by only $drop MiB of 64 freed ($((peak / MiB)) -> $((after / MiB)) MiB)"
  elif [ "$expect" = stays ] && [ $((peak - after)) -ge $((16 * MiB)) ]; then
    fail "$*: RSS fell by $drop MiB at once ($((peak / MiB)) -> $((after / MiB)) MiB)"
  else
    ok "$*: RSS $expect ($((peak / MiB)) -> $((after / MiB)) MiB)"
  fi
}
purge falls SMPALLOC_PURGE_DELAY_MS=0 SMPALLOC_PURGE_THRESHOLD=1g
purge stays SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=1g
purge falls SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=1m
purge falls SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=2097152

# options burst: 32 MiB allocated, freed, allocated again at once.  The delay
# is an hour, so only the cap decides what goes back between the rounds.
# Page faults tell kept pages from returned ones, so huge pages are off
# (SMPALLOC_HUGEPAGES=0): with them a round takes a fault per 2 MiB.
burst() { # EXPECT(kept|returned) VAR=VALUE...
  local expect=$1; shift
  run SMPALLOC_HUGEPAGES=0 "$@" -- burst
  local f1 f2 p1 p2
  read -r f1 f2 p1 p2 < <(sed -n 's/^faults1=\([0-9][0-9]*\) faults2=\([0-9][0-9]*\) peak1=\([0-9][0-9]*\) peak2=\([0-9][0-9]*\)$/\1 \2 \3 \4/p' <<<"$OUT")
  if [ "$RC" -ne 0 ] || ! [[ "${f1:-}${f2:-}${p1:-}${p2:-}" =~ ^[0-9]+$ ]] || [ "$ERR" != "$MARKS" ]; then
    fail "burst with $*:"; show; return
  fi
  local what="faults $f1 then $f2, peak RSS $((p1 / MiB)) then $((p2 / MiB)) MiB"
  if [ "$f1" -lt 4096 ]; then
    fail "$*: the first round took only $f1 page faults for 32 MiB ($what)"
  elif [ "$expect" = kept ] && { [ $((f2 * 4)) -ge "$f1" ] || [ "$p2" -gt $((p1 + 8 * MiB)) ]; }; then
    fail "$*: the freed burst did not keep its pages, or peak RSS grew ($what)"
  elif [ "$expect" = returned ] && [ $((f2 * 2)) -le "$f1" ]; then
    fail "$*: the pages stayed although the threshold was set ($what)"
  else
    ok "$*: burst pages $expect ($what)"
  fi
}
burst kept SMPALLOC_PURGE_DELAY_MS=3600000

# options idle: 160 MiB freed, then no allocator call: free memory past the
# default threshold (64 MiB for each two threads that run at once, up to the
# slot count) goes back at once, so at most that (and 8 MiB of slack: thread
# caches, metadata) stays resident.  idle4 frees it while three more threads
# with caches wait: with four slots the cap is 128 MiB, and more than one
# thread's 72 MiB stays; with two slots, as with one thread.
idle() { # MODE MIN-MiB MAX-MiB VAR=VALUE...
  local mode=$1 lo=$2 hi=$3; shift 3
  run SMPALLOC_PURGE_DELAY_MS=3600000 "$@" -- "$mode"
  local s0 pk af
  read -r s0 pk af < <(sed -n 's/^start=\([0-9][0-9]*\) peak=\([0-9][0-9]*\) after=\([0-9][0-9]*\)$/\1 \2 \3/p' <<<"$OUT")
  if [ "$RC" -ne 0 ] || ! [[ "${s0:-}-${pk:-}-${af:-}" =~ ^[0-9]+-[0-9]+-[0-9]+$ ]] || [ "$ERR" != "$MARKS" ]; then
    fail "$mode $*:"; show
  elif [ $((pk - s0)) -lt $((150 * MiB)) ]; then
    fail "$mode $*: RSS rose by only $(( (pk - s0) / MiB )) MiB for 160 MiB"
  elif [ $((af - s0)) -gt $((hi * MiB)) ] || [ $((af - s0)) -lt $((lo * MiB)) ]; then
    fail "$mode $*: $(( (af - s0) / MiB )) MiB of 160 freed stay resident (want $lo to $hi)"
  else
    ok "$mode $*: $(( (af - s0) / MiB )) MiB of 160 freed stay resident while idle ($lo to $hi)"
  fi
}
idle idle 0 72
idle idle4 73 136 SMPALLOC_SLOTS=4
idle idle4 0 72 SMPALLOC_SLOTS=2
burst returned SMPALLOC_PURGE_DELAY_MS=3600000 SMPALLOC_PURGE_THRESHOLD=8m

# ---- unknown names and bad values: one warning, then the default -------------
for bad in SMPALLOC_SLOTS=abc SMPALLOC_SLOTS=100000 SMPALLOC_SLOTS=0 SMPALLOC_FOO=1 \
           SMPALLOC_PURGE_THRESHOLD=12q SMPALLOC_PURGE_DELAY_MS=-5 SMPALLOC_CHECKED=maybe \
           SMPALLOC_HUGEPAGES=3 SMPALLOC_PURGE_DELAY_MS=99999999999 SMPALLOC_FAULT_NS=1; do
  name=${bad%%=*}
  run "$bad" -- plain
  warning=$(grep -v '^main-' <<<"$ERR")
  if [ "$RC" -ne 0 ] || [ "$OUT" != ok ] || [ "$(grep '^main-' <<<"$ERR")" != "$MARKS" ] \
     || [ "$(wc -l <<<"$warning")" -ne 1 ] || [[ "$warning" != smpalloc:*"$name"* ]]; then
    fail "$bad: want the program to run and one line 'smpalloc: ... $name ...' on stderr:"; show
    continue
  fi
  if [ "$name" = SMPALLOC_SLOTS ]; then
    run "$bad" -- slots
    [ "$RC" -eq 0 ] && [ "$OUT" = "$default_slots" ] \
      || { fail "$bad: slots not the default $default_slots:"; show; continue; }
  fi
  ok "$bad: $warning"
done

# ---- linked with the archive ---------------------------------------------------
srun -- plain
quiet_ok || { fail "static, no options:"; show; }
srun SMPALLOC_VERBOSE=1 -- plain
if [ "$RC" -eq 0 ] && [[ "$(head -n 1 <<<"$ERR")" == smpalloc:* ]]; then ok "static: SMPALLOC_VERBOSE=1 start-up line"
else fail "static: SMPALLOC_VERBOSE=1 gives no start-up line:"; show; fi
srun SMPALLOC_FOO=1 -- plain
if [ "$RC" -eq 0 ] && [[ "$(grep -v '^main-' <<<"$ERR")" == smpalloc:*SMPALLOC_FOO* ]]; then ok "static: warning for SMPALLOC_FOO"
else fail "static: SMPALLOC_FOO=1 gives no warning:"; show; fi

finish
