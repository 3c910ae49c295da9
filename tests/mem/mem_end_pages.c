/* mem_end_pages: blocks of 21-32 KiB written only at their ends keep about
 * two pages resident each, however often their slots are reused.
 *
 * The pattern of glibc's bench-malloc-thread (bench/suite/glibc-thread.c)
 * in its top band: one thread keeps SLOTS blocks of random sizes in
 * (21824, 32768] bytes and replaces one at random OPS times, writing each
 * block's first and last 8 bytes (a tag, checked before the free).  A
 * block reused for a request of another size has its last bytes elsewhere:
 * with one class for the whole band, two to a 64 KiB slab, they fall on any
 * of three pages, and over time about four pages of each block are written.
 * The peak RSS (VmHWM) gained, in pages a slot, must stay under
 * --max-pages-a-slot (the test script passes the bound; glibc's own growth
 * is printed for comparison).
 *
 *   mem_end_pages [--expect smpalloc|glibc] [--max-pages-a-slot P]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_PROG "mem_end_pages"
#include "mem_common.h"

#define SLOTS 512
#define OPS 40000
#define LO 21825u
#define HI 32768u

static void tag(unsigned char *p, size_t n, uint64_t key) {
  memcpy(p, &key, 8);
  memcpy(p + n - 8, &key, 8);
}

static int tag_ok(const unsigned char *p, size_t n, uint64_t key) {
  uint64_t a, b;
  memcpy(&a, p, 8);
  memcpy(&b, p + n - 8, 8);
  return a == key && b == key;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  double max_pages = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--expect") == 0) expect = argv[i + 1];
    else if (strcmp(argv[i], "--max-pages-a-slot") == 0) max_pages = atof(argv[i + 1]);
    else {
      fprintf(stderr, "usage: " MEM_PROG " [--expect smpalloc|glibc] [--max-pages-a-slot P]\n");
      return 2;
    }
  }
  if (expect_allocator(expect)) return 1;
  static unsigned char *v[SLOTS];
  static size_t len[SLOTS];
  static uint64_t key[SLOTS];
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  size_t before = hwm_kib();
  for (long i = 0; i < OPS; i++) {
    unsigned s = (unsigned)(next_rand(&rng) % SLOTS);
    if (v[s] != NULL) {
      if (!tag_ok(v[s], len[s], key[s])) {
        fprintf(stderr, MEM_PROG ": block of slot %u (%zu bytes) changed\n", s, len[s]);
        return 1;
      }
      free(v[s]);
    }
    len[s] = LO + (size_t)(next_rand(&rng) % (HI - LO + 1));
    key[s] = next_rand(&rng);
    if ((v[s] = malloc(len[s])) == NULL) {
      fprintf(stderr, MEM_PROG ": malloc(%zu) failed\n", len[s]);
      return 2;
    }
    tag(v[s], len[s], key[s]);
  }
  size_t growth = hwm_kib() - before;
  for (unsigned s = 0; s < SLOTS; s++) free(v[s]);
  double pages = (double)growth * 1024 / (double)sysconf(_SC_PAGESIZE) / SLOTS;
  printf(MEM_PROG ": %d slots of %u..%u bytes replaced %d times, ends written: peak RSS grew %zu KiB (%.2f pages a slot)\n",
         SLOTS, LO, HI, OPS, growth, pages);
  if (max_pages >= 0 && pages > max_pages) {
    printf("FAIL: peak RSS grew %.2f pages a slot, more than %.2f\n", pages, max_pages);
    return 1;
  }
  return 0;
}
