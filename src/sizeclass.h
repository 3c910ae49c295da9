/*
 * sizeclass.h - the small size classes.
 *
 * Classes 0..8 are 8, 16, 32, 48, ..., 128 bytes; above that eight classes
 * per doubling up to 4 KiB (144, 160, ..., 256, 288, ..., 4096).  Above
 * 4 KiB the classes are fitted to the slab: for k = 15 down to 3, the
 * largest multiple of 64 of which k fit in 64 KiB (4352, 4672, 4992, ...,
 * 13056, 16384, 21824): every block there starts a cache line.  A block's
 * share of its slab is 64 KiB / k either way, so a class between two
 * fitted ones would only waste the slab's tail (eight per doubling took
 * 22528-byte blocks two to a slab, and left 20 KiB of it idle), and each
 * class more is one more set of part-used slabs: one thread replacing 2,048 blocks of random sizes to 32 KiB at
 * random (glibc-thread's pattern, 8.4 MB requested) kept 243 slabs in use
 * with the 24 classes that range had, 217 with the 14 fitted ones.
 * Two to a slab, the last three classes, the halves, are 4 KiB apart (24,
 * 28 and 32 KiB): a slab of 24 KiB blocks leaves 16 KiB idle, but a
 * program that writes a block only at its ends (glibc-thread) writes its
 * last bytes on one page or two, not on any of three, and a block reused
 * for other sizes keeps two or three pages resident, not four
 * (tests/mem/t_mem_end_pages.sh).
 *
 * Every class from 16 bytes on is a multiple of 16, so every block of 16
 * bytes or more is 16-aligned (blocks sit at multiples of their size from a
 * 64 KiB-aligned slab): alignof(max_align_t) on x86-64 and aarch64, which C
 * requires for any object that fits, and which programs built against glibc
 * rely on.  Only requests of at most 8 bytes get 8-aligned 8-byte blocks.
 * The waste is at most 15 bytes up to 128, at most 1/9 of the block up to
 * 4 KiB, and above it at most what the slab's share was already (a request
 * of 21825 bytes takes a 24 KiB block: two to a slab, as any would be;
 * over 21824 bytes less than 4 KiB).  Every
 * power of two from 8 to SMP_SMALL_MAX is a class, which is what makes
 * aligned requests servable from slabs.
 */
#ifndef SMP_SIZECLASS_H
#define SMP_SIZECLASS_H

#include "base.h"

#define SMP_NCLASS 65
#define SMP_FIT_FIRST 49u  /* the first class fitted to the slab */
#define SMP_HALF_FIRST 62u /* the first of the halves (24, 28, 32 KiB) */
#define SMP_HALF_MIN 24576u

/* log2 of the stride of a thread-cache row (tcache.h checks it): class c's
 * bin lies bin_offset(c) bytes into its row.  The stride is two bins,
 * as two rows are interleaved (slab.h).  A slab keeps its bin's offset
 * (chunk.h), and bin_of_size the offset in a row, so that neither free nor
 * malloc shifts. */
#define SMP_BIN_SHIFT 6

typedef struct {
  uint32_t size;   /* block size in bytes */
  uint32_t recip;  /* floor(2^32 / size) + 1: offset / size by one
                      multiply, and block marks (class_mark) */
  uint32_t count;  /* blocks per slab */
  uint32_t last;   /* offset of the last whole block */
} class_info_t;

SMP_HIDDEN extern const class_info_t class_table[SMP_NCLASS];

/* Where class c's bin lies in a thread-cache row: the classes go from the
 * last down, so that the small ones, the busy ones, lie at the row's end,
 * next to the cache's header and arrays (tcache.c: a thread that uses a
 * few small classes touches one stretch of memory). */
static inline uint32_t bin_offset(unsigned c) { return (SMP_NCLASS - 1u - c) << SMP_BIN_SHIFT; }

/* bin_of_size[n] is bin_offset of the class of n bytes, for n <= 1024.
 * One entry a byte (2 KiB): malloc indexes it with n itself, no rounding
 * (two instructions fewer than a table by 8 bytes). */
SMP_HIDDEN extern const uint16_t bin_of_size[1025];

/* class_of_big[(n - 1) >> 7] is the class of the least n of its 128-byte
 * stretch, for 1024 < n <= SMP_SMALL_MAX; the classes there are at least
 * 128 bytes apart, so n's own class is that one or the next. */
SMP_HIDDEN extern const uint8_t class_of_big[256];

/* Class of a request of n bytes (n <= SMP_SMALL_MAX). */
static inline unsigned class_of(size_t n) {
  if (n <= 1024) return SMP_NCLASS - 1u - (bin_of_size[n] >> SMP_BIN_SHIFT);
  unsigned c = class_of_big[(n - 1) >> 7];
  return c + (class_table[c].size < n);
}

/* The mark of offset off in a slab whose class has reciprocal recip: the
 * low half of off * recip.  With recip = floor(2^32 / size) + 1 = (2^32 +
 * err) / size, 0 < err <= size, the product is idx * 2^32 + idx * err for
 * the start of block idx, so the high half is the index and the mark is
 * idx * err: strictly increasing with idx, and below 2^16 for every block
 * of the slab (count * err <= 2^16).  At any other offset the mark is at
 * least 2^16 and at least count * err.  So "off is the start of one of the
 * first k blocks" is one compare, mark(off) < mark(k * size), and "off is
 * a block start" is mark(off) < 2^16 (both checked for every class and
 * offset by tests/api/internal.c). */
static inline uint32_t class_mark(uint32_t off, uint32_t recip) { return off * recip; }

/* The index of the block at offset off of a slab of class ci, and whether
 * off is that block's start (class_mark). */
static inline bool class_block_index(uint32_t off, const class_info_t *ci, uint32_t *idx) {
  uint64_t prod = (uint64_t)off * ci->recip;
  *idx = (uint32_t)(prod >> 32);
  return (uint32_t)prod < 0x10000u;
}

/* Class for n bytes aligned to align (a power of two), or SMP_NCLASS if no
 * slab class can serve it. */
SMP_HIDDEN unsigned class_aligned(size_t n, size_t align);

#endif /* SMP_SIZECLASS_H */
