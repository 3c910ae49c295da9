/*
 * tcache.c - a small cache of free blocks per thread, in front of the slots.
 *
 * The fast paths of malloc and free touch only the calling thread's cache:
 * pop or push on a per-class list, no lock, no atomic instruction.  A miss
 * takes a batch of blocks from a slot (one lock for limit/2 blocks); a full
 * list gives the older half back to the blocks' slabs (one lock per owning
 * slot met).  A bin's limit starts at SMP_TCACHE_START and doubles each time
 * it misses or overflows, up to its class's limit (about SMP_TCACHE_BYTES,
 * at most SMP_TCACHE_COUNT blocks), so a thread that allocates little holds
 * little, however many threads there are.
 *
 * free() pushes here only blocks of slabs that the thread's own slot owns.
 * A block of another slot's slab goes on the thread's remote batch, which
 * is given back SMP_REMOTE_BATCH blocks at a time: reusing it here would
 * write into cache lines that its slab's other blocks share with other
 * threads (false sharing), and it is wanted back where it came from.
 *
 * A thread starts with smp_tl_cache == &tc_empty, whose lists are empty and
 * whose limits are 0: its first malloc or free falls into the slow path,
 * which gives it a cache of its own (no "initialised?" test on the fast
 * path).  A pthread key destructor gives the blocks back when the thread
 * exits, and the cache itself to a free list for the next thread.
 */
#include <errno.h>
#include <pthread.h>

#include "internal.h"
#include "options.h"

static tcache_t tc_empty;
__thread tcache_t *smp_tl_cache = &tc_empty;
/* 0: no cache yet; 1: has one; 2: exiting (cache given back: go direct). */
static __thread unsigned char tl_state;

static smp_mutex_t tc_lock;
static tcache_t *tc_free;        /* caches of exited threads, for reuse */
static pthread_key_t tc_key;
static _Atomic int tc_key_state; /* 0 none, 1 being created, 2 ready */

/* The most blocks bin cls may hold. */
static unsigned tc_limit(unsigned cls) {
  uint32_t size = smp_class[cls].size;
  /* Checked mode caches nothing: every block goes through its slab, where
   * double frees and corrupted links are caught. */
  if (size > SMP_TCACHE_MAX || smp_opt.checked) return 0;
  uint32_t n = SMP_TCACHE_BYTES / size;
  return n < 2 ? 2 : n > SMP_TCACHE_COUNT ? SMP_TCACHE_COUNT : n;
}

static void tc_lock_acquire(void) { mutex_lock(&tc_lock); }
static void tc_lock_release(void) { mutex_unlock(&tc_lock); }

static void tcache_destroy(void *arg);

/* The calling thread's own cache, created on first use; NULL when the thread
 * is exiting or no memory is left (the caller then goes to the slots). */
static tcache_t *tcache_get(void) {
  tcache_t *tc = smp_tl_cache;
  if (tc != &tc_empty) return tc;
  if (tl_state == 2) return NULL;
  slot_init();
  slot_recount(); /* a new thread: a good moment to notice a changed CPU count */
  tc_lock_acquire();
  if ((tc = tc_free) != NULL) tc_free = tc->next_free;
  tc_lock_release();
  if (tc == NULL && (tc = meta_alloc(sizeof *tc)) == NULL) return NULL;
  for (unsigned c = 0; c < SMP_NCLASS; c++) {
    tc->bins[c].head = NULL;
    tc->bins[c].count = 0;
    unsigned max = tc_limit(c);
    tc->bins[c].limit = max < SMP_TCACHE_START ? max : SMP_TCACHE_START;
  }
  tc->remote = NULL;
  tc->nremote = 0;
  /* Spread new threads over the slots from the start (SmpAllocator starts
   * every thread at slot 0 and lets contention move it): a thread then
   * mostly frees blocks of its own slot's slabs. */
  static _Atomic unsigned next_slot;
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  smp_tl_slot = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed) % (n ? n : 1);
  /* Install first: should pthread_setspecific allocate, it finds the cache. */
  smp_tl_cache = tc;
  tl_state = 1;
  int expect = 0;
  if (atomic_compare_exchange_strong(&tc_key_state, &expect, 1)) {
    if (pthread_key_create(&tc_key, tcache_destroy) == 0) atomic_store(&tc_key_state, 2);
    else atomic_store(&tc_key_state, 0);
  }
  while (atomic_load(&tc_key_state) == 1) {
  }
  if (atomic_load(&tc_key_state) == 2) pthread_setspecific(tc_key, tc);
  return tc;
}

/* A bin that misses or overflows is busy: let it hold more (doubling, up to
 * its class's limit).  Threads that allocate little keep small caches, which
 * matters when there are a thousand of them. */
static void tbin_grow(tbin_t *b, unsigned cls) {
  unsigned max = tc_limit(cls);
  if (b->limit < max) b->limit = b->limit * 2 < max ? b->limit * 2 : max;
}

/* Give back all but keep blocks of bin b. */
static void tbin_trim(tbin_t *b, unsigned keep, const char *who) {
  if (b->count <= keep) return;
  void *rest;
  if (keep == 0) {
    rest = b->head;
    b->head = NULL;
  } else {
    void *p = b->head;
    for (unsigned i = 1; i < keep; i++) p = *(void **)p;
    rest = *(void **)p;
    *(void **)p = NULL;
  }
  b->count = keep;
  slot_give(rest, who);
}

/* Give the remote batch back. */
static void remote_flush(tcache_t *tc, const char *who) {
  void *list = tc->remote;
  tc->remote = NULL;
  tc->nremote = 0;
  if (list != NULL) slot_give(list, who);
}

static void tcache_destroy(void *arg) {
  tcache_t *tc = arg;
  smp_tl_cache = &tc_empty;
  tl_state = 2;
  remote_flush(tc, "free");
  for (unsigned c = 0; c < SMP_NCLASS; c++) tbin_trim(&tc->bins[c], 0, "free");
  tc_lock_acquire();
  tc->next_free = tc_free;
  tc_free = tc;
  tc_lock_release();
}

/* Out of memory: NULL with errno ENOMEM (the fast path returns our result
 * as it is). */
static void *tcache_oom(void) {
  errno = ENOMEM;
  return NULL;
}

void *tcache_alloc_slow(unsigned cls) {
  tcache_t *tc = tcache_get();
  void *v[SMP_TCACHE_COUNT / 2 + 1];
  if (tc == NULL || tc->bins[cls].limit == 0) /* uncached class, or exiting thread */
    return slot_take(cls, 1, v) ? v[0] : tcache_oom();
  tbin_t *b = &tc->bins[cls];
  tbin_grow(b, cls);
  unsigned n = slot_take(cls, b->limit / 2, v);
  if (n == 0) return tcache_oom();
  /* Link the rest, lowest address on top (no lock held: the first touch of
   * a block that went cold waits here, not in a locked section). */
  void *head = NULL;
  for (unsigned i = n; i-- > 1;) {
    *(void **)v[i] = head;
    head = v[i];
  }
  b->head = head;
  b->count = n - 1;
  return v[0];
}

void tcache_free_slow(void *p, unsigned cls, const char *who) {
  tcache_t *tc = tcache_get();
  if (tc == NULL || tc->bins[cls].limit == 0) {
    *(void **)p = NULL;
    slot_give(p, who);
    return;
  }
  tbin_t *b = &tc->bins[cls];
  if (b->count >= b->limit) {
    tbin_grow(b, cls);
    tbin_trim(b, b->limit / 2, who);
  }
  if (unlikely(b->head == p)) os_fatal(who, "double free of", p);
  *(void **)p = b->head;
  b->head = p;
  b->count++;
}

void tcache_free_remote(void *p, const char *who) {
  tcache_t *tc = tcache_get();
  if (tc == NULL || smp_opt.checked) { /* exiting thread, or checked mode: at once */
    *(void **)p = NULL;
    slot_give(p, who);
    return;
  }
  if (unlikely(tc->remote == p)) os_fatal(who, "double free of", p);
  *(void **)p = tc->remote;
  tc->remote = p;
  if (++tc->nremote >= SMP_REMOTE_BATCH) remote_flush(tc, who);
}

void tcache_flush_all(void) {
  tcache_t *tc = smp_tl_cache;
  if (tc == &tc_empty) return;
  remote_flush(tc, "free");
  for (unsigned c = 0; c < SMP_NCLASS; c++) tbin_trim(&tc->bins[c], 0, "free");
}

void tcache_fork_prepare(void) { tc_lock_acquire(); }
void tcache_fork_parent(void) { tc_lock_release(); }
void tcache_fork_child(void) { atomic_store_explicit(&tc_lock, 0, memory_order_relaxed); }
