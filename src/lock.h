/*
 * lock.h - the one mutex of smpalloc, used by every module.
 *
 * A futex word: 0 free, 1 held, 2 held with (possible) waiters.  Taken
 * uncontended it costs one atomic instruction each way and no system call.
 * Contended, lock_wait polls it lock_spin times with a CPU pause (our
 * sections are short: a batch of blocks, a list splice), then sleeps on the
 * futex.  The spin count is 0 with one CPU, where spinning only delays the
 * holder; init sets it from the CPU count.
 */
#ifndef SMP_LOCK_H
#define SMP_LOCK_H

#include "os.h"

typedef _Atomic int lock_t;

static inline bool lock_try(lock_t *l) {
  int expect = 0;
  return atomic_compare_exchange_strong_explicit(l, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed);
}
/* Poll the held lock l (SMP_LOCK_SPIN times with more than one CPU, else
 * not at all) and take it if it comes free: true when taken. */
SMP_HIDDEN bool lock_try_spin(lock_t *l);
/* The contended path of lock_take (lock.c). */
SMP_HIDDEN void lock_wait(lock_t *l);
static inline void lock_take(lock_t *l) {
  if (likely(lock_try(l))) return;
  lock_wait(l);
}
static inline void lock_drop(lock_t *l) {
  if (unlikely(atomic_exchange_explicit(l, 0, memory_order_release) == 2)) os_futex_wake(l, 1);
}
/* In a child after fork: the lock is free (the parent's holder was the
 * forking thread itself, in the prepare handler). */
static inline void lock_reset(lock_t *l) { atomic_store_explicit(l, 0, memory_order_relaxed); }

/* Polls before a contended lock sleeps (SMP_LOCK_SPIN with more than one
 * CPU, else 0). */
SMP_HIDDEN void lock_set_spin(unsigned cpus);

#endif /* SMP_LOCK_H */
