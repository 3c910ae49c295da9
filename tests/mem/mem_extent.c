/* mem_extent: blocks of over 1 MiB and up to 32 MiB come from arenas,
 * first fit by address, and freed neighbours coalesce (t_mem_extent.sh runs it under
 * LD_PRELOAD=build/libsmpalloc.so; every check prints "ok: ..." or
 * "FAIL: ..."; exit 1 on a failure):
 *   - reuse: a block of 8 MiB written whole and freed serves a block of
 *     6 MiB at its address, whose writing takes (almost) no page fault;
 *   - coalesce: three neighbouring blocks of 4 MiB freed (the middle one
 *     last) serve one of 12 MiB at the first one's address, its pages
 *     resident;
 *   - grow: realloc of a block grows it in place into a freed neighbour,
 *     contents kept; shrink: realloc to less stays in place and gives the
 *     tail back (a block of the tail's size lands there);
 *   - first fit: with a hole of 6 MiB below one of 3 MiB, a block of
 *     3 MiB goes to the lower hole (best fit would take the other: blocks
 *     packed low start and end on pages earlier blocks wrote);
 *   - replacement: 64 blocks of 1-32 MiB replaced at random 2,000 times,
 *     the first byte of each written, make no more than 2 page faults an
 *     operation (blocks mapped alone: a fresh mapping or tail each time). */
#define MEM_PROG "mem_extent"
#include <sys/resource.h>

#include "mem_common.h"

#define MIB_ ((size_t)1 << 20)

int main(int argc, char **argv) {
  if (argc > 1 && expect_allocator(argv[1])) return 1;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);

  /* reuse */
  unsigned char *a = malloc(8 * MIB_);
  if (a == NULL) return 2;
  memset(a, 1, 8 * MIB_);
  free(a);
  long f0 = mem_minflt();
  unsigned char *b = malloc(6 * MIB_);
  if (b == NULL) return 2;
  memset(b, 2, 6 * MIB_);
  long f = mem_minflt() - f0;
  mem_check(b == a, "reuse: a freed 8 MiB block serves a 6 MiB one at its address");
  printf("   %ld page faults writing it (%zu pages)\n", f, 6 * MIB_ / page);
  mem_check(f < (long)(6 * MIB_ / page / 16), "reuse: writing it whole faults in few pages");
  free(b);

  /* coalesce */
  unsigned char *c[3];
  for (int i = 0; i < 3; i++) {
    if ((c[i] = malloc(4 * MIB_)) == NULL) return 2;
    memset(c[i], 3, 4 * MIB_);
  }
  int side = c[1] == c[0] + 4 * MIB_ && c[2] == c[1] + 4 * MIB_;
  mem_check(side, "coalesce: three 4 MiB blocks in a row are neighbours");
  free(c[0]);
  free(c[2]);
  free(c[1]);
  f0 = mem_minflt();
  unsigned char *d = malloc(12 * MIB_);
  if (d == NULL) return 2;
  memset(d, 4, 12 * MIB_);
  f = mem_minflt() - f0;
  mem_check(d == c[0], "coalesce: they serve a 12 MiB block at the first one's address");
  mem_check(f < (long)(12 * MIB_ / page / 16), "coalesce: its pages are resident");
  free(d);

  /* grow and shrink */
  unsigned char *g = malloc(3 * MIB_), *h = malloc(3 * MIB_);
  if (g == NULL || h == NULL) return 2;
  memset(g, 5, 3 * MIB_);
  mem_check(h == g + 3 * MIB_, "grow: two 3 MiB blocks are neighbours");
  free(h);
  unsigned char *g2 = realloc(g, 5 * MIB_);
  mem_check(g2 == g, "grow: realloc 3 -> 5 MiB stays in place, into the freed neighbour");
  mem_check(g2 != NULL && mem_filled(g2, 3 * MIB_, 5), "grow: contents kept");
  unsigned char *g3 = realloc(g2, 2 * MIB_);
  mem_check(g3 == g2, "shrink: realloc 5 -> 2 MiB stays in place");
  unsigned char *t = malloc(3 * MIB_);
  mem_check(t == g3 + 2 * MIB_, "shrink: the 3 MiB tail serves a 3 MiB block");
  free(t);
  free(g3);

  /* first fit */
  unsigned char *x[4];
  static const size_t xs[4] = {6, 2, 3, 2};
  for (int i = 0; i < 4; i++)
    if ((x[i] = malloc(xs[i] * MIB_)) == NULL) return 2;
  side = x[1] == x[0] + 6 * MIB_ && x[2] == x[1] + 2 * MIB_ && x[3] == x[2] + 3 * MIB_;
  mem_check(side, "first fit: blocks of 6, 2, 3 and 2 MiB in a row are neighbours");
  free(x[0]);
  free(x[2]);
  unsigned char *y = malloc(3 * MIB_);
  mem_check(y == x[0], "first fit: a 3 MiB block takes the lower 6 MiB hole, not the 3 MiB one above");
  free(y);
  free(x[1]);
  free(x[3]);

  /* replacement */
  enum { LIVE = 64, OPS = 2000 };
  static unsigned char *r[LIVE];
  uint64_t rng = 7;
  for (int i = 0; i < LIVE; i++) {
    size_t n = MIB_ + (size_t)(next_rand(&rng) % (31 * MIB_));
    if ((r[i] = malloc(n)) == NULL) return 2;
    r[i][0] = 1;
  }
  f0 = mem_minflt();
  for (int i = 0; i < OPS; i++) {
    int k = (int)(next_rand(&rng) % LIVE);
    free(r[k]);
    size_t n = MIB_ + (size_t)(next_rand(&rng) % (31 * MIB_));
    if ((r[k] = malloc(n)) == NULL) return 2;
    r[k][0] = 1;
  }
  f = mem_minflt() - f0;
  printf("   replacement: %.2f page faults an operation\n", (double)f / OPS);
  mem_check(f <= 2 * OPS, "replacement: at most 2 page faults an operation");
  for (int i = 0; i < LIVE; i++) free(r[i]);
  return mem_fails ? 1 : 0;
}
