/*
 * large.h - blocks beyond the slab classes (> SMP_SMALL_MAX, or aligned
 * beyond what a class can give).
 *
 * Up to SMP_RUN_MAX (1 MiB) a large block is a run of whole 64 KiB granules
 * carved from the slab chunks (chunk.c): no system call to get or free one,
 * and freed runs are reused, split, and purged like empty slabs.  Up to
 * SMP_EXTENT_MAX (32 MiB) a block comes from an arena (extent.c) where
 * reservations are made, its length rounded to 64 KiB.  Beyond that (or
 * aligned beyond 64 KiB, or with no arena) each is its own mapping, 64
 * KiB-aligned (or more, for larger alignments), so that no two blocks or
 * slabs share a page-map granule; growing and shrinking use mremap, so a
 * big buffer grows without a copy.  Either way the page-map entry holds
 * the length, and there is no header.
 *
 * A freed mapping of up to SMP_LARGE_CACHE_MAX bytes waits in a small cache
 * for a request it can hold (the smallest that fits; a much longer one
 * loses its tail), which then costs no page faults for the pages it already
 * has.  The purge policy (purge.c) empties it after the purge delay, or at
 * once past its budget.
 */
#ifndef SMP_LARGE_H
#define SMP_LARGE_H

#include "pagemap.h"

/* A large block of n bytes aligned to align (0: 64 KiB), or NULL when out
 * of memory (no reclaim here: the caller reclaims and retries).  *zeroed
 * (if not NULL) tells whether it is known to be all zero. */
SMP_HIDDEN void *large_alloc(size_t n, size_t align, bool *zeroed);
/* Free the large block p described by entry e (checked by the caller). */
SMP_HIDDEN void large_free(void *p, pagemap_entry_t e);
/* Grow or shrink in place (may_move false) or by moving (pages or a copy);
 * NULL if not possible, block unchanged. */
SMP_HIDDEN void *large_remap(void *p, pagemap_entry_t e, size_t n, size_t align, bool may_move);
/* The length of the large block described by e. */
SMP_HIDDEN size_t large_size(pagemap_entry_t e) __attribute__((pure));
/* Unmap cached freed mappings: those at least delay ms old, or all.
 * Returns the bytes unmapped. */
SMP_HIDDEN size_t large_cache_purge(bool all, uint32_t now, uint32_t delay);
/* Is the cache of freed mappings empty?  (A relaxed read: a hint.) */
SMP_HIDDEN extern _Atomic unsigned large_n_cached;
static inline bool large_cache_empty(void) {
  return atomic_load_explicit(&large_n_cached, memory_order_relaxed) == 0;
}
/* Large blocks handed out now: their number and bytes. */
SMP_HIDDEN void large_counters(size_t *blocks, size_t *bytes);
SMP_HIDDEN void large_fork_prepare(void);
SMP_HIDDEN void large_fork_parent(void);
SMP_HIDDEN void large_fork_child(void);

#endif /* SMP_LARGE_H */
