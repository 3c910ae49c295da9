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
/* A thread's cache of freed runs (tcache.c owns it, in the thread's cache;
 * only its thread, inside a slow path, or an emptier holding that cache's
 * steal lock, touches it): runs of up to `limit` granules in all,
 * by length, newest first, linked through their head descriptors' next.
 * A run freed and asked for again by the same thread (a buffer, a growing
 * array's old copy) costs no lock and no walk of the pool; it keeps its
 * pages (as the pool's recent runs do, chunk.c) and its page-map entry is
 * cleared meanwhile, so a free of it is caught as a free of a block not
 * handed out. */
typedef struct large_runs_s {
  struct slab_s *head[SMP_RUN_KMAX + 1];
  unsigned granules; /* cached, in all */
  unsigned limit;    /* the most it may hold (its owner sets it) */
} large_runs_t;
/* A run of n bytes from rc (exactly its length), or NULL. */
SMP_HIDDEN void *large_runs_take(large_runs_t *rc, size_t n);
/* Keep the freed large block of entry e (checked by the caller) in rc if
 * it is a run that fits (the longest cached runs give room first); false
 * if it was not kept. */
SMP_HIDDEN bool large_runs_put(large_runs_t *rc, pagemap_entry_t e);
/* The thread asks for a run of k granules that its cache cannot give:
 * longer than every run it holds, those next to free room or to another
 * cached run go back to the pool (they merge there into room for it);
 * else, with more than half the limit cached, the longest goes (a cache
 * that does not hold what its thread uses empties). */
SMP_HIDDEN void large_runs_miss(large_runs_t *rc, unsigned k);
/* Give every run of rc back to the pool. */
SMP_HIDDEN void large_runs_flush(large_runs_t *rc);
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
