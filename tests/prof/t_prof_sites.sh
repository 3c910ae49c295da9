#!/usr/bin/env bash
# t_prof_sites: the profile's estimates.  prof_sites holds 60/30/10 % of
# its live bytes at site_a, site_b and site_c (about 4.5 GB of address
# space, blocks of 40 to 200 KiB, never written) and leaks planted_leak's
# blocks.  The leak report at exit (SMPALLOC_PROF_LEAKS) must name the
# three sites with their shares within 5 points at a 2 MiB rate, and
# exactly (to 0.1 point) with every byte sampled (SMPALLOC_PROF_SAMPLE=1),
# and name planted_leak; in a -static program too (both rates).  Stacks
# end at the program's outermost frame, not inside it (bottom).  google-pprof --text on
# the written profile lists site_a on top.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
need "$BIN" "${BIN}_fullstatic" "$LIB"

# shares NAME... < leak report: each site's share of the three sites' bytes
shares() {
  awk '/^  about [0-9]+ bytes/ { b = $2 } /^    #0 / { split($2, f, "+"); bytes[f[1]] += b }
       END { t = bytes["site_a"] + bytes["site_b"] + bytes["site_c"]
             printf "%.1f %.1f %.1f %s\n", 100 * bytes["site_a"] / t, 100 * bytes["site_b"] / t,
                    100 * bytes["site_c"] / t, ("planted_leak" in bytes) ? "leak" : "noleak" }'
}
# check LABEL TOLERANCE CMD...: run CMD, compare its shares
check() {
  local label=$1 tol=$2 out got; shift 2
  out=$("$@" 2>&1 >/dev/null) || { fail "$label: exit status $?"; echo "$out" | tail -5; return; }
  got=$(shares <<<"$out")
  echo "$label: shares a b c: $got"
  if awk -v t="$tol" '$1 !~ /^[0-9.]+$/ { exit 1 } { d1 = $1 - 60; d2 = $2 - 30; d3 = $3 - 10
       exit !(d1 * d1 <= t * t && d2 * d2 <= t * t && d3 * d3 <= t * t) }' <<<"$got"; then
    ok "$label: site_a, site_b, site_c at 60/30/10 within $tol points"
  else
    fail "$label: shares $got, want 60 30 10 within $tol points"; echo "$out" | head -20
  fi
}
check "2m rate" 5 env SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=2m LD_PRELOAD="$LIB" "$BIN" sites
check "every byte" 0.1 env SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" sites
check "-static" 5 env SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=2m "${BIN}_fullstatic" sites
# Every allocation fires, libc's own start-up ones too: no stack may be taken
# before the constructor (the -static unwinder aborts while libc initialises).
check "-static, every byte" 0.1 env SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=1 "${BIN}_fullstatic" sites
out=$(SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" sites 2>&1 >/dev/null)
grep -q '^    #0 planted_leak+' <<<"$out" && ok "the planted leak is reported by its function" \
  || fail "planted_leak not in the leak report"
# A freed sampled block's pages may be kept for the next: calloc still zeroes.
out=$(SMPALLOC_PROF_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" calloc 2>&1) && ok "calloc of a reused pool slot reads as zero" \
  || fail "calloc from the profiler's pool: $out"
# Enough records and stacks for both hash tables to double (every block
# sampled): sizes found, every block freed by its record; then none of
# the 1200 blocks left live is dropped (the stacks' arena grows past 64 KiB).
out=$(SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" grow 2>&1) \
  || fail "the profiler's tables growing: $(head -3 <<<"$out")"
live=$(sed -n 's/.*leak report.* in \([0-9]*\) blocks still allocated.*/\1/p' <<<"$out")
[ "${live:-0}" -ge 1200 ] && ok "5000 records and 1200 stacks: the tables grow ($live blocks live reported)" \
  || fail "grow: ${live:-no} blocks live reported, want at least 1200"
# The walk ends at the program's outermost frame (x86-64, glibc 2.35 on:
# src/stack.c): a thread's start routine that allocates is its stack's only
# frame (no start_thread, clone3 below it); a qsort comparator's stack goes
# on through qsort to bottom, the program's frame that called it, and a
# signal handler's through the signal frame to the frame it interrupted.
out=$(SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=1 LD_PRELOAD="$LIB" "$BIN" bottom 2>&1 >/dev/null)
stacks=$(awk '/allocated at:$/ { if (s != "") print s; s = "" } /^    #[0-9]+ / { s = s " " $2 } END { print s }' <<<"$out")
if grep -q ' leak_in_compare+[0-9a-fx]* .*qsort.* bottom+' <<<"$stacks"; then
  ok "a qsort comparator's stack: through qsort to the program's frame below it"
else
  fail "the comparator's stacks lost the program's frame below qsort: $(grep leak_in_compare <<<"$stacks" | head -2)"
fi
if [ "$(uname -m)" != x86_64 ]; then
  echo "not x86-64: the walk's early stop is off, its check skipped"
elif grep -qx ' leak_in_thread+0x[0-9a-f]*' <<<"$stacks"; then
  ok "a thread's start routine ends its stack (libc's frames below it not walked)"
else
  fail "the thread's stack goes on below its start routine: $(grep leak_in_thread <<<"$stacks" | head -1)"
fi
if grep -q '^ leak_in_handler+[0-9a-fx]* .* spin_thread+0x[0-9a-f]*$' <<<"$stacks"; then
  ok "a signal handler's stack: through the signal frame to the interrupted frame, and no further"
else
  fail "the handler's stack: $(grep leak_in_handler <<<"$stacks" | head -1), want it to end at spin_thread"
fi
# Profiling off: no report, nothing sampled.
out=$(SMPALLOC_PROF_LEAKS=1 SMPALLOC_PROF_SAMPLE=0 LD_PRELOAD="$LIB" "$BIN" sites 2>&1 >/dev/null)
grep -q 'about 0 bytes in 0 blocks' <<<"$out" && ok "SMPALLOC_PROF_SAMPLE=0: nothing sampled" \
  || fail "SMPALLOC_PROF_SAMPLE=0 still sampled: $out"

if command -v google-pprof >/dev/null; then
  SMPALLOC_PROF_SAMPLE=2m SMPALLOC_PROF_DUMP="$tmp/p" LD_PRELOAD="$LIB" "$BIN" sites >/dev/null 2>&1
  set -- "$tmp"/p.*.heap
  top=$(google-pprof --text "$BIN" "$1" 2>/dev/null | awk '$1 ~ /^[0-9.]+$/ { print $6; exit }')
  [ "$top" = site_a ] && ok "google-pprof --text: site_a on top" \
    || fail "google-pprof --text: top entry '$top', want site_a"
else
  echo "google-pprof not installed (apt-get install google-perftools): its check skipped"
fi
finish
