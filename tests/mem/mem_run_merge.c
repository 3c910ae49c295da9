/* mem_run_merge: large blocks of up to 1 MiB (runs of 64 KiB granules)
 * reuse the room freed next to them (t_mem_run_merge.sh runs it under
 * LD_PRELOAD=build/libsmpalloc.so; every check prints "ok: ..." or
 * "FAIL: ..."; exit 1 on a failure):
 *   - grow at the end: realloc of the last run carved grows it in place
 *     (same address, contents kept);
 *   - grow into a freed neighbour: with the run after it freed, realloc
 *     grows a run in place;
 *   - merge: four neighbouring runs freed (in the order 0 2 1 3, so each
 *     side merges) serve one block of their total size at the first one's
 *     address, and writing all of it takes (almost) no page fault: its
 *     pages are still resident;
 *   - singles: two neighbouring blocks of one granule each, freed (they
 *     stay single granules, which slabs take first), serve a block of two
 *     granules at the first one's address, its pages still resident. */
#define MEM_PROG "mem_run_merge"
#include <sys/resource.h>

#include "mem_common.h"

#define KIB ((size_t)1024)

int main(int argc, char **argv) {
  if (argc > 1 && expect_allocator(argv[1])) return 1;
  /* grow at the end */
  unsigned char *p = malloc(96 * KIB);
  if (p == NULL) return 2;
  memset(p, 7, 96 * KIB);
  unsigned char *q = realloc(p, 300 * KIB);
  mem_check(q == p, "grow at the end: realloc 96 KiB -> 300 KiB stays in place");
  mem_check(q != NULL && mem_filled(q, 96 * KIB, 7), "grow at the end: contents kept");

  /* grow into a freed neighbour */
  unsigned char *a = malloc(128 * KIB), *b = malloc(128 * KIB);
  if (a == NULL || b == NULL) return 2;
  if (b != a + 128 * KIB) {
    printf("FAIL: two runs in a fresh process are not neighbours (%p, %p)\n", (void *)a, (void *)b);
    return 1;
  }
  memset(a, 3, 128 * KIB);
  free(b);
  unsigned char *a2 = realloc(a, 256 * KIB);
  mem_check(a2 == a, "grow into a freed neighbour: realloc 128 KiB -> 256 KiB stays in place");
  mem_check(a2 != NULL && mem_filled(a2, 128 * KIB, 3), "grow into a freed neighbour: contents kept");

  /* merge */
  unsigned char *c[4];
  for (int i = 0; i < 4; i++) {
    if ((c[i] = malloc(192 * KIB)) == NULL) return 2;
    memset(c[i], 1, 192 * KIB);
  }
  for (int i = 1; i < 4; i++)
    if (c[i] != c[0] + (size_t)i * 192 * KIB) {
      printf("FAIL: four runs in a fresh process are not neighbours\n");
      return 1;
    }
  int order[4] = {0, 2, 1, 3};
  for (int i = 0; i < 4; i++) free(c[order[i]]);
  unsigned char *d = malloc(4 * 192 * KIB);
  mem_check(d == c[0], "merge: four freed neighbours serve one block of their total size");
  long f0 = mem_minflt();
  if (d != NULL) memset(d, 2, 4 * 192 * KIB);
  long f = mem_minflt() - f0;
  printf("writing the %zu KiB block took %ld page faults\n", 4 * 192 * KIB / KIB, f);
  mem_check(f < 16, "merge: the merged block's pages are still resident");

  /* singles side by side (blocks of one granule each) */
  unsigned char *s0 = malloc(64 * KIB), *s1 = malloc(64 * KIB);
  if (s0 == NULL || s1 == NULL) return 2;
  if (s1 != s0 + 64 * KIB) {
    printf("FAIL: two one-granule runs in a fresh process are not neighbours (%p, %p)\n", (void *)s0,
           (void *)s1);
    return 1;
  }
  memset(s0, 4, 64 * KIB);
  memset(s1, 4, 64 * KIB);
  if (!mem_filled(s0, 64 * KIB, 4) || !mem_filled(s1, 64 * KIB, 4)) return 2; /* (the writes stay) */
  free(s1);
  free(s0);
  unsigned char *t = malloc(100 * KIB);
  mem_check(t == s0, "singles: two freed one-granule neighbours serve a block of two granules");
  f0 = mem_minflt();
  if (t != NULL) memset(t, 5, 100 * KIB);
  f = mem_minflt() - f0;
  printf("writing the 100 KiB block took %ld page faults\n", f);
  mem_check(f < 8, "singles: the block's pages are still resident");
  free(t);
  free(d);
  free(a2);
  free(q);
  return mem_fails ? 1 : 0;
}
