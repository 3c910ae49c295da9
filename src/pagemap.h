/*
 * pagemap.h - from an address to what smpalloc keeps there, in one load
 * (the flat map) or two.
 *
 * One 64-bit entry per 64 KiB granule of the 48-bit address space, in a
 * two-level table: pagemap_top[addr >> 32] -> leaf[(addr >> 16) & 0xffff].
 * The leaves of the low 128 TiB lie back to back in the flat map, when
 * there is one (below), so that there free reads entry addr >> 16 of one
 * array.  An entry is one of (the low two bits tell which):
 *   0                      nothing of ours (a pooled granule, the inside
 *                          of a large block, foreign memory)
 *   desc | PAGEMAP_SLAB         a slab of a size class; desc is its descriptor
 *                          (slab_t, 64-byte aligned), so desc = e - PAGEMAP_SLAB
 *   desc | PAGEMAP_RUN          the first granule of a run (a large block of up
 *                          to SMP_RUN_MAX carved from a chunk)
 *   length | PAGEMAP_MAP        the first granule of a large block mapped alone,
 *                          length bytes long (a multiple of 64 KiB)
 * Invariant: an entry is non-zero exactly while the slab or large block it
 * describes belongs to a size class or a user; only its owner writes it
 * (the thread creating or destroying that slab or block), so writers never
 * race, and readers (free, realloc, malloc_usable_size) take no lock.
 */
#ifndef SMP_PAGEMAP_H
#define SMP_PAGEMAP_H

#include "base.h"

#define PAGEMAP_LEAF_BITS 16
#define PAGEMAP_TOP_BITS 16

typedef uint64_t pagemap_entry_t;
enum { PAGEMAP_KIND = 3, PAGEMAP_SLAB = 1, PAGEMAP_RUN = 2, PAGEMAP_MAP = 3 };

struct slab_s;

static inline pagemap_entry_t pagemap_slab(const struct slab_s *sl) { return (uintptr_t)sl | PAGEMAP_SLAB; }
static inline pagemap_entry_t pagemap_run(const struct slab_s *run) { return (uintptr_t)run | PAGEMAP_RUN; }
static inline pagemap_entry_t pagemap_map(size_t length) { return (pagemap_entry_t)length | PAGEMAP_MAP; }
static inline unsigned pagemap_kind(pagemap_entry_t e) { return (unsigned)(e & PAGEMAP_KIND); }
static inline struct slab_s *pagemap_desc(pagemap_entry_t e) {
  return (struct slab_s *)(uintptr_t)(e & ~(pagemap_entry_t)PAGEMAP_KIND);
}
static inline size_t pagemap_length(pagemap_entry_t e) { return (size_t)(e & ~(pagemap_entry_t)PAGEMAP_KIND); }

SMP_HIDDEN extern _Atomic(_Atomic pagemap_entry_t *) pagemap_top[1u << PAGEMAP_TOP_BITS];

static inline pagemap_entry_t pagemap_get(const void *p) {
  uintptr_t a = (uintptr_t)p, t = a >> 32;
  if (unlikely(t >= (1u << PAGEMAP_TOP_BITS))) return 0; /* past 48 bits: not ours */
  _Atomic pagemap_entry_t *leaf = atomic_load_explicit(&pagemap_top[t], memory_order_acquire);
  if (unlikely(leaf == NULL)) return 0;
  /* A leaf covers the low 32 bits of an address (static assert below): its
   * index is those bits over the granule, one 32-bit shift. */
  return atomic_load_explicit(&leaf[(uint32_t)a >> SMP_SLAB_SHIFT], memory_order_acquire);
}
_Static_assert(PAGEMAP_LEAF_BITS + SMP_SLAB_SHIFT == 32, "a leaf covers 4 GiB: pagemap_get's index");

/* The flat map: the leaves of the low 2^PAGEMAP_FLAT_BITS bytes of address
 * space, a process's whole (47 bits on x86-64, where the kernel maps
 * nothing higher unless asked; 48 on aarch64), back to back in one
 * reservation (16 or 32 GiB of address space, read-only but for the leaves
 * in use), so that free finds an entry with one shift and one load, no
 * leaf pointer and no NULL test.  granules is the number of entries it
 * has, set once (release) after base; 0 while there is none: before the
 * first leaf, or for good when the kernel refused the reservation or the
 * process has an address-space limit (pagemap.c). */
#if defined(__x86_64__)
#define PAGEMAP_FLAT_BITS 47
#else
#define PAGEMAP_FLAT_BITS 48
#endif
typedef struct {
  uintptr_t granules; /* written once, with __atomic_store_n (release) */
  _Atomic pagemap_entry_t *base;
} pagemap_flat_t;
SMP_HIDDEN extern pagemap_flat_t pagemap_flat;

/* The entry of p into *e from the flat map; false when p lies beyond it
 * (or there is none): then only pagemap_get knows. */
static inline bool pagemap_get_flat(const void *p, pagemap_entry_t *e) {
  uintptr_t g = (uintptr_t)p >> SMP_SLAB_SHIFT;
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  /* x86 keeps loads in order: a plain load and a compiler barrier make an
   * acquire load whose count the compare reads from memory (base.h).
   * (ThreadSanitizer builds take the acquire load below, which it sees.) */
  if (unlikely(g >= SMP_RACY_LOAD(pagemap_flat.granules))) return false;
  __asm__ volatile("" ::: "memory");
#else
  if (unlikely(g >= __atomic_load_n(&pagemap_flat.granules, __ATOMIC_ACQUIRE))) return false;
#endif
  *e = atomic_load_explicit(&pagemap_flat.base[g], memory_order_acquire);
  return true;
}

/* Try the flat map now, if it was not tried yet (the first leaf does:
 * a program whose allocations never reach smpalloc, under memcheck say,
 * reserves nothing): whether there is one. */
SMP_HIDDEN bool pagemap_init(void);
/* Make sure leaves exist for [p, p+size); false if out of memory.  May map
 * (no lock may be held). */
SMP_HIDDEN bool pagemap_reserve(uintptr_t p, size_t size);
/* Set the entry of the granule holding p (its leaf must be reserved). */
SMP_HIDDEN void pagemap_set(uintptr_t p, pagemap_entry_t entry);
SMP_HIDDEN void pagemap_fork_prepare(void);
SMP_HIDDEN void pagemap_fork_parent(void);
SMP_HIDDEN void pagemap_fork_child(void);

#endif /* SMP_PAGEMAP_H */
