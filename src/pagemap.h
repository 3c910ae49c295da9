/*
 * pagemap.h - from an address to what smpalloc keeps there, in two loads.
 *
 * One 64-bit entry per 64 KiB granule of the 48-bit address space, in a
 * two-level table: pm_top[addr >> 32] -> leaf[(addr >> 16) & 0xffff].
 * An entry is one of (the low two bits tell which):
 *   0                      nothing of ours (a pooled granule, the inside
 *                          of a large block, foreign memory)
 *   desc | PM_SLAB         a slab of a size class; desc is its descriptor
 *                          (slab_t, 64-byte aligned), so desc = e - PM_SLAB
 *   desc | PM_RUN          the first granule of a run (a large block of up
 *                          to SMP_RUN_MAX carved from a chunk)
 *   length | PM_MAP        the first granule of a large block mapped alone,
 *                          length bytes long (a multiple of 64 KiB)
 * Invariant: an entry is non-zero exactly while the slab or large block it
 * describes belongs to a size class or a user; only its owner writes it
 * (the thread creating or destroying that slab or block), so writers never
 * race, and readers (free, realloc, malloc_usable_size) take no lock.
 */
#ifndef SMP_PAGEMAP_H
#define SMP_PAGEMAP_H

#include "base.h"

#define PM_LEAF_BITS 16
#define PM_TOP_BITS 16

typedef uint64_t pm_entry_t;
enum { PM_KIND = 3, PM_SLAB = 1, PM_RUN = 2, PM_MAP = 3 };

struct slab_s;

static inline pm_entry_t pm_slab_entry(const struct slab_s *sl) { return (uintptr_t)sl | PM_SLAB; }
static inline pm_entry_t pm_run_entry(const struct slab_s *run) { return (uintptr_t)run | PM_RUN; }
static inline pm_entry_t pm_map_entry(size_t length) { return (pm_entry_t)length | PM_MAP; }
static inline unsigned pm_kind(pm_entry_t e) { return (unsigned)(e & PM_KIND); }
static inline struct slab_s *pm_desc(pm_entry_t e) {
  return (struct slab_s *)(uintptr_t)(e & ~(pm_entry_t)PM_KIND);
}
static inline size_t pm_map_length(pm_entry_t e) { return (size_t)(e & ~(pm_entry_t)PM_KIND); }

SMP_HIDDEN extern _Atomic(_Atomic pm_entry_t *) pm_top[1u << PM_TOP_BITS];

static inline pm_entry_t pagemap_get(const void *p) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> (PM_TOP_BITS + 32))) return 0;
  _Atomic pm_entry_t *leaf = atomic_load_explicit(&pm_top[a >> 32], memory_order_acquire);
  if (unlikely(leaf == NULL)) return 0;
  return atomic_load_explicit(&leaf[(a >> SMP_SLAB_SHIFT) & ((1u << PM_LEAF_BITS) - 1)],
                              memory_order_acquire);
}

/* Make sure leaves exist for [p, p+size); false if out of memory.  May map
 * (no lock may be held). */
SMP_HIDDEN bool pagemap_reserve(uintptr_t p, size_t size);
/* Set the entry of the granule holding p (its leaf must be reserved). */
SMP_HIDDEN void pagemap_set(uintptr_t p, pm_entry_t entry);

#endif /* SMP_PAGEMAP_H */
