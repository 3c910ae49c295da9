/*
 * fastpath.c - the malloc/free fast path on mixed sizes, for instruction
 * counts under callgrind (`make bench-fastpath`).
 *
 * PAIRS pairs (default 1,000,000): each frees the block that has lived
 * longest of a window of 64 and allocates a new one of a pseudo-random size
 * in 8..256 bytes, writing its first byte.  The sizes come from a table
 * filled before the loop, so the loop itself costs the same under every
 * allocator; `fastpath 0` runs the loop with no allocator call, and the
 * difference of the two counts, divided by PAIRS, is the allocator's cost
 * of one pair.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 64
#define NSIZES 4096

int main(int argc, char **argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  int dry = argc > 1 && pairs == 0;
  if (dry) pairs = argc > 2 ? atol(argv[2]) : 1000000;
  static unsigned short sizes[NSIZES];
  uint32_t x = 2463534242u;
  for (int i = 0; i < NSIZES; i++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    sizes[i] = (unsigned short)(8 + x % 249);
  }
  static char *live[WINDOW];
  static char dummy[WINDOW][256];
  unsigned long sum = 0;
  for (long i = 0; i < pairs; i++) {
    unsigned slot = (unsigned)i % WINDOW;
    char *p;
    if (dry) {
      p = dummy[slot];
    } else {
      free(live[slot]);
      p = malloc(sizes[i % NSIZES]);
      if (p == NULL) return 1;
    }
    p[0] = (char)i;
    live[slot] = p;
    sum += (unsigned char)p[0];
  }
  if (!dry)
    for (int i = 0; i < WINDOW; i++) free(live[i]);
  printf("%lu\n", sum);
  return 0;
}
