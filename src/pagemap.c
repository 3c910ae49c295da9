/*
 * pagemap.c - the page map (see pagemap.h).
 *
 * The top level is a static array (512 KiB of zero BSS: only the pages that
 * are written become resident); each leaf covers 4 GiB of address space with
 * 65,536 entries (512 KiB), made writable on first use and never freed, so a
 * reader never sees a leaf vanish.  The leaves of the low 128 TiB (256 TiB
 * on aarch64: a process's address space) lie back to back in one
 * read-only reservation, the flat map, when the kernel grants it; leaves
 * beyond it, or all of them without it, are mapped alone.  Either way a
 * leaf has memory no user block can reach on both sides: guard pages, or
 * the reservation's read-only pages.
 */
#include "pagemap.h"
#include "lock.h"
#include "os.h"
#include "track.h"

_Atomic(_Atomic pagemap_entry_t *) pagemap_top[1u << PAGEMAP_TOP_BITS];
pagemap_flat_t pagemap_flat;

#define PAGEMAP_LEAF_BYTES (sizeof(pagemap_entry_t) << PAGEMAP_LEAF_BITS)
#define PAGEMAP_FLAT_LEAVES (1u << (PAGEMAP_FLAT_BITS - 32))

/* The flat map is tried once, at the first leaf, so that no leaf of its
 * range is ever made outside it; its lock also keeps two threads from
 * opening one leaf twice.  Taken with no other lock held, or last (fork). */
static lock_t flat_lock;
static bool flat_tried;

/* Reserve the flat map, the first time only (flat_lock held). */
static void flat_try(void) {
  if (flat_tried) return;
  flat_tried = true;
  /* The valgrind build under memcheck: its leak check would scan the
   * whole reservation (16 GiB), so two levels. */
  if (track_running()) return;
  pagemap_flat.base = os_reserve_readonly(PAGEMAP_FLAT_LEAVES * PAGEMAP_LEAF_BYTES);
  if (pagemap_flat.base != NULL)
    __atomic_store_n(&pagemap_flat.granules, (uintptr_t)PAGEMAP_FLAT_LEAVES << PAGEMAP_LEAF_BITS,
                     __ATOMIC_RELEASE);
}

bool pagemap_init(void) {
  lock_take(&flat_lock);
  flat_try();
  lock_drop(&flat_lock);
  return pagemap_flat.base != NULL;
}

/* Leaf top (below PAGEMAP_FLAT_LEAVES) in the flat map, made writable and
 * installed: 1; 0 if the kernel refuses; -1 with no flat map. */
static int flat_leaf(uintptr_t top) {
  lock_take(&flat_lock);
  flat_try();
  int ok = -1;
  if (pagemap_flat.base != NULL) {
    _Atomic pagemap_entry_t *leaf = pagemap_flat.base + (top << PAGEMAP_LEAF_BITS);
    ok = atomic_load_explicit(&pagemap_top[top], memory_order_acquire) != NULL ||
         os_commit(leaf, PAGEMAP_LEAF_BYTES);
    if (ok) atomic_store_explicit(&pagemap_top[top], leaf, memory_order_release);
  }
  lock_drop(&flat_lock);
  return ok;
}

static bool pagemap_leaf(uintptr_t top) {
  if (atomic_load_explicit(&pagemap_top[top], memory_order_acquire) != NULL) return true;
  int flat = top < PAGEMAP_FLAT_LEAVES ? flat_leaf(top) : -1;
  if (flat >= 0) return flat;
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

void pagemap_fork_prepare(void) { lock_take(&flat_lock); }
void pagemap_fork_parent(void) { lock_drop(&flat_lock); }
void pagemap_fork_child(void) { lock_reset(&flat_lock); }
