#!/bin/bash
# bench/prof-rss.sh - what sampling adds to a process's memory, mapping by
# mapping: each program runs N times (default 15) with SMPALLOC_PROF_SAMPLE
# at 0 and at 2 MiB, interleaved, under LD_PRELOAD of the library and of a
# helper whose destructor copies /proc/self/smaps and VmHWM; prints the
# median resident KB of each kind of mapping (anon, libc's text, libc's
# read-only data, ours, ...) for each setting and the difference.
#   bash bench/prof-rss.sh [-n N] [-l LIB] [PROGRAM ARGS...]   (default: small)
set -euo pipefail
cd "$(dirname "$0")/.."
N=15 LIB=build/libsmpalloc.so SAMPLE=2097152
while [ $# -gt 0 ]; do
  case $1 in
    -n) N=$2; shift 2 ;;
    -l) LIB=$2; shift 2 ;;
    -s) SAMPLE=$2; shift 2 ;;
    *) break ;;
  esac
done
D=build/prof-rss
mkdir -p $D
# The helper: at exit, /proc/self/smaps and status copied with read/write
# (no malloc: the allocator under test stays as it was).
cat > $D/dump.c <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
static void copy(const char *from, const char *to) {
  int i = open(from, O_RDONLY), o = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char buf[65536];
  ssize_t n;
  while (i >= 0 && o >= 0 && (n = read(i, buf, sizeof buf)) > 0) (void)!write(o, buf, (size_t)n);
  close(i), close(o);
}
__attribute__((destructor)) static void dump(void) {
  const char *s = getenv("PROF_RSS_SMAPS"), *t = getenv("PROF_RSS_STATUS");
  if (s) copy("/proc/self/smaps", s);
  if (t) copy("/proc/self/status", t);
}
C
# The small program: 100,000 blocks of 16-256 bytes, every other one freed.
cat > $D/small.c <<'C'
#include <stdlib.h>
int main(void) {
  static void *p[100000];
  for (int i = 0; i < 100000; i++) p[i] = malloc(16 + (i * 7919) % 241);
  for (int i = 0; i < 100000; i += 2) free(p[i]);
  return p[1] == NULL;
}
C
[ $D/dump.so -nt $D/dump.c ] || cc -O2 -shared -fPIC -o $D/dump.so $D/dump.c
[ $D/small -nt $D/small.c ] || cc -O2 -o $D/small $D/small.c
[ $# -gt 0 ] || set -- $D/small
# Resident KB by kind of mapping, one "kind KB" line each, and "hwm KB".
kinds() {
  awk -v lib="$(realpath $LIB)" '/^[0-9a-f]+-[0-9a-f]+ / { p = $6; k = p == "" ? "anon" : p ~ /^\[(heap|anon)/ ? "anon" : p ~ /^\[stack/ ? "stack" : \
         p ~ /libc\.so/ ? "libc." $2 : p ~ /libsmpalloc/ || p == lib ? "ours" : p ~ /ld-linux/ ? "ld.so" : p ~ /^\[/ ? "vdso" : "other" }
       /^Rss:/ { r[k] += $2 } END { for (k in r) print k, r[k] }' "$1"
  awk '/^VmHWM:/ { print "hwm", $2 }' "$2"
}
out=$D/runs
: > $out
for ((i = 0; i < N; i++)); do
  for s in 0 $SAMPLE; do
    PROF_RSS_SMAPS=$D/smaps PROF_RSS_STATUS=$D/status SMPALLOC_PROF_SAMPLE=$s \
      LD_PRELOAD="$(realpath $LIB) $PWD/$D/dump.so" "$@" > /dev/null
    kinds $D/smaps $D/status | sed "s/^/$s /" >> $out
  done
done
# Medians by kind and setting, and on - off.
printf "%-12s %8s %8s %8s   (KB, medians of %d runs)\n" mapping off on on-off $N
sort -k1,1 -k2,2 -k3,3n $out | awk -v on=$SAMPLE '
  { k = $1 " " $2; v[k, ++n[k]] = $3; kind[$2] = 1 }
  function med(k,  c) { c = n[k]; return c == 0 ? 0 : c % 2 ? v[k, (c + 1) / 2] : (v[k, c / 2] + v[k, c / 2 + 1]) / 2 }
  END { for (k in kind) printf "%-12s %8.1f %8.1f %+8.1f\n", k, med("0 " k), med(on " " k), med(on " " k) - med("0 " k) }' | sort
