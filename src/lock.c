/*
 * lock.c - the contended path of the mutex (lock.h).
 */
#include <limits.h>

#include "lock.h"

static _Atomic unsigned lock_spin;

void lock_set_spin(unsigned cpus) {
  atomic_store_explicit(&lock_spin, cpus > 1 ? SMP_LOCK_SPIN : 0, memory_order_relaxed);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

bool lock_try_spin(lock_t *l) {
  for (unsigned i = atomic_load_explicit(&lock_spin, memory_order_relaxed); i > 0; i--) {
    cpu_relax();
    if (atomic_load_explicit(&l->word, memory_order_relaxed) == 0 && lock_cas(l)) return true;
  }
  return false;
}

/* ---- fork safety (lock.h) ------------------------------------------------ */

_Atomic int lock_fork_ready; /* 0 not registered, 1 being registered, 2 registered */
static void (*_Atomic fork_hook)(void);
static __thread bool registering; /* this thread is in the hook (it may allocate) */

void lock_set_fork_hook(void (*hook)(void)) { atomic_store_explicit(&fork_hook, hook, memory_order_release); }

void lock_fork_guard(void) {
  if (registering || lock_one_thread()) return;
  void (*hook)(void) = atomic_load_explicit(&fork_hook, memory_order_acquire);
  if (hook == NULL) return; /* start-up is not done: its constructor registers */
  int expect = 0;
  if (atomic_compare_exchange_strong(&lock_fork_ready, &expect, 1)) {
    registering = true;
    hook();
    registering = false;
    atomic_store_explicit(&lock_fork_ready, 2, memory_order_release);
    os_futex_wake(&lock_fork_ready, INT_MAX);
    return;
  }
  /* Another thread registers (it may allocate meanwhile): sleep, not spin,
   * so that on one CPU it gets to run. */
  for (int v; (v = atomic_load_explicit(&lock_fork_ready, memory_order_acquire)) != 2;)
    os_futex_wait(&lock_fork_ready, v);
}

__thread char lock_self;

void lock_wait(lock_t *l) {
  /* This thread holds it: a call from a signal handler into a path its
   * interrupted thread was in, that no slow path's guard caught
   * (reentry.h).  Waiting would never end. */
  if (unlikely(atomic_load_explicit(&l->owner, memory_order_relaxed) == &lock_self))
    os_fatal("malloc", "re-entered (a signal handler's call?) while this thread holds the lock at", l);
  if (lock_try_spin(l)) return;
  while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0) os_futex_wait(&l->word, 2);
  lock_own(l);
}
