/*
 * tcache.c - thread caches (see tcache.h).
 */
#include <string.h>

#include "chunk.h"
#include "lock.h"
#include "options.h"
#include "region.h"
#include "slab.h"
#include "slot.h"
#include "tcache.h"

/* The rows of a thread with no cache: zero, every bin empty and full. */
_Alignas(64) char tcache_none_rows[(SMP_MAX_SLOTS + 1) / 2 * SLAB_PAIR_BYTES];
tcache_t tcache_none = {.bins = tcache_none_rows, .rows = tcache_none_rows}; /* no cache yet (tcache.h) */
static tcache_t tcache_gone = {.bins = tcache_none_rows, .rows = tcache_none_rows}; /* exiting: no cache again */
__thread tcache_tls_t tcache_tls = {tcache_none_rows, tcache_none_rows, &tcache_none, 0, NULL, 0, 0, 0, 0};

/* The calling thread works with cache tc from now on. */
static void tcache_use(tcache_t *tc) {
  tcache_tls.self = tc;
  if (tcache_tls.inside == 0) { /* else tcache_leave shows it */
    tcache_tls.bins = tcache_malloc_row(tc);
    tcache_tls.rows = tc->rows;
  }
}

bool tcache_sampling;

void tcache_set_sampling(bool on) {
  tcache_sampling = on;
  if (tcache_tls.inside == 0) tcache_tls.bins = tcache_malloc_row(tcache_tls.self);
}

static lock_t tcache_lock;
static tcache_t *tcache_free_list; /* caches of exited threads, for reuse */
static tcache_t *tcache_all;       /* every cache ever made, by next_all */

/* The most blocks bin c may hold, in a small heap and in a big one
 * (tcache_room sets them; config.h, SMP_TCACHE_BIG_BYTES). */
static _Atomic uint16_t bin_max[2][SMP_NCLASS];
static _Atomic unsigned tcache_live; /* threads with a cache */

/* Is the heap big enough, for the threads there are, for bigger bins?
 * (Asked only when a bin misses or overflows.) */
static bool tcache_heap_big(void) {
  size_t heap = chunk_active();
  return heap >= SMP_HUGE_HEAP &&
         heap >= (size_t)atomic_load_explicit(&tcache_live, memory_order_relaxed) * SMP_TCACHE_BIG_PER_THREAD;
}
unsigned tcache_threads(void) { return atomic_load_explicit(&tcache_live, memory_order_relaxed); }

static unsigned tcache_max(unsigned c) {
  return atomic_load_explicit(&bin_max[tcache_heap_big()][c], memory_order_relaxed);
}

/* Blocks of `size` that `bytes` hold, at least lo and at most
 * SMP_TCACHE_COUNT. */
static uint32_t bin_blocks(uint32_t size, uint32_t bytes, uint32_t lo) {
  uint32_t m = bytes / size;
  return m < lo ? lo : m > SMP_TCACHE_COUNT ? SMP_TCACHE_COUNT : m;
}

/* Room for every bin's array at its big limit, which it sets from the
 * options (at start-up; the options are read before any thread has a
 * cache). */
static size_t tcache_room(void) {
  size_t n = 0;
  for (unsigned c = 0; c < SMP_NCLASS; c++) {
    uint32_t size = class_table[c].size, m = bin_blocks(size, SMP_TCACHE_BYTES, 2),
             big = bin_blocks(size, SMP_TCACHE_BIG_BYTES, SMP_TCACHE_BIG_MIN);
    /* Checked mode caches nothing: every block goes through its slab,
     * where double frees and writes after free are caught. */
    if (size > SMP_TCACHE_MAX || options.checked) m = big = 0;
    atomic_store_explicit(&bin_max[0][c], (uint16_t)m, memory_order_relaxed);
    atomic_store_explicit(&bin_max[1][c], (uint16_t)(big > m ? big : m), memory_order_relaxed);
    n += big > m ? big : m;
  }
  return n;
}

/* The arrays lie in the room in class order, back to back (bin c's at
 * space + the limits of the bins before it), and grow in place
 * (tcache_grow).  A zero bin has no array yet (empty and full at once), so
 * a fresh row needs no writing: a thread touches only the bins of the
 * classes it uses.  Every bin of tc must be zero here. */
static void tcache_reset(tcache_t *tc, size_t room) {
  tc->space = (void **)(tc + 1);
  tc->room = tc->space;
  tc->room_end = tc->space + room;
  tc->nremote = 0;
}

/* The classes whose bins have arrays, one at a time: for (c = ...; c <
 * SMP_NCLASS; c = next_array(tc, c + 1)). */
static unsigned next_array(const tcache_t *tc, unsigned c) {
  for (; c < SMP_NCLASS; c = (c | 63) + 1) {
    uint64_t w = tc->arrays[c / 64] >> (c % 64);
    if (w != 0) return c + (unsigned)__builtin_ctzll(w);
  }
  return SMP_NCLASS;
}

/* Zero the live row's bins that have an array (after a flush). */
static void tcache_clear(tcache_t *tc) {
  for (unsigned c = next_array(tc, 0); c < SMP_NCLASS; c = next_array(tc, c + 1))
    *tcache_bin(tc->bins, c) = (tcache_bin_t){0};
  memset(tc->arrays, 0, sizeof tc->arrays);
}

static void tcache_rehome(tcache_t *tc);

/* A fresh cache joins the list of all (with no owner yet: tcache_publish). */
static void tcache_list(tcache_t *tc) {
  lock_take(&tcache_lock);
  tc->next_all = tcache_all;
  tcache_all = tc;
  lock_drop(&tcache_lock);
}

void tcache_publish(tcache_t *tc) {
  lock_take(&tcache_lock);
  tcache_tls.tid = os_gettid();
  tcache_tls.seen_epoch = atomic_load_explicit(&tc->epoch, memory_order_relaxed) - 1; /* seen as new */
  atomic_store_explicit(&tc->tls, &tcache_tls, memory_order_release);
  lock_drop(&tcache_lock);
}

tcache_t *tcache_create(void) {
  static _Atomic size_t room_once;
  size_t room = atomic_load_explicit(&room_once, memory_order_relaxed);
  if (room == 0) atomic_store_explicit(&room_once, room = tcache_room(), memory_order_relaxed);
  lock_take(&tcache_lock);
  tcache_t *tc = tcache_free_list;
  if (tc != NULL) tcache_free_list = tc->next_free;
  lock_drop(&tcache_lock);
  /* The rows, then the header (128 bytes), then the arrays' room, then
   * the remote batch: the end of the last pair of rows, where the small
   * classes' bins lie (bin_offset), touches the header, and the arrays
   * grow from its other side, in the same page (SMP_TCACHE_HEAD_AT).
   * Fresh metadata is zero; a reused cache's rows are zero but its live
   * row, whose bins are empty (tcache_destroy). */
  size_t rows = slab_rows_bytes();
  bool reused = tc != NULL;
  if (tc == NULL) {
    size_t page = os_page_size(), skew = (SMP_TCACHE_HEAD_AT + page - rows % page) % page;
    char *m = meta_alloc(skew + rows + sizeof *tc + room * sizeof(void *) + sizeof(tcache_remote_t), page);
    if (m == NULL) {
      tcache_use(&tcache_gone);
      return NULL;
    }
    tc = (tcache_t *)(m + skew + rows);
    tc->remote = (tcache_remote_t *)((void **)(tc + 1) + room);
  }
  tc->rows = (char *)tc - rows;
  /* A cache an exited thread left keeps its arrays, empty, for the next
   * new thread: a program that starts short-lived threads does not grow
   * them from one block again in each (mleak, 300 threads that each
   * allocate 4,000 blocks: 0.41x -> 0.38x glibc's time).  Its live row
   * moves to the new thread's slot. */
  if (reused) {
    tc->slot = slot_join();
    tcache_rehome(tc);
    atomic_fetch_add_explicit(&tcache_live, 1, memory_order_relaxed);
    tcache_use(tc);
    return tc;
  }
  /* Spread new threads over the slots from the start (SmpAllocator starts
   * every thread at slot 0 and lets contention move it), on the slot the
   * fewest threads use: a thread then mostly frees blocks of its own slot's
   * slabs. */
  tc->slot = slot_join();
  tc->bins = tc->rows + slab_row(tc->slot % slab_rows);
  tcache_reset(tc, room);
  atomic_fetch_add_explicit(&tcache_live, 1, memory_order_relaxed);
  tcache_use(tc);
  tcache_list(tc);
  return tc;
}

/* A bin that misses or overflows is busy: let it hold more (doubling, up to
 * its class's limit; a bin with no room yet gets SMP_TCACHE_START).  Its
 * array grows in place: the arrays of the bins after it move up.  So the
 * room a thread touches is the sum of its bins' limits, packed: a thread
 * that uses a few classes touches a page or two, however many threads
 * there are. */
static unsigned bin_count(const tcache_bin_t *b) { return (unsigned)(b->top - b->base); }
static unsigned bin_limit(const tcache_bin_t *b) { return (unsigned)(b->end - b->base); }

static void tcache_grow_to(tcache_t *tc, tcache_bin_t *b, unsigned c, unsigned max);

/* (Inline: a bin at its limit, the common case, costs a compare.) */
static inline void tcache_grow(tcache_t *tc, tcache_bin_t *b, unsigned c) {
  unsigned max = tcache_max(c);
  if (bin_limit(b) < max) tcache_grow_to(tc, b, c, max);
}

static void tcache_grow_to(tcache_t *tc, tcache_bin_t *b, unsigned c, unsigned max) {
  unsigned limit = bin_limit(b), want = limit * 2 < max ? limit * 2 : max;
  if (limit == 0) want = max < SMP_TCACHE_START ? max : SMP_TCACHE_START;
  size_t delta = want > limit ? want - limit : 0;
  if (delta == 0 || (size_t)(tc->room_end - tc->room) < delta) return;
  if (b->base == NULL) { /* its first array: where the bins before it end */
    void **at = tc->space;
    for (unsigned j = next_array(tc, 0); j < c; j = next_array(tc, j + 1)) at = tcache_bin(tc->bins, j)->end;
    b->base = b->top = b->end = at;
    tc->arrays[c / 64] |= (uint64_t)1 << (c % 64);
  }
  void **after = b->end;
  memmove(after + delta, after, (size_t)(tc->room - after) * sizeof *after);
  track_forget(after, delta * sizeof *after); /* stale copies, now bin c's room */
  for (unsigned j = next_array(tc, c + 1); j < SMP_NCLASS; j = next_array(tc, j + 1)) {
    tcache_bin_t *bj = tcache_bin(tc->bins, j);
    bj->base += delta;
    bj->top += delta;
    bj->end += delta;
  }
  tc->room += delta;
  b->end += delta;
}

/* Give the n blocks of v back to their slabs; v forgets them. */
static void give(void **v, unsigned n, const char *who) {
  if (n) {
    slot_give(v, n, who);
    track_forget(v, n * sizeof *v);
  }
}

_Static_assert(SMP_NCLASS <= 256 && SMP_MAX_SLOTS <= 256, "a remote block's class and slot fit a byte");

/* The remote batch goes home: a parcel for each slot its blocks belong to
 * (slot_send). */
static void remote_flush(tcache_t *tc, const char *who) {
  unsigned n = tc->nremote;
  tcache_remote_t *r = tc->remote;
  tc->nremote = 0;
  void *home[SMP_REMOTE_BATCH];
  for (unsigned left = n; left > 0;) {
    unsigned slot = r->slot[0], k = 0, rest = 0;
    size_t bytes = 0;
    for (unsigned i = 0; i < left; i++) {
      if (r->slot[i] == slot) {
        home[k++] = r->v[i];
        bytes += class_table[r->cls[i]].size;
      } else {
        r->v[rest] = r->v[i];
        r->slot[rest] = r->slot[i];
        r->cls[rest++] = r->cls[i];
      }
    }
    slot_send(slot, home, k, bytes, &tc->stash, who);
    left = rest;
  }
  track_forget(r->v, n * sizeof *r->v);
}

/* Give every block of the cache back but those of bin keep (SMP_NCLASS:
 * none kept).  Bin keep needs a slab of memory not resident (tcache.h)
 * when it is not SMP_NCLASS. */
static void flush_but(tcache_t *tc, unsigned keep) {
  remote_flush(tc, "free");
  for (unsigned c = next_array(tc, 0); c < SMP_NCLASS; c = next_array(tc, c + 1)) {
    tcache_bin_t *b = tcache_bin(tc->bins, c);
    unsigned n = bin_count(b);
    if (c == keep || n == 0) continue;
    b->top = b->base;
    give(b->base, n, "free");
  }
}
static void flush(tcache_t *tc) {
  flush_but(tc, SMP_NCLASS);
  large_runs_flush(&tc->remote->runs);
}

large_runs_t *tcache_runs(void) {
  tcache_t *tc = tcache_tls.self;
  if (tc == &tcache_none || tc == &tcache_gone) return NULL;
  /* An eighth of the heap in use, shared by the threads (as the pool's
   * dirty granules that may wait, purge.h): within SMP_RUN_CACHE and
   * SMP_RUN_CACHE_MAX granules a thread. */
  large_runs_t *rc = &tc->remote->runs;
  unsigned t = tcache_threads();
  size_t share = chunk_active() / 8 / (t != 0 ? t : 1);
  rc->limit = share < SMP_RUN_CACHE ? SMP_RUN_CACHE : share > SMP_RUN_CACHE_MAX ? SMP_RUN_CACHE_MAX : (unsigned)share;
  return rc;
}

void tcache_flush(void) {
  if (tcache_tls.self != &tcache_none && tcache_tls.self != &tcache_gone) flush(tcache_tls.self);
}

void tcache_refresh(void) {
  tcache_t *tc = tcache_tls.self;
  if (tc == &tcache_none || tc == &tcache_gone) return;
  flush(tc);
  tcache_clear(tc);
  tcache_reset(tc, tcache_room());
}

void tcache_destroy(tcache_t *tc) {
  tcache_use(&tcache_gone);
  atomic_fetch_sub_explicit(&tcache_live, 1, memory_order_relaxed);
  flush(tc); /* the arrays stay, empty, for the next new thread (tcache_create) */
  slot_leave(tc->slot);
  if (slot_threads_in(tc->slot) == 0) slot_drain_idle(tc->slot); /* the slot's last thread */
  lock_take(&tcache_lock);
  atomic_store_explicit(&tc->tls, NULL, memory_order_relaxed); /* no owner: never emptied from outside */
  tc->next_free = tcache_free_list;
  tcache_free_list = tc;
  lock_drop(&tcache_lock);
}

/* The thread's slot moved (tc->slot is the new one): its live row moves
 * to the new slot's row, and the old row is zero again. */
static void tcache_rehome(tcache_t *tc) {
  char *row = tc->rows + slab_row(tc->slot % slab_rows);
  if (row == tc->bins) return;
  for (unsigned c = next_array(tc, 0); c < SMP_NCLASS; c = next_array(tc, c + 1)) {
    *tcache_bin(row, c) = *tcache_bin(tc->bins, c);
    *tcache_bin(tc->bins, c) = (tcache_bin_t){0};
  }
  tc->bins = row;
  if (tcache_tls.self == tc && tcache_tls.inside == 0) tcache_tls.bins = tcache_malloc_row(tc); /* else tcache_leave */
}

void *tcache_alloc_slow(unsigned c) {
  tcache_t *tc = tcache_tls.self;
  void *v[1];
  tcache_bin_t *b = tcache_bin(tc->bins, c);
  if (b->end == b->base && (tcache_grow(tc, b, c), b->end == b->base)) {
    /* not cached: no cache, checked mode, a big class */
    unsigned slot = tc->slot;
    if (slot_take(c, 1, v, &slot, NULL) == 0) return NULL;
    if (tc != &tcache_none && tc != &tcache_gone && tc->slot != slot) {
      slot_moved(tc->slot, slot);
      tc->slot = slot;
      tcache_rehome(tc);
    }
    return slab_unkey(v[0]);
  }
  /* The bin is empty: fill half of it (one slot lock for limit/2 blocks;
   * a full fill holds more memory in every thread's cache), straight into
   * its array, and hand out the top one.  The fill comes highest address
   * first (slot_take), so the bin hands its blocks out lowest address
   * first: a thread's mallocs of a class walk up through fresh memory, the
   * way the hardware prefetches a program's writes to it.  Handed out from
   * the highest down, Python with every object through malloc took 491 ms
   * instead of 413 ms (mimalloc 2.4.1 448 ms; docs/design.md, "Thread
   * caches"). */
  tcache_grow(tc, b, c);
  unsigned half = bin_limit(b) / 2;
  /* Where the fill needs a slab of memory not resident, the other bins'
   * blocks go back first (defer), so that slabs they kept in use can serve
   * it; not in a big heap, whose caches may hold more (tcache_heap_big):
   * there every fresh slab emptied every bin, to fill them again soon
   * (glibc-thread: 4.4 % of its instructions; docs/design.md, "Thread
   * caches"). */
  bool defer = false;
  unsigned was = tc->slot, want = half ? half : 1,
           n = slot_take(c, want, b->base, &tc->slot, tcache_heap_big() ? NULL : &defer);
  if (defer) { /* no resident granule: the other bins' blocks go back first */
    flush_but(tc, c);
    if (n == 0) n = slot_take(c, want, b->base, &tc->slot, NULL);
  }
  void *p = NULL;
  if (n > 0) {
    b->top = b->base + n - 1;
    p = *b->top;
    track_forget(b->top, sizeof p);
  }
  if (unlikely(tc->slot != was)) {
    slot_moved(was, tc->slot);
    tcache_rehome(tc); /* b moves with the row */
  }
  return p != NULL ? slab_unkey(p) : NULL;
}

bool tcache_free_slow(void *p, unsigned c, unsigned owner, const char *who) {
  tcache_t *tc = tcache_tls.self;
  tcache_bin_t *b = tcache_bin(tc->bins, c);
  if (b->end == b->base && (tcache_grow(tc, b, c), b->end == b->base)) {
    /* not cached: to its slab at once */
    slot_give(&p, 1, who);
    return true;
  }
  if (owner != tc->slot) {
    tcache_remote_t *r = tc->remote;
    r->slot[tc->nremote] = (uint8_t)owner;
    r->cls[tc->nremote] = (uint8_t)c;
    r->v[tc->nremote++] = p;
    if (tc->nremote < SMP_REMOTE_BATCH) return false;
    remote_flush(tc, who);
    return true;
  }
  /* Full: grow, and give the older half back. */
  tcache_grow(tc, b, c);
  void **base = b->base;
  unsigned half = bin_limit(b) / 2, count = bin_count(b);
  bool gave = false;
  if (half > 0 && count > half) {
    unsigned n = count - half;
    slot_give(base, n, who);
    memmove(base, base + n, half * sizeof *base);
    track_forget(base + half, n * sizeof *base);
    b->top = base + half;
    gave = true;
  }
  if (b->top < b->end) {
    *b->top++ = p;
    return gave;
  }
  slot_give(&p, 1, who);
  return true;
}

void tcache_fork_prepare(void) { lock_take(&tcache_lock); }
void tcache_fork_parent(void) { lock_drop(&tcache_lock); }
/* ---- emptying idle threads' caches ---------------------------------------- */

#define SEEN_EMPTIED UINT32_MAX

/* The next cache from *at on (the list only grows at its head: a cache's
 * next_all never changes) that may be emptied now, its steal lock taken;
 * NULL at the end.  tcache_lock is held only while looking: emptying gives
 * blocks back under slot locks, and a fork takes the slot locks before
 * tcache_lock. */
static tcache_t *reclaim_next(tcache_t **at, uint32_t now, uint32_t idle_ms, bool *waiting) {
  lock_take(&tcache_lock);
  tcache_t *tc = *at == NULL ? tcache_all : (*at)->next_all;
  for (; tc != NULL; tc = tc->next_all) {
    tcache_tls_t *t = atomic_load_explicit(&tc->tls, memory_order_acquire);
    if (t == NULL || t == &tcache_tls) continue; /* free, or the caller's own */
    uint32_t e = atomic_load_explicit(&tc->epoch, memory_order_relaxed);
    if (e != t->seen_epoch) { /* it worked since the last look */
      t->seen_epoch = e;
      t->seen_ms = now;
    } else if (t->seen_ms == SEEN_EMPTIED) {
      continue; /* emptied, and idle since */
    }
    if (idle_ms != 0 && (uint32_t)(now - t->seen_ms) < idle_ms) {
      *waiting = true;
      continue;
    }
    if (lock_try(&tc->steal)) break; /* else inside a slow path */
    *waiting = true;
  }
  lock_drop(&tcache_lock);
  *at = tc;
  return tc;
}

/* The pages of tc's arrays and remote batch, empty after a flush, go back
 * to the kernel (the bins keep their room: it reads as zero until used
 * again).  Only while the cache is hidden from its owner (tcache_reclaim):
 * a push meanwhile would be lost.  A system call under the cache's steal
 * lock, which only its owner, idle, could wait for. */
static void tcache_bare(tcache_t *tc) {
  uintptr_t page = os_page_size() - 1, lo = ((uintptr_t)tc->space + page) & ~page;
  uintptr_t hi = (uintptr_t)(tc->remote + 1) & ~page; /* the allocation's end */
  if (hi > lo) os_decommit((void *)lo, hi - lo);
}

unsigned tcache_reclaim(uint32_t now, uint32_t idle_ms, bool *waiting) {
  unsigned n = 0;
  if (now == SEEN_EMPTIED) now--;
  tcache_t *tc = NULL;
  while (reclaim_next(&tc, now, idle_ms, waiting) != NULL) {
    /* Its owner cannot leave meanwhile (tcache_destroy runs under the
     * steal lock): its thread-local block stays.  Hide the cache from the
     * owner's fast paths (as tcache_enter does), then make sure the owner
     * is not inside one: blocked in a system call, it is between two of
     * them, and from its return on every fast path finds the hidden rows,
     * takes a slow path and waits for the steal lock.  (A thread
     * preempted, or stopped in a page fault, may be inside one: left
     * alone.) */
    tcache_tls_t *t = atomic_load_explicit(&tc->tls, memory_order_relaxed);
    __atomic_store_n(&t->bins, tcache_none_rows, __ATOMIC_RELAXED);
    __atomic_store_n(&t->rows, tcache_none_rows, __ATOMIC_RELAXED);
    atomic_thread_fence(memory_order_seq_cst);
    if (os_task_in_syscall(t->tid)) {
      flush(tc);
      tcache_bare(tc);
      t->seen_ms = SEEN_EMPTIED;
      n++;
    } else {
      *waiting = true;
    }
    atomic_thread_fence(memory_order_seq_cst);
    __atomic_store_n(&t->bins, tc->bins, __ATOMIC_RELAXED);
    __atomic_store_n(&t->rows, tc->rows, __ATOMIC_RELAXED);
    lock_drop(&tc->steal);
  }
  return n;
}

void tcache_fork_child(void) {
  lock_reset(&tcache_lock);
  /* The other threads are not in the child: their caches have no owner
   * (their blocks stay, as before), and may not be emptied. */
  for (tcache_t *c = tcache_all; c != NULL; c = c->next_all)
    if (c != tcache_tls.self) {
      atomic_store_explicit(&c->tls, NULL, memory_order_relaxed);
      lock_reset(&c->steal);
    }
  /* slot_reset_all forgot every thread; the one that forked lives on. */
  tcache_t *tc = tcache_tls.self;
  bool has = tc != &tcache_none && tc != &tcache_gone;
  atomic_store_explicit(&tcache_live, has, memory_order_relaxed);
  if (has) slot_moved(SMP_MAX_SLOTS, tc->slot);
}
