/*
 * large.c - blocks beyond the slab classes (> SMP_SMALL_MAX, or aligned
 * beyond what a class can give).
 *
 * Each is its own mapping, 64 KiB-aligned (or more, for larger alignments),
 * its length rounded to 64 KiB, so that no two of our blocks or slabs ever
 * share a page-map granule.  The block's page-map entry holds the mapping's
 * length: there is no header, and the user's pointer is the mapping's start.
 * Growing and shrinking use mremap, so a big buffer grows without a copy.
 */
#include "internal.h"

#define LARGE_GRANULE SMP_SLAB_SIZE

/* n rounded up to a whole granule; 0 if that overflows. */
static size_t large_round(size_t n) {
  if (n > SIZE_MAX - (LARGE_GRANULE - 1)) return 0;
  return (n + LARGE_GRANULE - 1) & ~(size_t)(LARGE_GRANULE - 1);
}

void *large_alloc(size_t n, size_t align) {
  size_t size = large_round(n);
  if (size == 0 || size > ((size_t)1 << 46)) return NULL;
  if (align < LARGE_GRANULE) align = LARGE_GRANULE;
  void *p = os_map(size, align);
  if (p == NULL) return NULL;
  if (!pagemap_reserve((uintptr_t)p, size)) {
    os_unmap(p, size);
    return NULL;
  }
  pagemap_set((uintptr_t)p, (uint64_t)size | PM_LARGE);
  stats_mapped(size);
  stats_large(size, 1);
  return p;
}

void large_free(void *p, uint64_t entry) {
  /* Clear the entry first: once unmapped, the range may be mapped again by
   * anyone, us included. */
  pagemap_set((uintptr_t)p, 0);
  os_unmap(p, large_size(entry));
  stats_unmapped(large_size(entry));
  stats_large(large_size(entry), -1);
}

void *large_remap(void *p, uint64_t entry, size_t n, size_t align, bool may_move) {
  size_t old = large_size(entry), size = large_round(n);
  if (size == 0 || size > ((size_t)1 << 46)) return NULL;
  if (size == old) return p;
  if (os_resize(p, old, size)) {
    pagemap_set((uintptr_t)p, (uint64_t)size | PM_LARGE);
    stats_large(old, -1);
    stats_large(size, 1);
    if (size > old) stats_mapped(size - old); else stats_unmapped(old - size);
    return p;
  }
  if (!may_move) return NULL;
  /* Move: take an aligned place, described in the page map before anything
   * moves, then move the pages into it. */
  void *q = large_alloc(size, align);
  if (q == NULL) return NULL;
  /* Clear p's entry while its pages are still ours: once moved, the range
   * is free and may be handed out (and described) again at once. */
  pagemap_set((uintptr_t)p, 0);
  if (!os_move(p, old, size, q)) {
    pagemap_set((uintptr_t)p, entry);
    large_free(q, (uint64_t)size | PM_LARGE);
    return NULL;
  }
  /* The old mapping is gone with the move. */
  stats_unmapped(old);
  stats_large(old, -1);
  return q;
}
