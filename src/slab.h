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

/* Clear the free key of block p as it is handed out, and return p.  (The
 * valgrind build: memcheck sees p free, or too short: quietly, track.h.) */
static inline void *slab_unkey(void *p) {
  track_quiet_begin();
  *(uint64_t *)p = 0;
  track_quiet_end();
  return p;
}

/* An empty slab of class cls owned by slot owner, from the pool (dense: a
 * slab about to be filled, chunk_take), set up and registered in the page
 * map; its zero field tells whether its memory is known to be zero.  Never
 * makes a system call: NULL when no granule is at hand. */
SMP_HIDDEN slab_t *slab_new(unsigned cls, unsigned owner, bool dense);
/* Take up to want free blocks, lowest address first, into out[]; returns
 * the count (fewer only when the slab runs out). */
SMP_HIDDEN unsigned slab_take(slab_t *sl, unsigned want, void **out, bool checked);
/* Blocks of one slab coming back (slot_give): what slab_give needs, kept
 * in registers for a run of blocks of that slab. */
typedef struct {
  uint64_t *bits;
  uintptr_t base;  /* the granule */
  uint32_t recip;
  uint32_t low;    /* the lowest bitmap word that gained a bit (or ~0) */
  uint32_t freed;  /* blocks given back, to count off sl->used */
} slab_giving_t;

static inline slab_giving_t slab_giving(const slab_t *sl, uintptr_t base) {
  return (slab_giving_t){sl->bits, base, sl->recip, UINT32_MAX, 0};
}
/* The block p comes back: its bit is set; false if it is free already (a
 * double free).  The block holds the free key already (free wrote it):
 * nothing is written into it here, under the lock, except checked mode's
 * fill (slab_fill_free).  Inline: slot_give runs it for every block a
 * thread cache gives back. */
static inline bool slab_give(slab_giving_t *g, void *p) {
  uint32_t idx = (uint32_t)(((uint64_t)((uintptr_t)p - g->base) * g->recip) >> 32);
  uint64_t bit = (uint64_t)1 << (idx % 64), *w = &g->bits[idx / 64];
  if (unlikely(*w & bit)) return false;
  *w |= bit;
  if (idx / 64 < g->low) g->low = idx / 64;
  g->freed++;
  return true;
}
/* Checked mode: fill the free block p of sl with the pattern that
 * slab_take and slab_retire verify. */
SMP_HIDDEN void slab_fill_free(const slab_t *sl, void *p);
/* An empty slab leaves its class: verified (checked mode), page-map entry
 * cleared, to the pool. */
SMP_HIDDEN void slab_retire(slab_t *sl, bool checked);

#endif /* SMP_SLAB_H */
