#!/usr/bin/env bash
# t_prof_threads: profiling across fork, 64 threads that exit, a dump asked
# for by signal (SMPALLOC_PROF_SIGNAL) while the threads allocate, and
# smp_prof_dump; in the preloaded library, a program linked with the
# archive and a -static one.  Every profile written must be whole: its
# header's totals equal the sums of its lines, and MAPPED_LIBRARIES follows.
. "$(dirname "$0")/../lib.sh" || exit 2
own_env
BIN=build/tests/prof_sites
need "$BIN" "${BIN}_static" "${BIN}_fullstatic" "$LIB"
whole() { # FILE: the header's totals are the lines' sums, the maps follow
  awk '/^heap profile:/ { split($0, h, /[^0-9]+/); next } /^MAPPED_LIBRARIES:/ { m = 1; exit }
       / @ 0x/ { split($0, c, /[^0-9]+/); n += c[1]; b += c[2]; an += c[3]; ab += c[4]; lines++ }
       END { exit !(m && lines > 0 && n == h[2] && b == h[3] && an == h[4] && ab == h[5]) }' "$1"
}
run() { # LABEL PRELOAD PROGRAM
  local label=$1 pre=$2 prog=$3 d="$tmp/$1"
  mkdir -p "$d"
  if ! env ${pre:+LD_PRELOAD=$pre} SMPALLOC_PROF_SAMPLE=4096 SMPALLOC_PROF_DUMP="$d/p" SMPALLOC_PROF_SIGNAL=12 \
         "$prog" threads "$d/own.heap" "$d/p" 12; then
    fail "$label: the program failed"; return
  fi
  local n=0 f
  for f in "$d"/p.*.heap "$d/own.heap"; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    whole "$f" || fail "$label: $(basename "$f") is not a whole profile"
  done
  # the parent's exit profile and its signal dump, the child's exit profile, own.heap
  [ "$(ls "$d"/p.*.1.heap 2>/dev/null | wc -l)" = 1 ] || fail "$label: no dump by signal"
  [ "$(ls "$d"/p.*.heap | grep -vc '\.1\.heap$')" = 2 ] || fail "$label: want the exit profiles of parent and child"
  ok "$label: $n profiles, each whole"
}
run preload "$LIB" "$BIN"
run archive "" "${BIN}_static"
run -static "" "${BIN}_fullstatic"
finish
