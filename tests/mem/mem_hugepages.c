/* mem_hugepages: where smpalloc's slabs and runs get transparent huge
 * pages, and where they do not (t_mem_hugepages.sh runs it).
 *
 *   mem_hugepages dense MIB   allocate MIB MiB of 64-byte blocks (one size
 *                             class filled: dense slabs), write each
 *   mem_hugepages runs MIB    allocate MIB MiB of 96 KiB blocks (runs of two
 *                             granules), written whole
 *   mem_hugepages bigruns MIB the same with blocks of 900 KiB (225 pages)
 *   mem_hugepages sparse      one block of every size 8..32 KiB (each class
 *                             used once), written whole
 *   mem_hugepages big MIB     one block of MIB MiB (a mapping of its own),
 *                             written whole
 *   mem_hugepages edges MIB   MIB MiB of 24 KiB blocks (the 24 KiB class,
 *                             two to a slab), each written at its first and
 *                             last byte only (glibc-thread's pattern)
 *   mem_hugepages whole MIB   the same blocks, written whole
 *   mem_hugepages starts MIB  MIB MiB of 8 KiB blocks, each written at its
 *                             first byte only (half of a slab's pages)
 *
 * Prints the anonymous huge pages of the process (AnonHugePages summed over
 * /proc/self/smaps, in KiB), the page faults the phase took (getrusage
 * ru_minflt: a huge page counts once), the growth of RSS and the areas
 * (mappings) advised for huge pages ("hg" in VmFlags), as
 * "huge_kib N faults N rss_growth_kib N hg_areas N". */
#define MEM_PROG "mem_hugepages"
#include <stdbool.h>
#include <sys/resource.h>

#include "mem_common.h"

static long anon_huge_kib(void) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (f == NULL) { perror("smaps"); exit(2); }
  char line[512];
  long sum = 0, v;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1) sum += v;
  fclose(f);
  return sum;
}

static long hg_areas(void) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (f == NULL) { perror("smaps"); exit(2); }
  char line[512];
  long n = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg") != NULL) n++;
  fclose(f);
  return n;
}

static long minflt(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: mem_hugepages dense MIB | runs MIB | bigruns MIB | sparse | big MIB | edges MIB | whole MIB | starts MIB\n"); return 2; }
  long huge0 = anon_huge_kib();
  size_t rss0 = rss_bytes();
  long f0 = minflt();
  if (strcmp(argv[1], "dense") == 0 && argc == 3) {
    size_t n = (size_t)atol(argv[2]) * 1024 * 1024 / 64;
    char **v = malloc(n * sizeof *v); /* a large block: its own pages, not slabs */
    if (v == NULL) return 2;
    for (size_t i = 0; i < n; i++) {
      if ((v[i] = malloc(64)) == NULL) return 2;
      memset(v[i], 1, 64);
    }
  } else if ((strcmp(argv[1], "runs") == 0 || strcmp(argv[1], "bigruns") == 0) && argc == 3) {
    size_t size = strcmp(argv[1], "runs") == 0 ? 96 * 1024 : 900 * 1024;
    size_t n = (size_t)atol(argv[2]) * 1024 * 1024 / size;
    for (size_t i = 0; i < n; i++) {
      char *p = malloc(size);
      if (p == NULL) return 2;
      memset(p, 1, size);
    }
  } else if (strcmp(argv[1], "sparse") == 0) {
    for (size_t size = 8; size <= 32768; size += size < 128 ? 8 : size / 8) {
      char *p = malloc(size);
      if (p == NULL) return 2;
      memset(p, 1, size);
    }
  } else if ((strcmp(argv[1], "edges") == 0 || strcmp(argv[1], "whole") == 0 || strcmp(argv[1], "starts") == 0) &&
             argc == 3) {
    bool whole = strcmp(argv[1], "whole") == 0, starts = strcmp(argv[1], "starts") == 0;
    size_t size = starts ? 8 * 1024 : 24 * 1024, n = (size_t)atol(argv[2]) * 1024 * 1024 / size;
    for (size_t i = 0; i < n; i++) {
      char *volatile p = malloc(size);
      if (p == NULL) return 2;
      if (whole) memset(p, 1, size);
      else if (starts) p[0] = 1;
      else p[0] = p[size - 1] = 1;
    }
  } else if (strcmp(argv[1], "big") == 0 && argc == 3) {
    size_t n = (size_t)atol(argv[2]) * 1024 * 1024;
    char *volatile p = malloc(n); /* volatile: the writes may not be elided */
    if (p == NULL) return 2;
    memset(p, 1, n);
    if (p[n - 1] != 1) return 2;
  } else {
    fprintf(stderr, "mem_hugepages: unknown phase %s\n", argv[1]);
    return 2;
  }
  long f1 = minflt();
  printf("huge_kib %ld faults %ld rss_growth_kib %ld hg_areas %ld\n", anon_huge_kib() - huge0, f1 - f0,
         (long)((rss_bytes() - rss0) / 1024), hg_areas());
  return 0;
}
