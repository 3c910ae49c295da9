/*
 * slab.h - one slab: a 64 KiB granule of blocks of one size class, and its
 * bitmap of free blocks.
 *
 * A slab's free blocks are the set bits of its bitmap (out of band, see
 * chunk.h), not a list threaded through the blocks: taking blocks reads no
 * block (a list of cold blocks is a chain of dependent cache misses), they
 * come out lowest address first, a stray write into a free block cannot
 * redirect an allocation, and a block given back twice is seen at once (its
 * bit is already set).  Every function here is called with the lock of the
 * slot that owns the slab held (slot.c), except slab_new, which makes the
 * slab.
 *
 * Free blocks carry slab_free_key in their first word (written by free,
 * cleared when a block is handed out: alloc.c, tcache.c).  In checked mode
 * (SMPALLOC_CHECKED=1) the rest of a free block, up to SMP_CHECKED_FILL_MAX
 * bytes, is filled with a pattern that is verified when the block leaves
 * its slab and when the slab empties.
 */
#ifndef SMP_SLAB_H
#define SMP_SLAB_H

#include "chunk.h"
#include "sizeclass.h"
#include "track.h"

/* The per-process random word that marks a free block (never 0: a block
 * never handed out reads 0). */
SMP_HIDDEN extern uint64_t slab_free_key;

/* The rows of a thread cache (tcache.h): a thread keeps a row of bins for
 * each of slab_rows slots, all empty and full at once (zero) but the row of
 * its own slot.  A slab of slot `owner` keeps in its bin field the offset
 * of its class's bin in row owner % slab_rows, so that free pushes a block
 * only on the bin of its own slot's row and needs no owner compare.  Set
 * once at start-up (the slot count then), before any thread has a cache;
 * slots past it share rows (their blocks then reach other slots' threads'
 * bins: fewer blocks go home, no harm).
 * Rows come in pairs, interleaved: rows 2k and 2k+1 take turns bin by bin
 * (SLAB_PAIR_BYTES for both), so that a class's bins of two slots share a
 * cache line and a page.  A thread that frees a block of the other slot of
 * its pair, or moves to it, then touches no memory its own row does not
 * (with two slots, no memory at all). */
SMP_HIDDEN extern unsigned slab_rows;
#define SLAB_PAIR_BYTES (SMP_NCLASS << SMP_BIN_SHIFT)
/* Bytes of a thread's rows, and where row r starts in them. */
static inline size_t slab_rows_bytes(void) { return (size_t)(slab_rows + 1) / 2 * SLAB_PAIR_BYTES; }
static inline uint32_t slab_row(unsigned r) {
  return (uint32_t)(r / 2 * SLAB_PAIR_BYTES + r % 2 * (1u << (SMP_BIN_SHIFT - 1)));
}
static inline uint32_t slab_bin(unsigned cls, unsigned owner) {
  return slab_row(owner % slab_rows) + bin_offset(cls);
}

/* Clear the free key of block p as it is handed out, and return p.  (The
 * valgrind build: memcheck sees p free, or too short: quietly, track.h.) */
static inline void *slab_unkey(void *p) {
  track_quiet_begin();
  *(uint64_t *)p = 0;
  track_quiet_end();
  return p;
}

/* An empty slab of class cls owned by slot owner, from the pool (dense: a
 * slab about to be filled, chunk_take; first: the slot's first slab of
 * the class, from a clean granule where the pool has one), set up and
 * registered in the page map; its untouched field tells whether its
 * memory is fresh.  Never makes a system call: NULL when no granule is at
 * hand. */
SMP_HIDDEN slab_t *slab_new(unsigned cls, unsigned owner, bool dense, bool first);
/* Take up to want (at least 1) free blocks, lowest address first, into
 * the room that ends at oend, downwards: the lowest at oend[-1], the next
 * at oend[-2], ...; returns the count n, the blocks at oend[-n .. -1]
 * (fewer than want only when the slab runs out). */
SMP_HIDDEN unsigned slab_take(slab_t *sl, unsigned want, void **oend, bool checked);
/* Blocks of slab sl, whose granule is at base, come back: those at v[0],
 * v[1], ... before end, as long as they lie in the granule (a thread cache
 * gives back neighbours).  Their bits are set, and sl's count and hint
 * follow.  Returns where it stopped: end, a block of another granule, or a
 * block whose bit is set already (a double free: the caller aborts).  A
 * block holds the free key already (free wrote it): nothing is written into
 * it here, under the lock, except checked mode's fill (slab_fill_free).
 * Inline: slot_give runs it for every block a thread cache gives back; one
 * subtraction serves the granule test and the index.
 * Blocks come back mostly in runs: neighbours freed in the order they were
 * handed out, or against it.  A block whose index is next to the one
 * before's starts a run, given back at once (slab_give_run); a block that
 * is not costs this loop a compare with the index before it (no load:
 * looking ahead at the next block's address instead made each block of a
 * random order 20 instructions dearer, mleak's give-back 4.8 M -> 7.2 M). */
SMP_HIDDEN void **slab_give_run(slab_t *sl, uintptr_t base, void **q, void **end, uint32_t idx, int dir);
static inline void **slab_give(slab_t *sl, uintptr_t base, void **v, void **end) {
  uint64_t *bits = sl->bits;
  const uint64_t recip = sl->recip;
  uint32_t low = sl->hint, prev = UINT32_MAX - 2; /* no block before */
  void **q = v;
  while (q < end) {
    uintptr_t off = (uintptr_t)*q - base;
    if (off >= SMP_SLAB_SIZE) break;
    uint32_t idx = (uint32_t)((off * recip) >> 32);
    if (idx / 64 < low) low = idx / 64;
    if (unlikely(((idx - prev + 1) & ~2u) == 0)) { /* idx is prev + 1 or prev - 1 */
      void **r = slab_give_run(sl, base, q, end, idx, (int)(idx - prev));
      if (r != q) {
        prev = idx + (uint32_t)((int)(idx - prev) * (int)(r - q - 1));
        q = r;
        continue;
      }
      /* one of them is free already: found block by block */
    }
    uint64_t *w = &bits[idx / 64], x = *w;
    if (unlikely((x >> (idx % 64)) & 1)) break;
    *w = x | (uint64_t)1 << (idx % 64);
    prev = idx;
    q++;
  }
  sl->hint = (uint16_t)low;
  sl->used -= (uint32_t)(q - v);
  return q;
}
/* Checked mode: fill the free block p of sl with the pattern that
 * slab_take and slab_retire verify. */
SMP_HIDDEN void slab_fill_free(const slab_t *sl, void *p);
/* An empty slab leaves its class: verified (checked mode), page-map entry
 * cleared, to the pool. */
SMP_HIDDEN void slab_retire(slab_t *sl, bool checked);

/* Are the blocks of class cls written whole (SMP_PROBE_FROM: classes of
 * smaller blocks always are; bigger ones once a probe showed it)?  Then
 * its slabs may be faulted in ahead, or dense.  A hint, read relaxed. */
SMP_HIDDEN bool slab_class_whole(unsigned cls);
/* The sparse slab sl of class cls, untouched ahead, just filled up: while
 * the class's use is not known it waits to be measured, and the slab that
 * waited before it is returned, to be measured now (NULL: none). */
SMP_HIDDEN slab_t *slab_class_full(slab_t *sl, unsigned cls);
/* Measure the probe slab sl of class cls (no lock held: a system call) and
 * settle the class's use.  sl may have left the class meanwhile (read
 * racily: a slab that changed hands is skipped). */
SMP_HIDDEN void slab_class_measure(slab_t *sl, unsigned cls);

#endif /* SMP_SLAB_H */
