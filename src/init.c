/*
 * init.c - start-up, fork and thread exit, for every module.
 *
 * Start-up has two steps.  init_once runs at the first allocation of the
 * process, which may come from the dynamic loader or from a constructor of
 * a statically linked program before ours: it picks the free key, counts
 * the CPUs and reads the SMPALLOC_* options if the environment is set up
 * (it is in every link mode once libc's own start-up has run; if not yet,
 * the constructor reads them).  The constructor then does what may
 * allocate or print: the verbose line, the at-exit report, and the hook
 * that registers the fork handlers once the process has a second thread
 * (lock.h).
 * An atomic state machine makes init_once safe from any thread; nothing in
 * it can call malloc.
 *
 * Fork: the prepare handler takes every lock of the allocator in a fixed
 * order (every slot lock ever used, slot 0's first, under which that count
 * rises (slot.c); the thread caches' lock; the large-block cache; the pool
 * and metadata), the parent releases them, and the child resets them: the
 * child starts with consistent lists and can allocate at once.  The
 * handlers are registered once the process has a second thread (lock.h).
 *
 * Thread exit: a pthread key's destructor gives the thread's cached blocks
 * back and its cache to the next thread.
 */
#include <pthread.h>

#include "chunk.h"
#include "init.h"
#include "extent.h"
#include "large.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "prof.h"
#include "purge.h"
#include "slab.h"
#include "slot.h"
#include "stats.h"
#include "tcache.h"

extern char **environ;

static _Atomic int init_state; /* 0 not yet, 1 in progress, 2 done */
static _Atomic int options_read;

static void read_options(void) {
  if (environ == NULL || atomic_exchange(&options_read, 1)) return;
  options_init();
}

static void set_slots(void) {
  unsigned cpus = os_cpu_count();
  lock_set_spin(cpus);
  slot_set_count(options.slots ? options.slots : cpus);
}

void init_once(void) {
  if (likely(atomic_load_explicit(&init_state, memory_order_acquire) == 2)) return;
  int expect = 0;
  if (atomic_compare_exchange_strong(&init_state, &expect, 1)) {
    size_t page = os_page_size();
    SMP_CHECK(page <= SMP_SLAB_SIZE && SMP_SLAB_SIZE % page == 0, "malloc",
              "the kernel's page size does not divide 64 KiB", NULL);
    uint64_t key = os_random();
    slab_free_key = key ? key : 0x5eed5eed5eed5eedu;
    read_options();
    prof_init();
    set_slots();
    slab_rows = slot_count(); /* before any thread has a cache (slab.h) */
    atomic_store_explicit(&init_state, 2, memory_order_release);
    return;
  }
  while (atomic_load_explicit(&init_state, memory_order_acquire) != 2) {
  }
}

static pthread_key_t thread_key;
static _Atomic int key_state; /* 0 none, 1 being created, 2 ready, 3 failed */

/* The thread's blocks go back to their slabs: empty slabs may be due for
 * purging (nothing else would look before the next allocation). */
static void thread_exit(void *tc) {
  tcache_enter();
  tcache_destroy(tc);
  purge_left();
  tcache_leave();
}

/* Re-read the CPU count at most once per SMP_RECOUNT_MS (taskset, a
 * cgroup limit), when a thread starts; not for the first, which init_once
 * has just counted for (so a program with one thread reads no clock at
 * start-up: os.h). */
static void recount(void) {
  static _Atomic uint32_t last;
  static _Atomic bool counted;
  if (!atomic_exchange_explicit(&counted, true, memory_order_relaxed)) return;
  uint32_t now = os_now_ms(), then = atomic_load_explicit(&last, memory_order_relaxed);
  if (options.slots || (uint32_t)(now - then) < SMP_RECOUNT_MS) return;
  if (atomic_compare_exchange_strong(&last, &then, now)) set_slots();
}

void init_thread(void) {
  tcache_enter();
  init_once();
  recount();
  tcache_t *tc = tcache_create();
  tcache_leave();
  if (tc == NULL) return;
  int expect = 0;
  if (atomic_compare_exchange_strong(&key_state, &expect, 1))
    atomic_store(&key_state, pthread_key_create(&thread_key, thread_exit) == 0 ? 2 : 3);
  while (atomic_load(&key_state) == 1) {
  }
  /* The cache is installed first: should pthread_setspecific allocate, it
   * finds it (outside the slow path: not served aside). */
  /* Only a cache whose thread exit will unlist it may be emptied by
   * another thread (its owner's thread-local block is freed at exit). */
  if (atomic_load(&key_state) == 2 && pthread_setspecific(thread_key, tc) == 0) tcache_publish(tc);
}

/* ---- fork ---------------------------------------------------------------- */

/* The handlers run inside a slow path (tcache_enter): a signal handler's
 * call between the prepare handler and the others is served aside. */
static void fork_prepare(void) {
  tcache_enter();
  prof_fork_prepare();
  slot_lock_all();
  tcache_fork_prepare();
  large_fork_prepare();
  extent_fork_prepare();
  chunk_fork_prepare();
  pagemap_fork_prepare();
}
static void fork_parent(void) {
  pagemap_fork_parent();
  chunk_fork_parent();
  large_fork_parent();
  extent_fork_parent();
  tcache_fork_parent();
  slot_unlock_all();
  prof_fork_parent();
  tcache_leave();
}
static void fork_child(void) {
  pagemap_fork_child();
  chunk_fork_child();
  large_fork_child();
  extent_fork_child();
  slot_reset_all(); /* before tcache_fork_child, which counts this thread again */
  tcache_fork_child();
  purge_bg_fork_child();
  prof_fork_child();
  tcache_leave();
}

static void fork_register(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* Runs after libc is initialised, before main: the place for set-up that
 * may allocate (pthread_atfork does) or print.  The fork handlers are
 * registered by the first lock taken once the process has a second thread
 * (lock.h); from here on, since pthread_atfork may allocate. */
__attribute__((constructor)) static void init_constructor(void) {
  init_once();
  if (!atomic_load(&options_read)) { /* the environment was not ready before */
    read_options();
    prof_init();
    set_slots();
    if (options.checked) tcache_refresh(); /* this thread's cache: none now */
  }
  stats_init();
  prof_start();
  lock_set_fork_hook(fork_register);
  lock_fork_guard(); /* registers now if the process has threads already */
}
