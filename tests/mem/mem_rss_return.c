/* mem_rss_return: memory freed by threads goes back to the kernel.
 *
 * Four threads each allocate 256 MiB (requested bytes) in blocks of 16..512
 * bytes (sizes from a fixed-seed generator), writing every byte; the blocks
 * are chained through their first word, so no pointer array adds to RSS.
 * Then four new threads each free the chain another thread built (every
 * block is checked before its free) and exit.  The main thread then calls
 * malloc_trim(0) (unless --no-trim) and reads RSS (/proc/self/statm).
 *
 *   mem_rss_return [--expect smpalloc|glibc] [--max-growth-mib N] [--no-trim]
 *
 * Prints "start= peak= after_free= after_trim=" (MiB) and exits 0, or 1 when
 * --max-growth-mib N is given and RSS after the trim is more than N MiB
 * above the start.  --expect checks /proc/self/maps: libsmpalloc is mapped
 * (smpalloc) or not (glibc), so a missing LD_PRELOAD is caught.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_PROG "mem_rss_return"
#include "mem_common.h"

#define NTHREADS 4
#define PER_THREAD ((size_t)256 << 20)

static struct block *chains[NTHREADS];
static size_t counts[NTHREADS];
static volatile int failed;

static void *producer(void *arg) {
  unsigned t = (unsigned)(uintptr_t)arg;
  uint64_t seed = 0x9E3779B97F4A7C15ull * (t + 1);
  struct block *head = NULL;
  size_t total = 0, n = 0;
  while (total < PER_THREAD) {
    uint32_t size = 16 + (uint32_t)(next_rand(&seed) % 497); /* 16..512 */
    struct block *b = malloc(size);
    if (b == NULL) {
      fprintf(stderr, "mem_rss_return: malloc(%u) failed after %zu bytes\n", size, total);
      failed = 1;
      break;
    }
    b->next = head;
    b->size = size;
    b->tag = (uint32_t)n * 2654435761u;
    memset(b + 1, (int)(b->tag & 0xff), size - sizeof *b);
    head = b;
    total += size;
    n++;
  }
  chains[t] = head;
  counts[t] = n;
  return NULL;
}

static void *consumer(void *arg) {
  unsigned t = (unsigned)(uintptr_t)arg;
  struct block *b = chains[(t + 1) % NTHREADS]; /* another thread's blocks */
  size_t n = 0;
  while (b != NULL) {
    struct block *next = b->next;
    const unsigned char *body = (const unsigned char *)(b + 1);
    size_t len = b->size - sizeof *b;
    if (b->size < 16 || b->size > 512 ||
        (len > 0 && (body[0] != (b->tag & 0xff) || body[len - 1] != (b->tag & 0xff)))) {
      fprintf(stderr, "mem_rss_return: block %p corrupted (size %u)\n", (void *)b, b->size);
      failed = 1;
      return NULL;
    }
    free(b);
    b = next;
    n++;
  }
  if (n != counts[(t + 1) % NTHREADS]) {
    fprintf(stderr, "mem_rss_return: freed %zu blocks of %zu\n", n, counts[(t + 1) % NTHREADS]);
    failed = 1;
  }
  return NULL;
}

static void run_threads(void *(*fn)(void *)) {
  pthread_t th[NTHREADS];
  for (unsigned i = 0; i < NTHREADS; i++)
    if (pthread_create(&th[i], NULL, fn, (void *)(uintptr_t)i) != 0) {
      fprintf(stderr, "mem_rss_return: pthread_create failed\n");
      exit(2);
    }
  for (unsigned i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  long max_growth_mib = -1;
  int trim = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--max-growth-mib") == 0 && i + 1 < argc) max_growth_mib = atol(argv[++i]);
    else if (strcmp(argv[i], "--no-trim") == 0) trim = 0;
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--max-growth-mib N] [--no-trim]\n", argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  size_t start = rss_bytes();
  double t0 = now_s();
  run_threads(producer);
  double t1 = now_s();
  size_t peak = rss_bytes();
  size_t nblocks = 0;
  for (unsigned i = 0; i < NTHREADS; i++) nblocks += counts[i];
  run_threads(consumer);
  double t2 = now_s();
  size_t after_free = rss_bytes();
  int r = trim ? malloc_trim(0) : -1;
  double t3 = now_s();
  size_t after_trim = rss_bytes();
  printf("blocks=%zu requested=%zu MiB\n", nblocks, (size_t)NTHREADS * (PER_THREAD >> 20));
  printf("start=%.1f peak=%.1f after_free=%.1f after_trim=%.1f MiB (malloc_trim(0) %s %d)\n",
         start / MIB, peak / MIB, after_free / MIB, after_trim / MIB,
         trim ? "returned" : "not called,", r);
  printf("time: allocate %.2f s, free %.2f s, trim %.3f s\n", t1 - t0, t2 - t1, t3 - t2);
  if (failed) return 1;
  if (peak < start + (768u << 20)) { /* the measurement must see the 1 GiB */
    printf("FAIL: RSS rose by only %.1f MiB while 1 GiB was allocated and written\n",
           ((double)peak - (double)start) / MIB);
    return 1;
  }
  if (max_growth_mib >= 0) {
    double growth = ((double)after_trim - (double)start) / MIB;
    if (growth > (double)max_growth_mib) {
      printf("FAIL: RSS after %s is %.1f MiB above the start (bound %ld MiB)\n",
             trim ? "malloc_trim(0)" : "freeing (no trim)", growth, max_growth_mib);
      return 1;
    }
    printf("ok: RSS after %s is %.1f MiB above the start (bound %ld MiB)\n",
           trim ? "malloc_trim(0)" : "freeing (no trim)", growth, max_growth_mib);
  }
  return 0;
}
