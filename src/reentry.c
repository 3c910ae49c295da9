/*
 * reentry.c - blocks for calls that re-enter the allocator (reentry.h).
 *
 * Two fixed tables, lock-free: the blocks mapped aside (a slot is claimed
 * by a compare-and-swap of its address word from 0 to 1, its size written,
 * then its address published), and the frees put off (a slot's word from
 * 0 to the block).  Both are scanned whole, which is cheap for their size
 * and happens only in a re-entered call, a free the page map does not
 * know, or a slow path's exit while frees are pending.
 */
#include "os.h"
#include "reentry.h"

#define ASIDE_MAX 256u
#define DEFER_MAX 256u

static struct {
  _Atomic uintptr_t at; /* 0 free, 1 being filled, else the block */
  size_t size;          /* its mapping's bytes */
} aside[ASIDE_MAX];
static _Atomic(void *) deferred[DEFER_MAX];
static _Atomic size_t n_served, n_deferred, n_refused;
_Atomic unsigned reentry_pending; /* frees in deferred[] (a hint) */

void *reentry_alloc(size_t n, size_t align) {
  size_t page = os_page_size(), size = (n + page - 1) & ~(page - 1);
  if (size < n || n == 0) size = n == 0 ? page : 0;
  if (size == 0) return NULL;
  for (unsigned i = 0; i < ASIDE_MAX; i++) {
    uintptr_t free = 0;
    if (atomic_load_explicit(&aside[i].at, memory_order_relaxed) != 0 ||
        !atomic_compare_exchange_strong_explicit(&aside[i].at, &free, 1, memory_order_acquire,
                                                 memory_order_relaxed))
      continue;
    void *p = os_map(size, align, false);
    if (p == NULL) {
      atomic_store_explicit(&aside[i].at, 0, memory_order_release);
      break;
    }
    aside[i].size = size;
    atomic_store_explicit(&aside[i].at, (uintptr_t)p, memory_order_release);
    atomic_fetch_add_explicit(&n_served, 1, memory_order_relaxed);
    return p;
  }
  atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
  return NULL;
}

static int aside_find(const void *p) {
  if (p == NULL || ((uintptr_t)p & (os_page_size() - 1)) != 0) return -1;
  for (unsigned i = 0; i < ASIDE_MAX; i++)
    if (atomic_load_explicit(&aside[i].at, memory_order_acquire) == (uintptr_t)p) return (int)i;
  return -1;
}

size_t reentry_size(const void *p) {
  int i = aside_find(p);
  return i < 0 ? 0 : aside[i].size;
}

bool reentry_free(void *p) {
  int i = aside_find(p);
  if (i < 0) return false;
  uintptr_t want = (uintptr_t)p;
  size_t size = aside[i].size;
  /* Two frees of the block racing: one wins, the other finds none. */
  if (!atomic_compare_exchange_strong_explicit(&aside[i].at, &want, 1, memory_order_acquire,
                                               memory_order_relaxed))
    return false;
  os_unmap(p, size);
  atomic_store_explicit(&aside[i].at, 0, memory_order_release);
  return true;
}

bool reentry_defer(void *p) {
  /* Counted first: a drainer that finds the block before the count is
   * raised must not take the count below zero. */
  atomic_fetch_add_explicit(&reentry_pending, 1, memory_order_relaxed);
  for (unsigned i = 0; i < DEFER_MAX; i++) {
    void *none = NULL;
    if (atomic_load_explicit(&deferred[i], memory_order_relaxed) == NULL &&
        atomic_compare_exchange_strong_explicit(&deferred[i], &none, p, memory_order_release,
                                                memory_order_relaxed)) {
      atomic_fetch_add_explicit(&n_deferred, 1, memory_order_relaxed);
      return true;
    }
  }
  atomic_fetch_sub_explicit(&reentry_pending, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
  return false;
}

void *reentry_next(void) {
  for (unsigned i = 0; i < DEFER_MAX && atomic_load_explicit(&reentry_pending, memory_order_acquire); i++) {
    void *p = atomic_exchange_explicit(&deferred[i], NULL, memory_order_acquire);
    if (p != NULL) {
      atomic_fetch_sub_explicit(&reentry_pending, 1, memory_order_relaxed);
      return p;
    }
  }
  return NULL;
}

void reentry_counts(size_t *served, size_t *deferred_, size_t *refused) {
  *served = atomic_load_explicit(&n_served, memory_order_relaxed);
  *deferred_ = atomic_load_explicit(&n_deferred, memory_order_relaxed);
  *refused = atomic_load_explicit(&n_refused, memory_order_relaxed);
}
