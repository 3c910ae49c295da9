/*
 * mem_large_reuse: a freed big block mapped alone serves the next big
 * request without page faults for the pages it already has (smpalloc's
 * large-block cache).  `mem_large_reuse cache`, run under
 * LD_PRELOAD=libsmpalloc.so with an address-space limit (no arenas: every
 * block over 1 MiB is mapped alone; with arenas, mem_extent) and with
 * SMPALLOC_PURGE_DELAY_MS large enough that nothing expires between the
 * steps.  Page faults are the
 * process's minor faults (getrusage) around each malloc + memset:
 *
 *   1. 24 MiB allocated, written, freed (its pages resident, cached);
 *   2. 8 MiB: served from the cached 24 MiB, split (the 16 MiB tail stays
 *      cached): fewer than 10 % of its pages fault;
 *   3. 12 MiB: from that tail: fewer than 10 % fault;
 *   4. both freed, then 20 MiB: no cached block is long enough, the
 *      longest (12 MiB) grows into it by moving its pages: at most the
 *      new 8 MiB and 10 % more fault (a fresh block would fault all 20).
 * `mem_large_reuse alone`: eight live blocks of 32 MiB + 64 KiB to 39 MiB
 * (past the arenas' SMP_EXTENT_MAX) each start a 1 GiB region of their own
 * (config.h, SMP_LARGE_ALONE); `mem_large_reuse small`: under a
 * `ulimit -v` too small for that, blocks of 2-9 MiB are still handed out.
 * Exit 0 when every step holds, 1 otherwise; prints the faults per step.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MIB ((size_t)1 << 20)

static long faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* Allocate and write n bytes; the minor faults that took. */
static long take(size_t n, char **out) {
  long f0 = faults();
  char *p = malloc(n);
  if (p == NULL) { printf("FAIL: malloc(%zu) failed\n", n); exit(1); }
  memset(p, 0x5a, n);
  *out = p;
  return faults() - f0;
}

static int check(const char *what, long got, long max) {
  printf("%-44s %6ld faults (at most %ld)\n", what, got, max);
  return got <= max ? 0 : 1;
}

/* Eight live blocks of 32 MiB + 64 KiB .. 39 MiB: each in a 1 GiB region of
 * its own (aligned), or with small, of 2 MiB + 64 KiB .. 9 MiB, just handed
 * out. */
static int alone(int small) {
  char *p[8];
  int bad = 0;
  for (int i = 0; i < 8; i++) {
    size_t base = small ? 2 * MIB : 32 * MIB;
    size_t n = i == 0 ? base + 65536 : base + (size_t)i * MIB + 4096 * (size_t)i;
    if ((p[i] = malloc(n)) == NULL) { printf("FAIL: malloc(%zu) failed\n", n); return 1; }
    memset(p[i], i, 4096);
    unsigned long off = (unsigned long)((uintptr_t)p[i] & ((1ul << 30) - 1));
    if (!small && off != 0) {
      printf("FAIL: block of %zu bytes at %p: %#lx into its 1 GiB region\n", n, (void *)p[i], off);
      bad = 1;
    }
  }
  for (int i = 0; i < 8; i++) free(p[i]);
  printf("eight blocks%s: %s\n", small ? " of 2-9 MiB (tight ulimit -v)" : " of 32-39 MiB alone in 1 GiB regions",
         bad ? "no" : "yes");
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "cache") != 0) return alone(argc > 1 && strcmp(argv[1], "small") == 0);
  long page = 4096, fails = 0;
  char *a, *b, *c, *d;
  take(24 * MIB, &a);
  free(a);
  fails += check("8 MiB from the freed 24 MiB", take(8 * MIB, &b), (long)(8 * MIB / page) / 10);
  fails += check("12 MiB from its cached tail", take(12 * MIB, &c), (long)(12 * MIB / page) / 10);
  free(b);
  free(c);
  fails += check("20 MiB grown from the cached 12 MiB", take(20 * MIB, &d),
                 (long)(8 * MIB / page) + (long)(20 * MIB / page) / 10);
  free(d);
  printf("mem_large_reuse: %ld failed\n", fails);
  return fails != 0;
}
