/*
 * extent.h - big blocks (over SMP_RUN_MAX, up to SMP_EXTENT_MAX) carved
 * from arenas of address space.
 *
 * An arena is a reservation of SMP_EXTENT_ARENA bytes (os_reserve: no
 * commit charge, never huge pages) cut into 64 KiB granules.  Its free
 * granules are a bit mask, so freed blocks coalesce with their free
 * neighbours, and a request takes the shortest free range that fits (the
 * lowest of equals), over every arena: a block freed and a block of
 * another size asked for next reuse the same pages instead of a munmap and
 * an mmap, and a freed block's pages stay resident ("dirty") until they
 * have waited the purge delay (purge.c).  A block's length is in its
 * page-map entry (PAGEMAP_MAP), as for a block mapped alone; extent_owns
 * tells the two apart.  Where reservations are refused (an address-space
 * or data limit, strict overcommit, memcheck) extent_alloc returns NULL
 * and big blocks are mapped alone (large.c).
 *
 * Locking: one lock guards every arena's masks and stamps; no system call
 * is made under it.  The list of arenas only grows (an arena is never
 * unmapped, its pages are returned), so it is read with no lock.
 */
#ifndef SMP_EXTENT_H
#define SMP_EXTENT_H

#include "base.h"

/* size bytes (a multiple of 64 KiB, at most SMP_EXTENT_MAX) from an arena,
 * or NULL (none can be reserved, or out of memory); *zero tells whether
 * they are known to be zero.  May map (no lock may be held). */
SMP_HIDDEN void *extent_alloc(size_t size, bool *zero);
/* Is p inside an arena (a block from extent_alloc)? */
SMP_HIDDEN bool extent_owns(const void *p);
/* The block p of size bytes goes back to its arena, its pages resident. */
SMP_HIDDEN void extent_free(void *p, size_t size);
/* Grow the block p of old bytes to size bytes in place, with the free
 * granules after it; false (unchanged) when they are not all free. */
SMP_HIDDEN bool extent_grow(void *p, size_t old, size_t size);
/* Free granules whose pages may be resident, over every arena. */
SMP_HIDDEN extern _Atomic size_t extent_n_dirty;
static inline size_t extent_dirty(void) {
  return atomic_load_explicit(&extent_n_dirty, memory_order_relaxed);
}
/* Return the pages of dirty granules at least delay ms old (0: any) until
 * at most floor are left.  No lock may be held.  Returns the bytes. */
SMP_HIDDEN size_t extent_purge(size_t floor, uint32_t now, uint32_t delay);
/* No arena from now on, and what the arenas hold past their highest
 * granule ever used is given back (mlockall would lock and fault in all of
 * it: override.c).  No lock may be held. */
SMP_HIDDEN void extent_unreserve(void);

SMP_HIDDEN void extent_fork_prepare(void);
SMP_HIDDEN void extent_fork_parent(void);
SMP_HIDDEN void extent_fork_child(void);

#endif /* SMP_EXTENT_H */
