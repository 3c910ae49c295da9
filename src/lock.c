/*
 * lock.c - the contended path of the mutex (lock.h).
 */
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
    if (atomic_load_explicit(l, memory_order_relaxed) == 0 && lock_try(l)) return true;
  }
  return false;
}

void lock_wait(lock_t *l) {
  if (lock_try_spin(l)) return;
  while (atomic_exchange_explicit(l, 2, memory_order_acquire) != 0) os_futex_wait(l, 2);
}
