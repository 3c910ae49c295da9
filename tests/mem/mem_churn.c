/* mem_churn: in a steady state of replacement, free memory is reused with
 * its pages, not returned to the kernel and faulted in again, and a block
 * whose first page alone is written does not make 2 MiB resident
 * (t_mem_churn.sh runs it under LD_PRELOAD=build/libsmpalloc.so).
 *
 * One thread keeps LIVE blocks of 32 KiB to 1 MiB (log-uniform: runs of
 * granules) and replaces a random one OPS times, writing the first byte of
 * each new block (the sweep's run/T1 shape, bench/shapes).  After a first
 * round of OPS operations it measures a second: the bytes the allocator
 * returned (smp_stats_get, found with dlsym: its statistics) and the page
 * faults (getrusage), per operation, and the RSS at the end.  Prints
 * "returned_pages_per_op X faults_per_op Y rss_mib Z calls N kib_per_call
 * K" (the system calls that returned memory in the second round, and
 * their mean size).  With a second argument "trim" it frees every block
 * and calls malloc_trim(0) before it exits. */
#define MEM_PROG "mem_churn"
#include <dlfcn.h>
#include <malloc.h>
#include <sys/resource.h>

#include "mem_common.h"
#include "smpalloc.h"

#define LIVE 2000
#define OPS 20000

static long minflt(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static size_t block_size(uint64_t *rng) {
  /* log-uniform over [2^15, 2^20] */
  unsigned b = 15 + (unsigned)(next_rand(rng) % 5);
  return ((size_t)1 << b) + (size_t)(next_rand(rng) % ((size_t)1 << b));
}

static smp_stats_t stats(int (*get)(smp_stats_t *)) {
  smp_stats_t st;
  if (get(&st) != 0) { fprintf(stderr, MEM_PROG ": smp_stats_get failed\n"); exit(2); }
  return st;
}

int main(int argc, char **argv) {
  if (argc > 1 && expect_allocator(argv[1])) return 1;
  int (*get)(smp_stats_t *) = (int (*)(smp_stats_t *))dlsym(RTLD_DEFAULT, "smp_stats_get");
  if (get == NULL) { fprintf(stderr, MEM_PROG ": smp_stats_get not found (not smpalloc?)\n"); return 2; }
  static unsigned char *b[LIVE];
  uint64_t rng = 42;
  for (int i = 0; i < LIVE; i++) {
    if ((b[i] = malloc(block_size(&rng))) == NULL) return 2;
    b[i][0] = 1;
  }
  smp_stats_t s0 = {0};
  long f0 = 0;
  for (int round = 0; round < 2; round++) {
    if (round == 1) s0 = stats(get), f0 = minflt();
    for (int i = 0; i < OPS; i++) {
      size_t k = next_rand(&rng) % LIVE;
      free(b[k]);
      if ((b[k] = malloc(block_size(&rng))) == NULL) return 2;
      b[k][0] = 1;
    }
  }
  smp_stats_t s1 = stats(get);
  size_t bytes = s1.bytes_returned - s0.bytes_returned, calls = s1.return_calls - s0.return_calls;
  double pages = (double)bytes / 4096 / OPS, faults = (double)(minflt() - f0) / OPS;
  printf("returned_pages_per_op %.2f faults_per_op %.2f rss_mib %.0f calls %zu kib_per_call %.0f\n", pages, faults,
         rss_bytes() / MIB, calls, calls ? (double)bytes / 1024 / calls : 0.0);
  for (int i = 0; i < LIVE; i++) free(b[i]);
  /* "trim": everything back at once (t_mem_churn.sh counts the calls). */
  if (argc > 2 && strcmp(argv[2], "trim") == 0) malloc_trim(0);
  return 0;
}
