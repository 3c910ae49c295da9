/*
 * slot.c - slots: SmpAllocator's unit of sharing.
 *
 * There are min(CPUs, SMP_MAX_SLOTS) slots.  Each holds a lock and, per size
 * class, a free list and a bump region (bin_t).  A thread remembers a slot
 * index (thread-local, starts at 0); when that slot's lock is taken it moves
 * on with try-lock to the next one and remembers where it succeeded, so
 * threads spread over the slots by themselves and no thread-exit hook is
 * needed.  After SMP_SPIN_ROUNDS full rounds of failed try-locks a thread
 * sleeps on its slot's lock (futex) instead of spinning: more threads than
 * slots cost waiting, not CPU.
 *
 * Freed blocks go to the freeing thread's slot.  When an allocating thread's
 * bin is empty it first steals a whole free list of the same class from
 * another slot, so a producer/consumer pair recycles blocks instead of
 * growing the heap, and only then takes a new slab.
 */
#include <pthread.h>

#include "internal.h"

slot_t smp_slots[SMP_MAX_SLOTS];
_Atomic unsigned smp_nslots = 1;  /* 1 until slot_init(): early calls all use slot 0 */
__thread unsigned smp_tl_slot;

static bool slot_trylock(slot_t *s) {
  int expect = 0;
  return atomic_compare_exchange_strong_explicit(&s->lock, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Sleep until the lock is ours (a futex mutex: 2 marks "someone waits"). */
static void slot_lock_blocking(slot_t *s) {
  if (slot_trylock(s)) return;
  while (atomic_exchange_explicit(&s->lock, 2, memory_order_acquire) != 0)
    os_futex_wait(&s->lock, 2);
}

void slot_wake(slot_t *s) { os_futex_wake(&s->lock, 1); }

slot_t *slot_lock_slow(unsigned i) {
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  for (unsigned tries = 0; tries < SMP_SPIN_ROUNDS * n; tries++) {
    i = i + 1 < n ? i + 1 : 0;
    if (slot_trylock(&smp_slots[i])) {
      smp_tl_slot = i;
      return &smp_slots[i];
    }
  }
  /* Every slot is busy: more threads want one than there are slots. */
  if (i >= n) i = 0;
  slot_lock_blocking(&smp_slots[i]);
  smp_tl_slot = i;
  return &smp_slots[i];
}

void slot_init(void) {
  static _Atomic int done;
  if (atomic_load_explicit(&done, memory_order_acquire)) return;
  unsigned n = os_cpu_count();
  if (n > SMP_MAX_SLOTS) n = SMP_MAX_SLOTS;
  /* Only grows (from 1), so an index a thread already holds stays valid. */
  unsigned cur = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  while (cur < n && !atomic_compare_exchange_weak_explicit(&smp_nslots, &cur, n,
                                                           memory_order_relaxed,
                                                           memory_order_relaxed)) {
  }
  atomic_store_explicit(&done, 1, memory_order_release);
}

/* How many other slots a refill looks at before it takes a new slab. */
#define SLOT_STEAL_PROBES 8u

void *slot_install(slot_t *s, unsigned cls, void *slab, void **populate) {
  bin_t *b = &s->bins[cls];
  /* A bin that already used up a slab is busy: fault the next one in with
   * one system call rather than a page fault per page.  A first slab is
   * faulted lazily, so a class used once costs a page, not 64 KiB. */
  *populate = b->end != 0 ? slab : NULL;
  b->bump = (uintptr_t)slab + smp_class[cls].size;
  b->end = (uintptr_t)slab + smp_class[cls].limit;
  return slab;
}

void *slot_refill(slot_t *s, unsigned cls, bool *zeroed, void **populate) {
  bin_t *b = &s->bins[cls];
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  unsigned me = (unsigned)(s - smp_slots);
  unsigned probes = n - 1 < SLOT_STEAL_PROBES ? n - 1 : SLOT_STEAL_PROBES;
  for (unsigned k = 1; k <= probes; k++) {
    slot_t *o = &smp_slots[(me + k) % n];
    /* Try-lock only: holding our lock, we must never wait for another. */
    if (!slot_trylock(o)) continue;
    void *list = o->bins[cls].free;
    o->bins[cls].free = NULL;
    slot_unlock(o);
    if (list != NULL) {
      b->free = *(void **)list;
      *zeroed = false;
      *populate = NULL;
      return list;
    }
  }
  *populate = NULL;
  void *slab = slab_try_new(cls);
  if (slab == NULL) return NULL;
  *zeroed = true;
  return slot_install(s, cls, slab, populate);
}

/* fork(): take every lock in a fixed order (slots, then the slab lock) so
 * the child starts with consistent lists, and can allocate at once. */
static void slot_fork_prepare(void) {
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  for (unsigned i = 0; i < n; i++) slot_lock_blocking(&smp_slots[i]);
  slab_fork_prepare();
}
static void slot_fork_parent(void) {
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  slab_fork_parent();
  for (unsigned i = 0; i < n; i++) slot_unlock(&smp_slots[i]);
}
static void slot_fork_child(void) {
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  slab_fork_child();
  for (unsigned i = 0; i < n; i++) atomic_store_explicit(&smp_slots[i].lock, 0, memory_order_relaxed);
}

/* Runs after libc is initialised, before main: the place for set-up that
 * may allocate (pthread_atfork does). */
__attribute__((constructor)) static void slot_constructor(void) {
  slot_init();
  pthread_atfork(slot_fork_prepare, slot_fork_parent, slot_fork_child);
}
