/*
 * internal.c - exhaustive checks of the allocator's internal
 * arithmetic, compiled together with the core sources (-Isrc):
 *   - size_class(n) and the table smp_class_by8 agree with the class
 *     definition for every n in 0..SMP_SMALL_MAX: the class is the smallest
 *     whose size is >= n;
 *   - the one-multiply block-start test (block_start, internal.h) says
 *     "start" exactly for offsets that are whole multiples of the class
 *     size, past the slab's bitmap and below the last whole block, for
 *     every class and every offset of a slab; the bitmap fits its room.
 *   - size_class_aligned(n, a) gives a class whose size is a multiple of a.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static unsigned long failures;
#define CHECK(c, ...) \
  do { if (!(c) && failures++ < 20) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

int main(void) {
  unsigned long checks = 0;
  for (size_t n = 0; n <= SMP_SMALL_MAX; n++) {
    unsigned c = size_class(n);
    checks++;
    CHECK(c < SMP_NCLASS, "size_class(%zu) = %u out of range", n, c);
    if (c >= SMP_NCLASS) continue;
    CHECK(smp_class[c].size >= n, "size_class(%zu): size %u too small", n, smp_class[c].size);
    CHECK(c == 0 || smp_class[c - 1].size < (n ? n : 1), "size_class(%zu) = %u not the smallest", n, c);
    if (n <= 1024) CHECK(smp_class_by8[(n + 7) >> 3] == c, "by8 table disagrees at %zu", n);
  }
  for (unsigned c = 0; c < SMP_NCLASS; c++) {
    const class_info_t *ci = &smp_class[c];
    uint32_t all = SMP_SLAB_SIZE / ci->size, limit = all * ci->size;
    CHECK(ci->first + ci->count == all, "blocks of class %u", c);
    CHECK(ci->begin == ci->first * ci->size && ci->begin + ci->last + ci->size == limit,
          "offsets of class %u", c);
    /* The bitmap (a bit per block) fits the descriptor's word or the
     * reserved blocks, and no handed-out block shares its cache lines. */
    CHECK(all <= 64 ? ci->first == 0 : ci->begin >= ((all + 63) / 64 * 8 + 63) / 64 * 64,
          "bitmap room of class %u", c);
    CHECK(ci->count * 100 >= all * 98, "class %u: the bitmap takes more than 2 %%", c);
    for (uint32_t off = 0; off < SMP_SLAB_SIZE; off++) {
      bool want = off % ci->size == 0 && off >= ci->begin && off < limit;
      bool got = block_start(off, ci);
      checks++;
      CHECK(want == got, "class %u (size %u): offset %u start=%d, test says %d", c, ci->size, off,
            want, got);
    }
  }
  for (size_t a = 16; a <= SMP_SMALL_MAX; a *= 2)
    for (size_t n = 0; n <= SMP_SMALL_MAX; n += 7) {
      unsigned c = size_class_aligned(n, a);
      checks++;
      CHECK(c < SMP_NCLASS && smp_class[c].size % a == 0 && smp_class[c].size >= n,
            "size_class_aligned(%zu, %zu) = %u", n, a, c);
    }
  printf("internal: %lu checks, %lu failed\n", checks, failures);
  return failures != 0;
}
