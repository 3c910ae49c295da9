/*
 * slab.c - 64 KiB slabs for the small classes.
 *
 * Slabs are carved in address order from chunks of SMP_CHUNK_SIZE bytes,
 * mapped 64 KiB-aligned, so each slab is 64 KiB-aligned and a block's slab is
 * its address with the low 16 bits cleared.  A slab carries no header: its
 * class lives in the page map, and its state in the bin of the slot that is
 * bump-allocating from it.  Memory is only touched when a block is handed
 * out, so an unused tail of a chunk costs address space, not RSS.
 *
 * Lock order: a slot lock may be held when slab_lock is taken, never the
 * other way round.
 */
#include "internal.h"

static _Atomic int slab_lock;
static uintptr_t chunk_next, chunk_end;  /* the unused part of the current chunk */

static void slab_lock_acquire(void) {
  int expect = 0;
  while (!atomic_compare_exchange_weak_explicit(&slab_lock, &expect, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
    if (expect == 1) {
      /* Mark that someone waits, then sleep until the holder wakes us. */
      expect = atomic_exchange_explicit(&slab_lock, 2, memory_order_acquire);
      if (expect == 0) return; /* got it, with the waiter mark set: harmless */
      os_futex_wait(&slab_lock, 2);
    }
    expect = 0;
  }
}

static void slab_lock_release(void) {
  if (atomic_exchange_explicit(&slab_lock, 0, memory_order_release) == 2)
    os_futex_wake(&slab_lock, 1);
}

/* Spare slabs: whole, unused, zero but for their first word, which links
 * them.  Only a refill that lost a race puts one here (see slot.c). */
static uintptr_t spare;

/* Take a slab from the spares or the current chunk, under slab_lock. */
static uintptr_t slab_take(void) {
  uintptr_t s = 0;
  if (spare != 0) {
    s = spare;
    spare = *(uintptr_t *)s;
    *(uintptr_t *)s = 0;
  } else if (chunk_next != chunk_end) {
    s = chunk_next;
    chunk_next += SMP_SLAB_SIZE;
  }
  return s;
}

void *slab_try_new(unsigned cls) {
  slab_lock_acquire();
  uintptr_t s = slab_take();
  slab_lock_release();
  if (s != 0) pagemap_set(s, pm_slab_entry(cls));
  return (void *)s;
}

void *slab_new(unsigned cls) {
  slab_lock_acquire();
  uintptr_t s = slab_take();
  if (s == 0) {
    /* A system call, under slab_lock only (never a slot lock: the caller
     * has let its slot go), once per SMP_CHUNK_SIZE / 64 KiB slabs. */
    void *c = os_map(SMP_CHUNK_SIZE, SMP_SLAB_SIZE);
    if (c == NULL || !pagemap_reserve((uintptr_t)c, SMP_CHUNK_SIZE)) {
      if (c != NULL) os_unmap(c, SMP_CHUNK_SIZE);
      slab_lock_release();
      return NULL;
    }
    chunk_next = (uintptr_t)c;
    chunk_end = chunk_next + SMP_CHUNK_SIZE;
    s = slab_take();
  }
  slab_lock_release();
  pagemap_set(s, pm_slab_entry(cls));
  return (void *)s;
}

void slab_spare(void *slab) {
  pagemap_set((uintptr_t)slab, 0);
  slab_lock_acquire();
  *(uintptr_t *)slab = spare;
  spare = (uintptr_t)slab;
  slab_lock_release();
}

void slab_fork_prepare(void) { slab_lock_acquire(); }
void slab_fork_parent(void) { slab_lock_release(); }
void slab_fork_child(void) { atomic_store_explicit(&slab_lock, 0, memory_order_relaxed); }
