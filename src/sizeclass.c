/*
 * sizeclass.c - the table of small size classes.
 *
 * Sizes: 8, 16, ..., 128 (16 classes, 8-byte steps; tiny strings cost at most
 * 8 bytes), then 8 classes per doubling: 144, 160, ..., 256, 288, ..., 32768
 * (64 classes).  A request is rounded up to its class, so the waste is at
 * most 7 bytes below 128 and at most 1/9 of the block above.  The table is a
 * compile-time constant: no start-up work, nothing to initialise.
 */
#include "internal.h"

/* Doublings above 128 (0 for c < 16, where the branch using it is not
 * taken but compilers still check its shifts). */
#define CLS_DBL(c) ((c) < 16u ? 0u : ((c) - 16u) / 8u)
#define CLS_SIZE(c) \
  ((c) < 16 ? 8u * ((c) + 1u) \
            : (1u << (7u + CLS_DBL(c))) + ((((c) - 16u) % 8u + 1u) << (4u + CLS_DBL(c))))
/* Blocks in a slab; the bitmap's bytes, rounded up to a cache line (no
 * block shares a line with it); blocks it takes at the slab's start (none
 * when it fits the descriptor's word). */
#define CLS_ALL(c) (SMP_SLAB_SIZE / CLS_SIZE(c))
#define CLS_MAPB(c) (((CLS_ALL(c) + 63u) / 64u * 8u + 63u) / 64u * 64u)
#define CLS_FIRST(c) (CLS_ALL(c) <= 64u ? 0u : (CLS_MAPB(c) + CLS_SIZE(c) - 1u) / CLS_SIZE(c))
#define CLS(c) \
  {CLS_SIZE(c), (uint32_t)(0xffffffffu / CLS_SIZE(c) + 1u), (uint16_t)(CLS_FIRST(c) * CLS_SIZE(c)), \
   (uint16_t)((CLS_ALL(c) - 1u - CLS_FIRST(c)) * CLS_SIZE(c)), (uint16_t)(CLS_ALL(c) - CLS_FIRST(c)), \
   (uint16_t)CLS_FIRST(c)},
#define CLS8(c) CLS(c) CLS(c + 1) CLS(c + 2) CLS(c + 3) CLS(c + 4) CLS(c + 5) CLS(c + 6) CLS(c + 7)

const class_info_t smp_class[SMP_NCLASS] = {
    CLS8(0u) CLS8(8u) CLS8(16u) CLS8(24u) CLS8(32u) CLS8(40u) CLS8(48u) CLS8(56u) CLS8(64u) CLS8(72u)};

/* Class of n bytes, 0 < n <= 1024, as a constant expression (see size_class
 * in internal.h for the same formula at run time). */
#define LOG2_1K(x) ((x) >= 512u ? 9u : (x) >= 256u ? 8u : 7u)
#define CLS_OF(n) \
  ((n) <= 128u ? ((n) - 1u) >> 3 \
               : 16u + (LOG2_1K((n) - 1u) - 7u) * 8u + ((((n) - 1u) >> (LOG2_1K((n) - 1u) - 3u)) & 7u))
#define BY8(i) (uint8_t)((i) == 0 ? 0u : CLS_OF(8u * (i))),
#define BY8_8(i) BY8(i) BY8(i + 1) BY8(i + 2) BY8(i + 3) BY8(i + 4) BY8(i + 5) BY8(i + 6) BY8(i + 7)

const uint8_t smp_class_by8[129] = {
    BY8_8(0u) BY8_8(8u) BY8_8(16u) BY8_8(24u) BY8_8(32u) BY8_8(40u) BY8_8(48u) BY8_8(56u)
    BY8_8(64u) BY8_8(72u) BY8_8(80u) BY8_8(88u) BY8_8(96u) BY8_8(104u) BY8_8(112u) BY8_8(120u)
    BY8(128u)};

_Static_assert(CLS_SIZE(SMP_NCLASS - 1u) == SMP_SMALL_MAX, "last class must be SMP_SMALL_MAX");
_Static_assert(CLS_SIZE(16u) == 144u && CLS_SIZE(23u) == 256u, "class layout");
/* block_start() in alloc.c needs ceil(2^32 / size) >= 2^17 > 64 KiB. */
_Static_assert(SMP_SMALL_MAX <= (1u << 15) && SMP_SLAB_SHIFT <= 16, "one-multiply block check");

unsigned size_class_aligned(size_t n, size_t align) {
  if (align > SMP_SMALL_MAX || n > SMP_SMALL_MAX) return SMP_NCLASS;
  /* Blocks sit at multiples of their size from a 64 KiB-aligned slab base,
   * so a class whose size is a multiple of align yields aligned blocks; the
   * powers of two guarantee one exists. */
  unsigned c = size_class(n < align ? align : n);
  while (smp_class[c].size & (align - 1)) c++;
  return c;
}
