/* mem_run_places: large blocks of 32 KiB-1 MiB (runs) replaced at random
 * keep going back to the places blocks of their length used before, so a
 * program that writes a block's first and last bytes touches few new
 * pages (t_mem_run_places.sh runs it under LD_PRELOAD=build/libsmpalloc.so;
 * "ok: ..." or "FAIL: ..." per check, exit 1 on a failure; under glibc it
 * only prints its figures).
 *
 * One thread keeps 100 blocks; each operation frees one at random and
 * puts a new one of a log-uniform random size there, writing its first
 * and last byte (the sweep's run/T1/W100, bench/shapes).  After 20,000
 * operations to warm up, 60,000 more are counted: the distinct addresses
 * blocks start at, and the page faults (getrusage).  The checks:
 *   - places: at most 300 distinct starts (the pool remembering 128 freed
 *     runs a length: 219; 128 places of a ring whose taken entries stayed
 *     as holes: 378; 8, before 2026-12-08: 796; glibc 34,689);
 *   - faults: at most 0.04 a counted operation (0.021; holes 0.059; 8:
 *     0.081; glibc 0.113).
 * One thread and a fixed seed: both counts come out the same every run. */
#define MEM_PROG "mem_run_places"
#include "mem_common.h"

#define LIVE 100
#define WARM 20000
#define OPS 60000
#define SET (1u << 17)

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Log-uniform in [32 KiB, 1 MiB]: 2^(15 + 5u), 2^f by a cubic (close
 * enough for a spread of sizes). */
static size_t draw(void) {
  double e = 5.0 * (double)(next() >> 11) / 9007199254740992.0;
  unsigned w = (unsigned)e;
  double f = e - w;
  return (size_t)((double)(32768u << w) * (1.0 + f * (0.6931 + f * (0.2402 + f * 0.0555))));
}

static uintptr_t seen[SET];
static unsigned places;
static void note(uintptr_t a) {
  uintptr_t h = (a >> 16) * 0x9E3779B97F4A7C15ull >> 47;
  while (seen[h] != 0 && seen[h] != a) h = (h + 1) & (SET - 1);
  if (seen[h] == 0) seen[h] = a, places++;
}

int main(int argc, char **argv) {
  const char *expect = argc > 2 && strcmp(argv[1], "--expect") == 0 ? argv[2] : NULL;
  if (expect_allocator(expect)) return 1;
  int glibc = expect != NULL && strcmp(expect, "glibc") == 0;
  static unsigned char *blk[LIVE];
  long f0 = 0;
  for (long op = 0; op < WARM + OPS; op++) {
    if (op == WARM) f0 = mem_minflt();
    size_t k = (size_t)(next() % LIVE), n = draw();
    free(blk[k]);
    if ((blk[k] = malloc(n)) == NULL) return 2;
    blk[k][0] = 1;
    blk[k][n - 1] = 2;
    if (op >= WARM) note((uintptr_t)blk[k]);
  }
  double per = (double)(mem_minflt() - f0) / OPS;
  for (unsigned k = 0; k < LIVE; k++) free(blk[k]);
  printf("%u distinct starts, %.3f page faults an operation\n", places, per);
  if (glibc) return 0;
  mem_check(places <= 300, "places: blocks start at few places");
  mem_check(per <= 0.04, "faults: few pages touched anew");
  return mem_fails ? 1 : 0;
}
