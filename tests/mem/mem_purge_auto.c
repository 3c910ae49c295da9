/* mem_purge_auto: RSS falls on its own after a big free, with no trim call.
 *
 * Allocates 256 MiB (requested bytes) in blocks of 16..512 bytes, writing
 * every byte, then frees them all (one thread; blocks chained through their
 * first word, so no pointer array adds to RSS).  Then, for at most
 * --iterations rounds, it does a little allocation activity - 64 blocks of
 * 4 KiB and 256 of 64 bytes allocated then freed, more than a thread cache
 * holds, so the allocator's slow paths run - reads RSS (/proc/self/statm)
 * and, while RSS is still high, sleeps 10 ms (a measurement pace: the loop
 * is bounded by its iteration count, and the verdict is the RSS reached).
 *
 *   mem_purge_auto [--expect smpalloc|glibc] [--max-growth-mib N]
 *                  [--iterations N] [--activity mixed|alloc|large]
 *
 * Prints start, peak, right after the frees, and the final RSS with the
 * number of rounds it took; with --max-growth-mib N exits 1 if the final RSS
 * is more than N MiB above the start.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_PROG "mem_purge_auto"
#include "mem_common.h"

#define TOTAL ((size_t)256 << 20)

/* What the rounds do (--activity): "mixed" (the default) allocates and
 * frees more blocks than a thread cache keeps; "alloc" only allocates
 * (small blocks, 4 KiB a round, kept); "large" allocates and frees blocks
 * mapped alone (4 MiB and a little more; one page of each is written). */
static const char *mode = "mixed";
static void *kept;

/* A little allocation activity: more blocks than a thread cache keeps. */
static int activity(unsigned round) {
  if (strcmp(mode, "alloc") == 0) {
    for (unsigned i = 0; i < 64; i++) {
      void **p = malloc(64);
      if (p == NULL) return -1;
      *p = kept;
      kept = p;
    }
    return 0;
  }
  if (strcmp(mode, "large") == 0) {
    for (unsigned i = 0; i < 4; i++) {
      char *p = malloc((4u << 20) + 4096 * i);
      if (p == NULL) return -1;
      p[0] = (char)round;
      free(p);
    }
    return 0;
  }
  void *big[64], *small[256];
  for (unsigned i = 0; i < 64; i++) {
    if ((big[i] = malloc(4096)) == NULL) return -1;
    memset(big[i], (int)round, 4096);
  }
  for (unsigned i = 0; i < 256; i++) {
    if ((small[i] = malloc(64)) == NULL) return -1;
    memset(small[i], (int)i, 64);
  }
  for (unsigned i = 0; i < 64; i++) free(big[i]);
  for (unsigned i = 0; i < 256; i++) free(small[i]);
  return 0;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  long max_growth_mib = -1;
  unsigned iterations = 300;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--max-growth-mib") == 0 && i + 1 < argc) max_growth_mib = atol(argv[++i]);
    else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) iterations = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--activity") == 0 && i + 1 < argc) mode = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--max-growth-mib N] [--iterations N] "
              "[--activity mixed|alloc|large]\n", argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  size_t start = rss_bytes();
  uint64_t seed = 0x243F6A8885A308D3ull;
  struct block *head = NULL;
  size_t total = 0, n = 0;
  while (total < TOTAL) {
    uint32_t size = 16 + (uint32_t)(next_rand(&seed) % 497);
    struct block *b = malloc(size);
    if (b == NULL) {
      fprintf(stderr, "mem_purge_auto: malloc(%u) failed\n", size);
      return 2;
    }
    b->next = head;
    b->size = size;
    b->tag = (uint32_t)n;
    memset(b + 1, (int)(n & 0xff), size - sizeof *b);
    head = b;
    total += size;
    n++;
  }
  size_t peak = rss_bytes();
  while (head != NULL) {
    struct block *next = head->next;
    free(head);
    head = next;
  }
  size_t after_free = rss_bytes();
  size_t bound = max_growth_mib >= 0 ? start + ((size_t)max_growth_mib << 20) : 0;
  size_t now = after_free;
  unsigned round = 0;
  while (round < iterations && !(max_growth_mib >= 0 && now <= bound)) {
    if (activity(round) != 0) {
      fprintf(stderr, "mem_purge_auto: malloc failed during the activity\n");
      return 2;
    }
    round++;
    now = rss_bytes();
    if (max_growth_mib >= 0 && now <= bound) break;
    struct timespec pace = {0, 10 * 1000 * 1000};
    nanosleep(&pace, NULL);
  }
  printf("blocks=%zu (256 MiB) start=%.1f peak=%.1f after_free=%.1f final=%.1f MiB after %u rounds of activity\n",
         n, start / MIB, peak / MIB, after_free / MIB, now / MIB, round);
  if (peak < start + (192u << 20)) {
    printf("FAIL: RSS rose by only %.1f MiB while 256 MiB was allocated and written\n",
           ((double)peak - (double)start) / MIB);
    return 1;
  }
  if (max_growth_mib >= 0) {
    double growth = ((double)now - (double)start) / MIB;
    if (now > bound) {
      printf("FAIL: RSS is still %.1f MiB above the start after %u rounds (bound %ld MiB)\n", growth, round,
             max_growth_mib);
      return 1;
    }
    printf("ok: RSS fell to %.1f MiB above the start (bound %ld MiB)\n", growth, max_growth_mib);
  }
  return 0;
}
