/*
 * sizeclass.c - the table of small size classes (see sizeclass.h).  A
 * compile-time constant: no start-up work, nothing to initialise.
 */
#include "sizeclass.h"

/* Doublings above 128 (0 for c < 9, where the branch using it is not taken
 * but compilers still check its shifts). */
#define CLS_DBL(c) ((c) < 9u ? 0u : ((c) - 9u) / 8u)
#define CLS_SIZE(c) \
  ((c) == 0 ? 8u : (c) < 9 ? 16u * (c) \
            : (1u << (7u + CLS_DBL(c))) + ((((c) - 9u) % 8u + 1u) << (4u + CLS_DBL(c))))
#define CLS_ALL(c) (SMP_SLAB_SIZE / CLS_SIZE(c))
#define CLS(c) \
  {CLS_SIZE(c), (uint32_t)(0x100000000u / CLS_SIZE(c) + 1u), (uint32_t)CLS_ALL(c), \
   (uint32_t)((CLS_ALL(c) - 1u) * CLS_SIZE(c))},
#define CLS8(c) CLS(c) CLS(c + 1) CLS(c + 2) CLS(c + 3) CLS(c + 4) CLS(c + 5) CLS(c + 6) CLS(c + 7)

const class_info_t class_table[SMP_NCLASS] = {
    CLS(0u) CLS8(1u) CLS8(9u) CLS8(17u) CLS8(25u) CLS8(33u) CLS8(41u) CLS8(49u) CLS8(57u)
    CLS8(65u)};

/* Class of n bytes, 0 < n <= 1024, as a constant expression (class_of in
 * sizeclass.h is the same formula at run time). */
#define LOG2_1K(x) ((x) >= 512u ? 9u : (x) >= 256u ? 8u : 7u)
#define CLS_OF(n) \
  ((n) <= 8u ? 0u : (n) <= 128u ? ((n) + 15u) >> 4 \
   : 9u + (LOG2_1K((n) - 1u) - 7u) * 8u + ((((n) - 1u) >> (LOG2_1K((n) - 1u) - 3u)) & 7u))
#define BY8(i) (uint16_t)(((i) == 0 ? 0u : CLS_OF(8u * (i))) << SMP_BIN_SHIFT),
#define BY8_8(i) BY8(i) BY8(i + 1) BY8(i + 2) BY8(i + 3) BY8(i + 4) BY8(i + 5) BY8(i + 6) BY8(i + 7)

const uint16_t bin_by8[129] = {
    BY8_8(0u) BY8_8(8u) BY8_8(16u) BY8_8(24u) BY8_8(32u) BY8_8(40u) BY8_8(48u) BY8_8(56u)
    BY8_8(64u) BY8_8(72u) BY8_8(80u) BY8_8(88u) BY8_8(96u) BY8_8(104u) BY8_8(112u) BY8_8(120u)
    BY8(128u)};

_Static_assert(CLS_SIZE(SMP_NCLASS - 1u) == SMP_SMALL_MAX, "last class must be SMP_SMALL_MAX");
_Static_assert(CLS_SIZE(8u) == 128u && CLS_SIZE(9u) == 144u && CLS_SIZE(16u) == 256u,
               "class layout");
/* class_mark needs floor(2^32 / size) + 1 >= 2^17 > 64 KiB offsets. */
_Static_assert(SMP_SMALL_MAX <= (1u << 15) && SMP_SLAB_SHIFT <= 16, "one-multiply block check");

unsigned class_aligned(size_t n, size_t align) {
  if (align > SMP_SMALL_MAX || n > SMP_SMALL_MAX) return SMP_NCLASS;
  /* Blocks sit at multiples of their size from a 64 KiB-aligned slab base,
   * so a class whose size is a multiple of align yields aligned blocks; the
   * powers of two guarantee one exists. */
  unsigned c = class_of(n < align ? align : n);
  while (class_table[c].size & (align - 1)) c++;
  return c;
}
