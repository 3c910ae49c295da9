/* mem_size_walk: a thread that moves from size to size does not hold a
 * slab's worth of memory per size it used.
 *
 * The pattern of glibc's bench-malloc-simple (bench/suite/glibc-simple.c):
 * rounds over the sizes 16, 24, 32, 48, 64, 96, 128, 256, 512 bytes; for
 * each size BLOCKS blocks are allocated, written whole, and all freed, in a
 * random order (a thread cache then keeps a few blocks of each size, spread
 * over all the slabs that size used).  The live set is at most BLOCKS * 512
 * bytes (1 MiB).  The peak RSS (VmHWM) gained over the rounds must stay
 * under --max-growth-kib (the test script passes the bound; glibc's own
 * growth is printed for comparison).
 *
 *   mem_size_walk [--expect smpalloc|glibc] [--rounds N] [--max-growth-kib K]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_PROG "mem_size_walk"
#include "mem_common.h"

#define BLOCKS 2000

int main(int argc, char **argv) {
  const char *expect = NULL;
  long rounds = 40, max_kib = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--expect") == 0) expect = argv[i + 1];
    else if (strcmp(argv[i], "--rounds") == 0) rounds = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--max-growth-kib") == 0) max_kib = atol(argv[i + 1]);
    else {
      fprintf(stderr, "usage: " MEM_PROG " [--expect smpalloc|glibc] [--rounds N] [--max-growth-kib K]\n");
      return 2;
    }
  }
  if (expect_allocator(expect)) return 1;
  static const size_t sizes[] = {16, 24, 32, 48, 64, 96, 128, 256, 512};
  static unsigned char *v[BLOCKS];
  static unsigned order[BLOCKS];
  uint64_t rng = 0x2545F4914F6CDD1Dull;
  size_t before = hwm_kib();
  for (long r = 0; r < rounds; r++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t n = sizes[s];
      for (unsigned i = 0; i < BLOCKS; i++) {
        if ((v[i] = malloc(n)) == NULL) {
          fprintf(stderr, MEM_PROG ": malloc(%zu) failed\n", n);
          return 2;
        }
        memset(v[i], (int)(i & 0xff), n);
        order[i] = i;
      }
      for (unsigned i = BLOCKS - 1; i > 0; i--) {
        unsigned j = (unsigned)(next_rand(&rng) % (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      for (unsigned i = 0; i < BLOCKS; i++) {
        unsigned k = order[i];
        if (v[k][n - 1] != (unsigned char)(k & 0xff)) {
          fprintf(stderr, MEM_PROG ": block %u of %zu bytes changed\n", k, n);
          return 1;
        }
        free(v[k]);
      }
    }
  }
  size_t growth = hwm_kib() - before;
  printf(MEM_PROG ": %ld rounds of %d blocks of 16..512 bytes (live at most %d KiB): peak RSS grew %zu KiB\n",
         rounds, BLOCKS, BLOCKS * 512 / 1024, growth);
  if (max_kib >= 0 && growth > (size_t)max_kib) {
    printf("FAIL: peak RSS grew %zu KiB, more than %ld KiB\n", growth, max_kib);
    return 1;
  }
  return 0;
}
