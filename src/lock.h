/*
 * lock.h - the one mutex of smpalloc, used by every module.
 *
 * A futex word: 0 free, 1 held, 2 held with (possible) waiters.  Taken
 * uncontended it costs one atomic instruction each way and no system call
 * (none at all while the process has one thread: lock_try).
 * Contended, lock_wait polls it lock_spin times with a CPU pause (our
 * sections are short: a batch of blocks, a list splice), then sleeps on the
 * futex.  The spin count is 0 with one CPU, where spinning only delays the
 * holder; init sets it from the CPU count.
 */
#ifndef SMP_LOCK_H
#define SMP_LOCK_H

#include "os.h"

/* word: the futex; owner: the holding thread's lock_self (0 when free),
 * so that a thread that would wait for a lock it holds itself - a signal
 * handler's call into a path its interrupted thread was in - is caught
 * (lock_wait: a message and an abort, never a hang). */
typedef struct {
  _Atomic int word;
  const char *_Atomic owner;
} lock_t;
SMP_HIDDEN extern __thread char lock_self;
static inline void lock_own(lock_t *l) { atomic_store_explicit(&l->owner, &lock_self, memory_order_relaxed); }

/* Fork safety, put off until it is needed.  A fork copies the allocator's
 * locks as they are: one that another thread holds stays held in the child
 * for good.  So fork handlers (init.c) take every lock before a fork and
 * free them after; but registering them (pthread_atfork) maps a page of
 * libc a single-threaded program may never use (why that costs: os.h;
 * about 80 KB measured, docs/design.md "Start-up"), and
 * with one thread no other thread can hold a lock when it forks.  So the
 * handlers are registered by the first lock taken once the process has a
 * second thread (glibc's __libc_single_threaded): lock_fork_guard, at
 * every lock.  A thread that registers holds no lock then: when it took its
 * last one the process had one thread, itself, and it has created none
 * since, being inside the allocator; so does one that waits for another
 * thread to finish registering (on the futex of lock_fork_ready, 2 once
 * registered).  In practice the first pthread_create registers them: its
 * calloc of the new thread's TLS is the first allocation made with two
 * threads. */
SMP_HIDDEN extern _Atomic int lock_fork_ready;
SMP_HIDDEN void lock_fork_guard(void);
/* glibc's flag: true until the process creates its first thread, then false
 * for good.  Without it (another libc) the process counts as threaded. */
extern char __libc_single_threaded __attribute__((weak));
static inline bool lock_one_thread(void) { return &__libc_single_threaded != NULL && __libc_single_threaded; }
/* The registration (init.c sets it when start-up is done; until then the
 * guard does nothing). */
SMP_HIDDEN void lock_set_fork_hook(void (*hook)(void));

static inline bool lock_cas(lock_t *l) {
  int expect = 0;
  if (!atomic_compare_exchange_strong_explicit(&l->word, &expect, 1, memory_order_acquire, memory_order_relaxed))
    return false;
  lock_own(l);
  return true;
}
/* With one thread (glibc's word for it: non-zero means "definitely
 * single-threaded", and only this thread could create another) no other
 * thread can hold a lock or wait for one, so a lock is taken and freed with
 * plain stores, as glibc's malloc does: no locked instruction, which waits
 * for every store before it to reach the cache (glibc-simple, every block
 * through a slab in batches under a slot's lock: 0.57x -> 0.56x glibc's
 * time).  A held lock (a signal handler that interrupted its holder) is
 * still busy.  The signal fences keep the compiler from moving the
 * section's accesses past them. */
static inline bool lock_try(lock_t *l) {
  if (lock_one_thread()) {
    if (atomic_load_explicit(&l->word, memory_order_relaxed) != 0) return false;
    atomic_store_explicit(&l->word, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_acquire);
    lock_own(l);
    return true;
  }
  if (unlikely(atomic_load_explicit(&lock_fork_ready, memory_order_relaxed) != 2)) lock_fork_guard();
  return lock_cas(l);
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
  atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
  if (lock_one_thread()) { /* no other thread: none waits (lock_try) */
    atomic_signal_fence(memory_order_release);
    atomic_store_explicit(&l->word, 0, memory_order_relaxed);
    return;
  }
  if (unlikely(atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)) os_futex_wake(&l->word, 1);
}
/* In a child after fork: the lock is free (the parent's holder was the
 * forking thread itself, in the prepare handler). */
static inline void lock_reset(lock_t *l) {
  atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
  atomic_store_explicit(&l->word, 0, memory_order_relaxed);
}

/* Polls before a contended lock sleeps (SMP_LOCK_SPIN with more than one
 * CPU, else 0). */
SMP_HIDDEN void lock_set_spin(unsigned cpus);

#endif /* SMP_LOCK_H */
