/*
 * purge.c - the purge policy and the reclaim path (see purge.h).
 */
#include "chunk.h"
#include "extent.h"
#include "large.h"
#include "options.h"
#include "os.h"
#include "purge.h"
#include "slot.h"
#include "tcache.h"

/* max(the threshold for each two threads that run at once, half the
 * granules in use: a heap of runs of many lengths keeps free room between
 * its blocks, reused as they are replaced; with an eighth, the sweep's
 * run/T2/W5000 shape purged it all the time, 0.9 s against 0.6 s).  Threads that run at once are those with a cache,
 * at most one a slot: each frees and allocates again in bursts of its own
 * (realloc-grow on 16 CPUs: 16 threads free 16 MiB each between rounds;
 * with one 64 MiB cap for all of them the second round faulted back in what
 * the first had returned, 0.97x glibc's wall instead of 0.79x). */
static size_t cap(void) {
  unsigned run = tcache_threads(), slots = slot_count();
  if (run > slots) run = slots;
  size_t a = chunk_active() / 2, t = options.purge_threshold / SMP_SLAB_SIZE * (run > 3 ? run / 2 : 1);
  return a > t ? a : t;
}

__thread unsigned purge_tick;

/* When the dirty granules were last walked for aged ones: a walk looks at
 * every chunk, so at most one per half delay. */
static _Atomic uint32_t walked;

/* Over a cap: down to half of it, the aged ones first, so that what the
 * program frees and takes again within the delay stays. */
static void purge_over(size_t (*purge)(size_t, uint32_t, uint32_t), size_t (*dirty)(void), size_t to,
                       uint32_t now, uint32_t delay) {
  purge(to, now, delay);
  if (dirty() > to) purge(to, now, delay / 4);
  if (dirty() > to) purge(to, now, 0);
}

/* The arenas' free granules that may wait however old (an eighth of the
 * large memory in use), and their cap (the threshold, or all the large
 * memory in use: the free room between blocks of many sizes, which the
 * program reuses as it replaces them, is a large share of an arena; with
 * half, the sweep's big/T1/W100 was over the cap all the time). */
static size_t extent_keep(void) {
  size_t blocks, bytes;
  large_counters(&blocks, &bytes);
  return bytes / 8 / SMP_SLAB_SIZE;
}
/* A floor of dirty granules weighed by their resident share (purge_dirty),
 * in granules. */
static size_t chunk_floor(size_t n) { return density_unweigh(&chunk_density, n); }
static size_t extent_cap(void) {
  size_t blocks, bytes, t = options.purge_threshold;
  large_counters(&blocks, &bytes);
  return (bytes > t ? bytes : t) / SMP_SLAB_SIZE;
}

/* ---- the background thread ------------------------------------------------ */

/* A program that stops calling the allocator never reaches purge_due: its
 * free memory would stay resident for good.  So a big heap gets a thread
 * (once a process: purge_bg_start) that returns what has aged, as
 * purge_due's walk does,
 * every half delay while there is more to age.  It also empties the
 * caches of threads idle for SMP_CACHE_IDLE_MS (tcache_reclaim): a thread
 * that stopped allocating must not pin its cached blocks' slabs.  With
 * nothing to age and no cache that may turn idle, it sleeps without a
 * timeout, until a slow path finds free memory past the floor again and
 * wakes it.  It holds no cache, takes no signal, and is detached: the
 * process exits without it. */
enum { BG_NONE, BG_STARTING, BG_RUNNING, BG_OFF };
static _Atomic int bg_state;
static _Atomic int bg_word;   /* futex: 0 asleep for good, 1 awake or due */
static _Atomic size_t bg_wakeups, bg_returned;

/* Is free memory waiting past the floor? */
static bool idle_due(void) {
  return purge_dirty() > purge_keep() || extent_dirty() > extent_keep() || !large_cache_empty();
}

/* Return what has aged past the floor (no lock held); the bytes. */
static size_t purge_aged(uint32_t now, uint32_t delay) {
  atomic_store_explicit(&walked, now, memory_order_relaxed);
  return chunk_purge(chunk_floor(purge_keep()), now, delay) + extent_purge(extent_keep(), now, delay) +
         large_cache_purge(false, now, delay);
}

static void *bg_main(void *arg) {
  (void)arg;
  for (;;) {
    atomic_store_explicit(&bg_word, 1, memory_order_relaxed); /* awake: wakers need not call */
    atomic_fetch_add_explicit(&bg_wakeups, 1, memory_order_relaxed);
    uint32_t delay = options.purge_delay_ms, now = os_now_ms();
    /* Idle threads' caches first: what they held is then free, and goes
     * back once it has aged like the rest. */
    bool waiting = false;
    tcache_reclaim(now, SMP_CACHE_IDLE_MS, &waiting);
    atomic_fetch_add_explicit(&bg_returned, purge_aged(now, delay), memory_order_relaxed);
    if (idle_due()) { /* more to age: look again in half a delay */
      os_futex_wait_ms(&bg_word, 1, delay / 2 > 10 ? delay / 2 : 10);
      continue;
    }
    atomic_store_explicit(&bg_word, 0, memory_order_seq_cst);
    if (idle_due()) continue; /* freed meanwhile: a waker saw 1 and did not wake */
    if (waiting) /* a thread's cache may turn idle */
      os_futex_wait_ms(&bg_word, 0, SMP_CACHE_IDLE_MS);
    else
      os_futex_wait(&bg_word, 0);
  }
  return NULL;
}

/* The thread is started from an allocation's slow path, past it (alloc.c),
 * once the heap holds SMP_BG_HEAP granules: a heap that big can free a
 * burst worth returning, and the thread is there before it does.  Never
 * from a free: glibc frees a finished thread's TLS holding the lock its
 * pthread_create takes (pthread_join: __nptl_free_stacks), so a thread
 * started there waits for itself (threads-1000 hung so). */
void purge_bg_start(void) {
  size_t blocks, bytes;
  large_counters(&blocks, &bytes);
  int none = BG_NONE;
  if (!options.background) { /* for good: no more looks */
    atomic_compare_exchange_strong(&bg_state, &none, BG_OFF);
    return;
  }
  if (chunk_active() < SMP_BG_HEAP && bytes / SMP_SLAB_SIZE < SMP_BG_HEAP) return;
  if (!atomic_compare_exchange_strong(&bg_state, &none, BG_STARTING)) return;
  atomic_store_explicit(&bg_word, 1, memory_order_relaxed);
  atomic_store(&bg_state, os_thread_start(bg_main, "smpalloc-purge") ? BG_RUNNING : BG_OFF);
}

/* Free memory past the floor: wake the thread (a futex wake: safe from any
 * caller). */
static void bg_poke(void) {
  if (atomic_load_explicit(&bg_state, memory_order_relaxed) == BG_RUNNING &&
      atomic_load_explicit(&bg_word, memory_order_relaxed) == 0 && atomic_exchange(&bg_word, 1) == 0)
    os_futex_wake(&bg_word, 1);
}

bool purge_bg_none(void) { return atomic_load_explicit(&bg_state, memory_order_relaxed) == BG_NONE; }

void purge_bg_fork_child(void) {
  /* The thread is not in the child: it starts again when needed. */
  atomic_store_explicit(&bg_state, BG_NONE, memory_order_relaxed);
  atomic_store_explicit(&bg_word, 0, memory_order_relaxed);
}

void purge_bg_counts(bool *running, size_t *wakeups, size_t *returned) {
  *running = atomic_load_explicit(&bg_state, memory_order_relaxed) == BG_RUNNING;
  *wakeups = atomic_load_explicit(&bg_wakeups, memory_order_relaxed);
  *returned = atomic_load_explicit(&bg_returned, memory_order_relaxed);
}

/* ---- from the slow paths ------------------------------------------------------ */

void purge_due(void) {
  size_t n = purge_dirty(), keep = purge_keep(), c = cap(), ec = extent_cap();
  uint32_t delay = options.purge_delay_ms, now = os_now_ms();
  bool over = n > c, ext_over = extent_dirty() > ec;
  if (over) purge_over(chunk_purge, chunk_dirty, chunk_floor(c / 2 > keep ? c / 2 : keep), now, delay);
  if (ext_over) purge_over(extent_purge, extent_dirty, ec / 2, now, delay);
  size_t ekeep = extent_keep();
  if (!over && !ext_over && (n > keep || extent_dirty() > ekeep) &&
      (uint32_t)(now - atomic_load_explicit(&walked, memory_order_relaxed)) >= delay / 2) {
    atomic_store_explicit(&walked, now, memory_order_relaxed);
    chunk_purge(chunk_floor(keep), now, delay);
    extent_purge(ekeep, now, delay);
  }
  large_cache_purge(false, now, delay);
  if (idle_due()) bg_poke();
}

/* Counted whole, not weighed by their resident share (density_t): the
 * weight keeps free room that a program reuses as it replaces its blocks,
 * and this one has just let go of most of its heap.  (Weighed, by a share
 * that one window or two can pull down, 2 runs of 40 of mem_frag kept 8
 * and 16 MiB after the last free; counted whole, 1.4-1.8 MiB in 110.) */
static bool shrink(bool shrank) {
  size_t dirty = chunk_dirty(), keep = purge_keep();
  if ((dirty <= SMP_BG_HEAP && !shrank) || dirty <= keep || dirty <= chunk_active()) return false;
  chunk_purge(keep, os_now_ms(), 0);
  return true;
}

/* Threads that exit together: while one purges, the granules it took out
 * of the pool are not counted dirty, so another that looked then saw too
 * few, and what it freed after the first had passed its chunks stayed.
 * So one thread shrinks at a time, again as long as others asked, down to
 * the floor of the heap left then (the first went down to the floor of a
 * heap that other threads still held, as they let go of it meanwhile). */
static _Atomic bool left_busy, left_again;

void purge_left(void) {
  atomic_store(&left_again, true);
  bool shrank = false;
  while (atomic_load(&left_again) && !atomic_exchange(&left_busy, true)) {
    while (atomic_exchange(&left_again, false)) shrank |= shrink(shrank);
    atomic_store(&left_busy, false);
  }
  purge_maintain();
}

size_t purge_all(void) {
  uint32_t now = os_now_ms();
  bool waiting;
  tcache_flush();
  tcache_reclaim(now, 0, &waiting); /* other threads' caches, where they are idle */
  slot_collect();
  size_t r = chunk_purge(0, now, 0) + extent_purge(0, now, 0);
  r += large_cache_purge(true, now, 0);
  return r;
}

bool purge_reclaim(void) {
  size_t r = purge_all();
  return r + chunk_unmap_free() > 0;
}
