/*
 * pagemap.c - from an address to what smpalloc keeps there, in two loads.
 *
 * The top level is a static array (512 KiB of zero BSS: only the pages that
 * are written become resident); each leaf covers 4 GiB of address space with
 * 65,536 entries (512 KiB, mapped on first use and never freed, so a reader
 * never sees a leaf vanish).  free(), realloc() and malloc_usable_size() read
 * it without any lock; writers own the granules they write (a slab or large
 * block being created or destroyed), so entries never race.
 */
#include "internal.h"

_Atomic(_Atomic uint64_t *) pm_top[1u << PM_TOP_BITS];

#define PM_LEAF_BYTES (sizeof(uint64_t) << PM_LEAF_BITS)

static bool pagemap_leaf(uintptr_t top) {
  if (atomic_load_explicit(&pm_top[top], memory_order_acquire) != NULL) return true;
  _Atomic uint64_t *leaf = os_map(PM_LEAF_BYTES, SMP_PAGE_SIZE);
  if (leaf == NULL) return false;
  _Atomic uint64_t *expect = NULL;
  if (!atomic_compare_exchange_strong_explicit(&pm_top[top], &expect, leaf, memory_order_acq_rel,
                                               memory_order_acquire))
    os_unmap(leaf, PM_LEAF_BYTES); /* another thread installed it first */
  return true;
}

bool pagemap_reserve(uintptr_t p, size_t size) {
  uintptr_t last = p + size - 1;
  if (last < p || (last >> (PM_TOP_BITS + 32)) != 0) return false;
  for (uintptr_t t = p >> 32; t <= last >> 32; t++)
    if (!pagemap_leaf(t)) return false;
  return true;
}

void pagemap_set(uintptr_t p, uint64_t entry) {
  _Atomic uint64_t *leaf = atomic_load_explicit(&pm_top[p >> 32], memory_order_acquire);
  SMP_ASSERT(leaf != NULL);
  atomic_store_explicit(&leaf[(p >> SMP_SLAB_SHIFT) & ((1u << PM_LEAF_BITS) - 1)], entry,
                        memory_order_release);
}
