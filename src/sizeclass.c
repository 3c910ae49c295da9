/*
 * sizeclass.c - the table of small size classes (see sizeclass.h).  A
 * compile-time constant: no start-up work, nothing to initialise.
 */
#include "sizeclass.h"

/* Doublings above 128 (0 for c < 9, where the branch using it is not taken
 * but compilers still check its shifts). */
#define CLS_DBL(c) ((c) < 9u ? 0u : ((c) - 9u) / 8u)
/* Blocks per slab of fitted class c (SMP_FIT_FIRST <= c < SMP_HALF_FIRST):
 * 15 for the first, down to 3 for the last. */
#define CLS_FIT_K(c) (SMP_FIT_FIRST + 15u - (c))
#define CLS_SIZE(c) \
  ((c) >= SMP_HALF_FIRST ? SMP_HALF_MIN + ((c) - SMP_HALF_FIRST) * 4096u \
   : (c) >= SMP_FIT_FIRST ? (SMP_SLAB_SIZE / CLS_FIT_K(c)) & ~63u \
   : (c) == 0 ? 8u : (c) < 9 ? 16u * (c) \
   : (1u << (7u + CLS_DBL(c))) + ((((c) - 9u) % 8u + 1u) << (4u + CLS_DBL(c))))
#define CLS_ALL(c) (SMP_SLAB_SIZE / CLS_SIZE(c))
#define CLS(c) \
  {CLS_SIZE(c), (uint32_t)(0x100000000u / CLS_SIZE(c) + 1u), (uint32_t)CLS_ALL(c), \
   (uint32_t)((CLS_ALL(c) - 1u) * CLS_SIZE(c))},
#define CLS8(c) CLS(c) CLS(c + 1) CLS(c + 2) CLS(c + 3) CLS(c + 4) CLS(c + 5) CLS(c + 6) CLS(c + 7)

const class_info_t class_table[SMP_NCLASS] = {
    CLS(0u) CLS8(1u) CLS8(9u) CLS8(17u) CLS8(25u) CLS8(33u) CLS8(41u) /* to 4 KiB */
    CLS8(49u) CLS(57u) CLS(58u) CLS(59u) CLS(60u) CLS(61u) /* fitted */
    CLS(62u) CLS(63u) CLS(64u)};                                /* halves */

/* Class of n bytes, 0 <= n <= 1024, as a constant expression (class_of in
 * sizeclass.h is the same formula at run time). */
#define LOG2_1K(x) ((x) >= 512u ? 9u : (x) >= 256u ? 8u : 7u)
#define CLS_OF(n) \
  ((n) <= 8u ? 0u : (n) <= 128u ? ((n) + 15u) >> 4 \
   : 9u + (LOG2_1K((n) - 1u) - 7u) * 8u + ((((n) - 1u) >> (LOG2_1K((n) - 1u) - 3u)) & 7u))
#define B1(n) (uint16_t)((SMP_NCLASS - 1u - CLS_OF(n)) << SMP_BIN_SHIFT), /* bin_offset */
#define B8(n) B1(n) B1(n + 1u) B1(n + 2u) B1(n + 3u) B1(n + 4u) B1(n + 5u) B1(n + 6u) B1(n + 7u)
#define B64(n) B8(n) B8(n + 8u) B8(n + 16u) B8(n + 24u) B8(n + 32u) B8(n + 40u) B8(n + 48u) B8(n + 56u)
#define B512(n) \
  B64(n) B64(n + 64u) B64(n + 128u) B64(n + 192u) B64(n + 256u) B64(n + 320u) B64(n + 384u) B64(n + 448u)

const uint16_t bin_of_size[1025] = {B512(0u) B512(512u) B1(1024u)};

_Static_assert(CLS_SIZE(SMP_NCLASS - 1u) == SMP_SMALL_MAX, "last class must be SMP_SMALL_MAX");
_Static_assert(CLS_SIZE(8u) == 128u && CLS_SIZE(9u) == 144u && CLS_SIZE(16u) == 256u,
               "class layout");
/* Class of n bytes, 1024 < n <= SMP_SMALL_MAX, as a constant expression:
 * the doublings to 4 KiB, then the fitted class of most blocks a slab that
 * holds n (one more when rounding to 64 took it below n), then the halves
 * in 4 KiB steps. */
#define LOG2_4K(x) ((x) >= 2048u ? 11u : 10u)
#define CLS_OF_MID(n) \
  (9u + (LOG2_4K((n) - 1u) - 7u) * 8u + ((((n) - 1u) >> (LOG2_4K((n) - 1u) - 3u)) & 7u))
#define CLS_FIT_OF(n) (SMP_FIT_FIRST + 15u - SMP_SLAB_SIZE / (n))
#define CLS_OF_BIG(n) \
  ((n) <= 4096u ? CLS_OF_MID(n) \
   : (n) <= CLS_SIZE(SMP_HALF_FIRST - 1u) ? CLS_FIT_OF(n) + (CLS_SIZE(CLS_FIT_OF(n)) < (n)) \
   : SMP_HALF_FIRST + ((n) - 1u - (SMP_HALF_MIN - 4096u)) / 4096u)
#define C1(i) (uint8_t)CLS_OF_BIG((i) * 128u + 1u),
#define C8(i) C1(i) C1(i + 1u) C1(i + 2u) C1(i + 3u) C1(i + 4u) C1(i + 5u) C1(i + 6u) C1(i + 7u)
#define C64(i) C8(i) C8(i + 8u) C8(i + 16u) C8(i + 24u) C8(i + 32u) C8(i + 40u) C8(i + 48u) C8(i + 56u)

const uint8_t class_of_big[256] = {0, 0, 0, 0, 0, 0, 0, 0, /* <= 1 KiB: bin_of_size */
                                   C8(8u) C8(16u) C8(24u) C8(32u) C8(40u) C8(48u) C8(56u)
                                   C64(64u) C64(128u) C64(192u)};

_Static_assert(CLS_SIZE(48u) == 4096u && CLS_SIZE(SMP_FIT_FIRST) > 4096u &&
                   CLS_FIT_K(SMP_HALF_FIRST - 1u) == 3u && SMP_SLAB_SIZE == 65536u,
               "fitted classes: 15 down to 3 blocks of a 64 KiB slab, above 4 KiB");
_Static_assert(CLS_SIZE(SMP_HALF_FIRST) == 24576u && CLS_SIZE(SMP_NCLASS - 1u) == 32768u &&
                   CLS_SIZE(SMP_HALF_FIRST - 1u) == 21824u && CLS_SIZE(SMP_HALF_FIRST - 1u) + 4096u > SMP_HALF_MIN,
               "halves: 24, 28 and 32 KiB, two to a slab, 4 KiB apart above the last fitted class");

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
