/*
 * pagemap.c - the page map (see pagemap.h).
 *
 * The top level is a static array (512 KiB of zero BSS: only the pages that
 * are written become resident); each leaf covers 4 GiB of address space with
 * 65,536 entries (512 KiB), mapped on first use with a guard page on each
 * side (an overflowing user block cannot reach it) and never freed, so a
 * reader never sees a leaf vanish.
 */
#include "pagemap.h"
#include "os.h"

_Atomic(_Atomic pagemap_entry_t *) pagemap_top[1u << PAGEMAP_TOP_BITS];

#define PAGEMAP_LEAF_BYTES (sizeof(pagemap_entry_t) << PAGEMAP_LEAF_BITS)

static bool pagemap_leaf(uintptr_t top) {
  if (atomic_load_explicit(&pagemap_top[top], memory_order_acquire) != NULL) return true;
  _Atomic pagemap_entry_t *leaf = os_map_guarded(PAGEMAP_LEAF_BYTES);
  if (leaf == NULL) return false;
  _Atomic pagemap_entry_t *expect = NULL;
  if (!atomic_compare_exchange_strong_explicit(&pagemap_top[top], &expect, leaf, memory_order_acq_rel,
                                               memory_order_acquire))
    os_unmap_guarded(leaf, PAGEMAP_LEAF_BYTES); /* another thread installed one first */
  return true;
}

bool pagemap_reserve(uintptr_t p, size_t size) {
  uintptr_t last = p + size - 1;
  if (last < p || (last >> (PAGEMAP_TOP_BITS + 32)) != 0) return false;
  for (uintptr_t t = p >> 32; t <= last >> 32; t++)
    if (!pagemap_leaf(t)) return false;
  return true;
}

void pagemap_set(uintptr_t p, pagemap_entry_t entry) {
  _Atomic pagemap_entry_t *leaf = atomic_load_explicit(&pagemap_top[p >> 32], memory_order_acquire);
  SMP_ASSERT(leaf != NULL);
  atomic_store_explicit(&leaf[(p >> SMP_SLAB_SHIFT) & ((1u << PAGEMAP_LEAF_BITS) - 1)], entry,
                        memory_order_release);
}
