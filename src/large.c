/*
 * large.c - runs and mapped blocks, and the cache of freed mappings (see
 * large.h).
 */
#include <string.h>

#include "chunk.h"
#include "extent.h"
#include "large.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "track.h"

#define GRANULE SMP_SLAB_SIZE
#define LARGE_LIMIT ((size_t)1 << 46) /* no block beyond 64 TiB */

static _Atomic size_t n_blocks, n_bytes;

static void large_count(size_t bytes, int sign) {
  if (sign > 0) {
    atomic_fetch_add_explicit(&n_blocks, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_bytes, bytes, memory_order_relaxed);
  } else {
    atomic_fetch_sub_explicit(&n_blocks, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&n_bytes, bytes, memory_order_relaxed);
  }
}

void large_counters(size_t *blocks, size_t *bytes) {
  *blocks = atomic_load_explicit(&n_blocks, memory_order_relaxed);
  *bytes = atomic_load_explicit(&n_bytes, memory_order_relaxed);
}

/* n rounded up to a whole granule (at least one: aligned_alloc(2 MiB, 0)
 * gets a block too); 0 if that overflows or passes the limit. */
static size_t large_round(size_t n) {
  if (n == 0) return GRANULE;
  if (n > LARGE_LIMIT) return 0;
  return (n + GRANULE - 1) & ~(size_t)(GRANULE - 1);
}

size_t large_size(pagemap_entry_t e) {
  if (pagemap_kind(e) == PAGEMAP_RUN) return (size_t)pagemap_desc(e)->cls << SMP_SLAB_SHIFT;
  return pagemap_length(e);
}

/* ---- runs ------------------------------------------------------------------ */

/* Runs are dense (from chunks of huge pages, chunk.h) only where the
 * program is seen to write them whole, and once the heap holds
 * SMP_HUGE_HEAP granules: a huge page faults in 2 MiB where a program may
 * touch one page of a block.  Seen on probes: a run taken from sparse
 * memory whose pages were all clean, measured (its resident pages,
 * os_resident: a system call, made with no lock held) when the next probe
 * is taken (one run in SMP_RUN_PROBE_EVERY is), or when it is freed if
 * that comes first: by then the program has had it; until
 * SMP_RUN_PROBE_PAGES / 32 pages were measured, runs count as dense.  The counts halve past
 * SMP_RUN_PROBE_PAGES, so a program that changes how it writes changes
 * the verdict.  Runs are dense while more than SMP_RUN_EIGHTHS of the
 * probed pages were resident (slabs: SMP_WHOLE_EIGHTHS, slab.c). */
static _Atomic uint32_t probe_pages, probe_resident;
static _Atomic(slab_t *) probe_last; /* the last probe, not measured yet */

static bool large_runs_dense(void) {
  uint32_t seen = atomic_load_explicit(&probe_pages, memory_order_relaxed);
  return seen < SMP_RUN_PROBE_PAGES / 32 ||
         8 * atomic_load_explicit(&probe_resident, memory_order_relaxed) > SMP_RUN_EIGHTHS * seen;
}

/* Count the pages of the probe run.  The thread that takes it out of
 * probe_last counts it, once; it may have been freed and handed out again
 * meanwhile (then the sample is noise: its state and length are read
 * atomically, and os_resident only asks the kernel). */
static void large_probe_count(slab_t *run) {
  if (chunk_state(run) != RUN_USED) return; /* freed meanwhile, or a slab now */
  size_t bytes = (size_t)__atomic_load_n(&run->cls, __ATOMIC_RELAXED) << SMP_SLAB_SHIFT;
  /* A window of the run, scaled (os_resident reads 64 pages at most: a run
   * of 1 MiB written whole read as a quarter written, when all of it was
   * measured so). */
  size_t got = chunk_resident_guess((void *)chunk_base(run), bytes);
  if (got == SIZE_MAX) return;
  uint32_t seen = atomic_load_explicit(&probe_pages, memory_order_relaxed) + (uint32_t)(bytes / os_page_size());
  uint32_t res = atomic_load_explicit(&probe_resident, memory_order_relaxed) + (uint32_t)got;
  if (seen > SMP_RUN_PROBE_PAGES) seen /= 2, res /= 2;
  atomic_store_explicit(&probe_pages, seen, memory_order_relaxed); /* a hint: races lose a sample */
  atomic_store_explicit(&probe_resident, res, memory_order_relaxed);
}

static void *large_run_alloc(unsigned k, bool *zeroed) {
  static __thread unsigned probe_tick; /* a thread's run allocations */
  bool probe = k >= 2 && probe_tick++ % SMP_RUN_PROBE_EVERY == 0;
  bool dense = options.hugepages == 2 || (!probe && chunk_active() >= SMP_HUGE_HEAP && large_runs_dense());
  slab_t *run = chunk_take(k, dense, zeroed);
  while (run == NULL) { /* others may take the room first: grow again */
    if (!chunk_grow(k, dense)) return NULL;
    run = chunk_take(k, dense, zeroed);
  }
  chunk_set_state(run, RUN_USED);
  __atomic_store_n(&run->cls, (uint16_t)k, __ATOMIC_RELAXED); /* read racily: slab.c, slab_class_measure */
  pagemap_set(chunk_base(run), pagemap_run(run));
  if (probe && *zeroed && !run->chunk->huge) {
    slab_t *last = atomic_exchange_explicit(&probe_last, run, memory_order_relaxed);
    if (last != NULL) large_probe_count(last);
  }
  return (void *)chunk_base(run);
}

/* The run is no longer the user's: the probe, if it is one, is measured
 * now, and its page-map entry goes. */
static void large_run_unpublish(slab_t *run) {
  slab_t *me = run;
  if (atomic_load_explicit(&probe_last, memory_order_relaxed) == run &&
      atomic_compare_exchange_strong_explicit(&probe_last, &me, NULL, memory_order_relaxed, memory_order_relaxed))
    large_probe_count(run);
  pagemap_set(chunk_base(run), 0);
}

static void large_run_free(slab_t *run) {
  large_run_unpublish(run);
  chunk_put(run, run->cls, os_now_ms());
}

/* ---- the threads' run caches (large.h) ------------------------------------ */

/* Give back the cached run that *at points to (the link to it). */
static void large_runs_drop(large_runs_t *rc, slab_t **at) {
  slab_t *run = *at;
  *at = run->next;
  rc->granules -= run->cls;
  run->next = NULL;
  chunk_put(run, run->cls, run->stamp); /* aged from its free */
}

/* The longest length cached (rc not empty). */
static unsigned large_runs_longest(const large_runs_t *rc) {
  unsigned k = SMP_RUN_KMAX;
  while (rc->head[k] == NULL) k--;
  return k;
}

/* Could granule descriptor d merge with a run freed next to it: free in
 * the pool, or a cached run's?  (Read with no lock: a hint.  A tail's
 * head may change meanwhile, even to none: descriptors stay mapped.) */
static bool large_mergeable(const slab_t *d) {
  unsigned st = chunk_state(d);
  if (st == RUN_TAIL) {
    const slab_t *head = __atomic_load_n(&d->prev, __ATOMIC_RELAXED);
    st = head != NULL ? chunk_state(head) : G_FRESH;
  }
  return st == G_FREE || st == RUN_CACHED;
}

void *large_runs_take(large_runs_t *rc, size_t n) {
  if (rc == NULL || n > SMP_RUN_MAX) return NULL;
  size_t size = large_round(n);
  unsigned k = (unsigned)(size >> SMP_SLAB_SHIFT);
  slab_t *run = rc->head[k];
  if (run == NULL) {
    large_runs_miss(rc, k);
    return NULL;
  }
  rc->head[k] = run->next;
  rc->granules -= k;
  run->next = NULL;
  chunk_set_state(run, RUN_USED);
  pagemap_set(chunk_base(run), pagemap_run(run));
  large_count(size, 1);
  return track_alloc((void *)chunk_base(run), n, false);
}

void large_runs_miss(large_runs_t *rc, unsigned k) {
  if (rc == NULL || rc->granules == 0) return;
  if (k <= large_runs_longest(rc)) {
    if (rc->granules > rc->limit / 2) large_runs_drop(rc, &rc->head[large_runs_longest(rc)]);
    return;
  }
  for (unsigned j = 1; j < k && j <= SMP_RUN_KMAX; j++)
    for (slab_t **at = &rc->head[j]; *at != NULL;) {
      slab_t *run = *at;
      unsigned i = (unsigned)(run - run->chunk->desc);
      if ((i > 0 && large_mergeable(run - 1)) || (i + j < SMP_CHUNK_SLABS && large_mergeable(run + j)))
        large_runs_drop(rc, at);
      else
        at = &run->next;
    }
}

bool large_runs_put(large_runs_t *rc, pagemap_entry_t e) {
  if (rc == NULL || pagemap_kind(e) != PAGEMAP_RUN || track_running()) return false;
  slab_t *run = pagemap_desc(e);
  unsigned k = run->cls;
  if (k > rc->limit) return false;
  while (rc->granules + k > rc->limit) large_runs_drop(rc, &rc->head[large_runs_longest(rc)]);
  large_count((size_t)k << SMP_SLAB_SHIFT, -1);
  large_run_unpublish(run);
  chunk_set_state(run, RUN_CACHED);
  run->stamp = os_now_ms();
  run->next = rc->head[k];
  rc->head[k] = run;
  rc->granules += k;
  return true;
}

void large_runs_flush(large_runs_t *rc) {
  if (rc == NULL) return;
  while (rc->granules != 0) large_runs_drop(rc, &rc->head[large_runs_longest(rc)]);
}

/* ---- the cache of freed mappings ---------------------------------------- */

typedef struct {
  uintptr_t addr;
  size_t size;
  uint32_t stamp;
} large_cached_t;

static lock_t cache_lock;
static large_cached_t cache[SMP_LARGE_CACHE_ENTRIES]; /* cache[0 .. cache_n) oldest first */
static unsigned cache_n;
static size_t cache_bytes;
static _Atomic uint32_t cache_oldest; /* stamp of cache[0], when cache_n > 0 */
_Atomic unsigned large_n_cached; /* cache_n, for readers with no lock (large.h) */

static void large_cache_remove(unsigned i) {
  cache_bytes -= cache[i].size;
  memmove(&cache[i], &cache[i + 1], (cache_n - i - 1) * sizeof cache[0]);
  cache_n--;
  track_forget(&cache[cache_n], sizeof cache[0]); /* valgrind: its address may be a block's again */
  atomic_store_explicit(&large_n_cached, cache_n, memory_order_relaxed);
  if (cache_n) atomic_store_explicit(&cache_oldest, cache[0].stamp, memory_order_relaxed);
}

/* Put a mapping back in the cache without eviction (its bytes were in the
 * cache a moment ago); false if the cache has no entry free. */
static bool large_cache_return(large_cached_t e) {
  lock_take(&cache_lock);
  bool ok = cache_n < SMP_LARGE_CACHE_ENTRIES;
  if (ok) {
    cache[cache_n++] = e;
    cache_bytes += e.size;
    atomic_store_explicit(&large_n_cached, cache_n, memory_order_relaxed);
    atomic_store_explicit(&cache_oldest, cache[0].stamp, memory_order_relaxed);
  }
  lock_drop(&cache_lock);
  return ok;
}

/* A fresh mapping of size bytes at align (at least a granule): in a region
 * of its own when it is big enough and the address space allows
 * (SMP_LARGE_ALONE); NULL when out of memory. */
static void *large_fresh(size_t size, size_t align) {
  if (align < GRANULE) align = GRANULE;
  void *p = NULL;
  if (size > SMP_LARGE_ALONE && align < SMP_LARGE_REGION) p = os_map(size, SMP_LARGE_REGION, false);
  if (p == NULL) p = os_map(size, align, false);
  if (p != NULL) os_smallpages_unless_asked(p, size); /* never huge pages (config.h, SMP_HUGEPAGES) */
  return p;
}

/* A cached mapping made to hold a block of exactly size bytes, or {0}:
 *   - the smallest cached one of at least size bytes; one more than a
 *     quarter too long is split, and its tail stays cached as a mapping of
 *     its own (its pages stay resident for the next request);
 *   - else the longest shorter one, grown by moving its pages into a fresh
 *     mapping of size bytes (mremap: no copy), so only the new part faults.
 * Either way the pages a reuse saves are the ones already faulted in; the
 * system calls are made outside the lock. */
static large_cached_t large_cache_take(size_t size) {
  large_cached_t got = {0, 0, 0};
  if (atomic_load_explicit(&large_n_cached, memory_order_relaxed) == 0) return got;
  lock_take(&cache_lock);
  unsigned best = SMP_LARGE_CACHE_ENTRIES, below = SMP_LARGE_CACHE_ENTRIES;
  for (unsigned i = 0; i < cache_n; i++) {
    if (cache[i].size >= size) {
      if (best == SMP_LARGE_CACHE_ENTRIES || cache[i].size < cache[best].size) best = i;
    } else if (below == SMP_LARGE_CACHE_ENTRIES || cache[i].size > cache[below].size) {
      below = i;
    }
  }
  if (best == SMP_LARGE_CACHE_ENTRIES) best = below;
  if (best != SMP_LARGE_CACHE_ENTRIES) {
    got = cache[best];
    large_cache_remove(best);
  }
  lock_drop(&cache_lock);
  if (got.addr == 0) return got;
  if (got.size > size) {
    if (got.size - size > size / 4) {
      large_cached_t tail = {got.addr + size, got.size - size, got.stamp};
      if (!large_cache_return(tail)) os_unmap((void *)tail.addr, tail.size);
      got.size = size;
    }
    return got;
  }
  if (got.size < size) {
    void *q = large_fresh(size, GRANULE);
    if (q != NULL && pagemap_reserve((uintptr_t)q, size) &&
        os_move((void *)got.addr, got.size, size, q)) {
      got.addr = (uintptr_t)q;
      got.size = size;
      return got;
    }
    if (q != NULL) os_unmap(q, size);
    if (!large_cache_return(got)) os_unmap((void *)got.addr, got.size);
    got.addr = 0;
  }
  return got;
}

static void large_cache_unmap(const large_cached_t *v, unsigned n) {
  for (unsigned i = 0; i < n; i++) os_unmap((void *)v[i].addr, v[i].size);
}

/* How many bytes the cache may hold: the purge threshold or half the
 * large memory in use, whichever is more, never past
 * SMP_LARGE_CACHE_BYTES. */
static size_t large_cache_budget(void) {
  size_t in = atomic_load_explicit(&n_bytes, memory_order_relaxed);
  size_t b = options.purge_threshold;
  if (in / 2 > b) b = in / 2;
  return b < SMP_LARGE_CACHE_BYTES ? b : SMP_LARGE_CACHE_BYTES;
}

/* Mappings leave the cache (oldest first) in batches of this many, unmapped
 * outside the lock: a small array, so no large stack frame. */
#define EVICT_BATCH 16

/* Keep the mapping for reuse, making room first; false if it is not
 * cacheable. */
static bool large_cache_put(uintptr_t addr, size_t size) {
  size_t budget = large_cache_budget();
  if (size > SMP_LARGE_CACHE_MAX || size > budget) return false;
  large_cached_t victims[EVICT_BATCH];
  for (;;) {
    unsigned nv = 0;
    lock_take(&cache_lock);
    while (nv < EVICT_BATCH && cache_n > 0 &&
           (cache_n == SMP_LARGE_CACHE_ENTRIES || cache_bytes + size > budget)) {
      victims[nv++] = cache[0];
      large_cache_remove(0);
    }
    bool fits = cache_n < SMP_LARGE_CACHE_ENTRIES && cache_bytes + size <= budget;
    if (fits) {
      cache[cache_n++] = (large_cached_t){addr, size, os_now_ms()};
      cache_bytes += size;
      atomic_store_explicit(&large_n_cached, cache_n, memory_order_relaxed);
      atomic_store_explicit(&cache_oldest, cache[0].stamp, memory_order_relaxed);
    }
    lock_drop(&cache_lock);
    large_cache_unmap(victims, nv);
    if (fits) return true;
  }
}

size_t large_cache_purge(bool all, uint32_t now, uint32_t delay) {
  size_t bytes = 0;
  large_cached_t victims[EVICT_BATCH];
  unsigned nv;
  do {
    if (atomic_load_explicit(&large_n_cached, memory_order_relaxed) == 0) break;
    if (!all && (uint32_t)(now - atomic_load_explicit(&cache_oldest, memory_order_relaxed)) < delay)
      break;
    nv = 0;
    lock_take(&cache_lock);
    while (nv < EVICT_BATCH && cache_n > 0 && (all || (uint32_t)(now - cache[0].stamp) >= delay)) {
      bytes += cache[0].size;
      victims[nv++] = cache[0];
      large_cache_remove(0);
    }
    lock_drop(&cache_lock);
    large_cache_unmap(victims, nv);
  } while (nv == EVICT_BATCH);
  return bytes;
}

void large_fork_prepare(void) { lock_take(&cache_lock); }
void large_fork_parent(void) { lock_drop(&cache_lock); }
void large_fork_child(void) { lock_reset(&cache_lock); }

/* ---- blocks --------------------------------------------------------------- */

/* A fresh mapping of exactly size bytes (a multiple of the granule), as one
 * kernel mapping (VMA): mremap can only grow or move a block that is one.
 * NULL when out of memory. */
static void *large_map(size_t size, size_t align) {
  void *p = large_fresh(size, align);
  if (p == NULL) return NULL;
  if (!pagemap_reserve((uintptr_t)p, size)) {
    os_unmap(p, size);
    return NULL;
  }
  pagemap_set((uintptr_t)p, pagemap_map(size));
  large_count(size, 1);
  track_noaccess(p, size); /* valgrind: fresh pages, no block yet (runs: chunk_map) */
  return p;
}

void *large_alloc(size_t n, size_t align, bool *zeroed) {
  size_t size = large_round(n);
  bool z = true;
  if (size == 0) return NULL;
  void *p;
  if (size <= SMP_RUN_MAX && align <= GRANULE) {
    p = large_run_alloc((unsigned)(size >> SMP_SLAB_SHIFT), &z);
    if (p != NULL) large_count(size, 1);
  } else if (size <= SMP_EXTENT_MAX && align <= GRANULE && (p = extent_alloc(size, &z)) != NULL) {
    pagemap_set((uintptr_t)p, pagemap_map(size));
    large_count(size, 1);
  } else {
    large_cached_t e = {0, 0, 0};
    if (align <= GRANULE) e = large_cache_take(size);
    if (e.addr != 0) {
      pagemap_set(e.addr, pagemap_map(e.size));
      large_count(e.size, 1);
      p = (void *)e.addr;
      z = false;
    } else {
      p = large_map(size, align);
    }
  }
  if (zeroed) *zeroed = z;
  return track_alloc(p, n, zeroed != NULL && z);
}

void large_free(void *p, pagemap_entry_t e) {
  size_t size = large_size(e);
  large_count(size, -1);
  if (pagemap_kind(e) == PAGEMAP_RUN) {
    large_run_free(pagemap_desc(e));
    return;
  }
  /* Clear the entry first: once unmapped, the range may be mapped again by
   * anyone, us included. */
  pagemap_set((uintptr_t)p, 0);
  if (extent_owns(p)) extent_free(p, size);
  else if (!large_cache_put((uintptr_t)p, size)) os_unmap(p, size);
}

/* Move the large block p (entry e), of which the caller uses kept bytes, to
 * a new block of n bytes by copying; NULL if out of memory. */
static void *large_copy(void *p, pagemap_entry_t e, size_t n, size_t align, size_t kept) {
  void *q = large_alloc(n, align, NULL);
  if (q == NULL) return NULL;
  memcpy(q, p, kept < n ? kept : n);
  track_free(p);
  large_free(p, e);
  return q;
}

void *large_remap(void *p, pagemap_entry_t e, size_t n, size_t align, bool may_move) {
  size_t old = large_size(e), size = large_round(n);
  if (size == 0) return NULL;
  size_t kept = track_size(p, old); /* valgrind: the size memcheck knows */
  if (size == old) return track_resize(p, kept, n);
  /* Runs keep their length when shrinking (the part beyond n is never
   * touched), grow in place when they can, and otherwise move by copying:
   * at these sizes a copy is cheaper than moving pages, which costs a TLB
   * shootdown in a threaded process.  A mapping shrinking to run size moves
   * into a run likewise. */
  bool run = pagemap_kind(e) == PAGEMAP_RUN;
  if (run && size <= old) return track_resize(p, kept, n);
  /* A run grows in place when the granules after it are free: a growing
   * array next to the free space it leaves behind, or at the end of the
   * chunk being carved. */
  if (run && size <= SMP_RUN_MAX && !track_running()) {
    slab_t *r = pagemap_desc(e);
    if (chunk_extend(r, r->cls, (unsigned)(size >> SMP_SLAB_SHIFT))) {
      __atomic_store_n(&r->cls, (uint16_t)(size >> SMP_SLAB_SHIFT), __ATOMIC_RELAXED);
      large_count(old, -1);
      large_count(size, 1);
      return track_resize(p, kept, n);
    }
  }
  /* A block of an arena shrinks in place, giving its tail back, grows in
   * place into the free granules after it, or moves by copying. */
  if (!run && extent_owns(p)) {
    if (size < old) {
      pagemap_set((uintptr_t)p, pagemap_map(size));
      extent_free((char *)p + size, old - size);
    } else if (size > SMP_EXTENT_MAX || track_running() || !extent_grow(p, old, size)) {
      return may_move ? large_copy(p, e, n, align, kept) : NULL;
    } else {
      pagemap_set((uintptr_t)p, pagemap_map(size));
    }
    large_count(old, -1);
    large_count(size, 1);
    return track_resize(p, kept, n);
  }
  if (run || (size <= SMP_RUN_MAX && may_move))
    return may_move ? large_copy(p, e, n, align, kept) : NULL;
  if (os_resize(p, old, size)) {
    pagemap_set((uintptr_t)p, pagemap_map(size));
    large_count(old, -1);
    large_count(size, 1);
    track_resize(p, kept, n);
    track_noaccess((char *)p + n, size - n); /* valgrind: the pages mremap added */
    return p;
  }
  if (!may_move) return NULL;
  /* Under valgrind, copy: memcheck keeps a block's record and its bytes'
   * state where they are, and mremap would move only the bytes. */
  if (track_running()) return large_copy(p, e, n, align, kept);
  /* Move: take a fresh aligned place (not a cached block: one of another
   * length would leave its tail a separate mapping, which a later mremap of
   * the block refuses), described in the page map before anything moves,
   * then move the pages into it. */
  void *q = large_map(size, align);
  if (q == NULL) return NULL;
  /* Clear p's entry while its pages are still ours: once moved, the range
   * is free and may be handed out (and described) again at once. */
  pagemap_set((uintptr_t)p, 0);
  if (!os_move(p, old, size, q)) {
    pagemap_set((uintptr_t)p, e);
    large_free(q, pagemap_map(size));
    return NULL;
  }
  large_count(old, -1); /* the old mapping is gone with the move */
  return q;
}
