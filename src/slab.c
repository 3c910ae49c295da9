/*
 * slab.c - 64 KiB slabs, their descriptors, and the pool of empty slabs.
 *
 * Slabs are carved in address order from chunks of SMP_CHUNK_SIZE bytes,
 * mapped 64 KiB-aligned, so a block's slab is its address with the low 16
 * bits cleared.  A slab carries no header: its descriptor (slab_t, in
 * metadata memory) is found through the page map.  Memory is touched only
 * when a block is handed out, so an unused tail costs address space, not RSS.
 *
 * An empty slab leaves its class for the pool.  Pooled slabs are "dirty"
 * (pages still resident) until they have waited SMP_PURGE_DELAY_MS or the
 * dirty total passes SMP_PURGE_THRESHOLD; then slab_purge() returns their
 * pages to the kernel (they become "clean").  Reuse prefers dirty slabs (no
 * page faults), then clean ones, then fresh chunk space.
 *
 * Lock order: slot lock, then slab_lock; meta_lock is taken alone or under
 * slab_lock.  No system call is made under any of these locks: chunks and
 * metadata regions are mapped with no lock held, then installed.
 */
#include <string.h>

#include "internal.h"
#include "options.h"

static smp_mutex_t slab_lock;
uintptr_t smp_canary;
static uintptr_t chunk_next, chunk_end;  /* the uncarved part of the current chunk */
static slab_t *chunk_desc;               /* descriptors of the current chunk's slabs */

/* Every chunk's descriptors, for statistics walks. */
typedef struct chunk_meta_s {
  struct chunk_meta_s *next;
  slab_t desc[SMP_CHUNK_SIZE / SMP_SLAB_SIZE];
} chunk_meta_t;
static chunk_meta_t *chunks;

/* The pool: dirty slabs newest first (purging takes from the tail), and
 * clean ones. */
static slab_t *dirty_head, *dirty_tail, *clean_head;
static _Atomic size_t dirty_count;
static _Atomic uint32_t dirty_oldest;  /* stamp of dirty_tail, when any */
static _Atomic size_t active_slabs;    /* granules in use: slabs of a class, runs */
static _Atomic size_t active_peak;     /* their most since the last delayed purge */

/* Count k more granules in use (and the peak). */
static void active_add(size_t k) {
  size_t a = atomic_fetch_add_explicit(&active_slabs, k, memory_order_relaxed) + k;
  if (a > atomic_load_explicit(&active_peak, memory_order_relaxed))
    atomic_store_explicit(&active_peak, a, memory_order_relaxed); /* racy: a hint */
}

#define lock_acquire mutex_lock
#define lock_release mutex_unlock

/* ---- metadata ----------------------------------------------------------- */

#define META_REGION (256u << 10)
static smp_mutex_t meta_lock;
static uintptr_t meta_next, meta_end;

void *meta_alloc(size_t size) {
  size = (size + 63) & ~(size_t)63; /* cache-line granularity */
  for (;;) {
    lock_acquire(&meta_lock);
    if (meta_end - meta_next >= size) {
      void *p = (void *)meta_next;
      meta_next += size;
      lock_release(&meta_lock);
      return p;
    }
    lock_release(&meta_lock);
    /* Map a new region with no lock held, then install it; if another
     * thread installed one meanwhile, ours replaces it (the rest of theirs
     * is lost: at most one region, and only in that race). */
    size_t region = size > META_REGION ? (size + SMP_PAGE_SIZE - 1) & ~(size_t)(SMP_PAGE_SIZE - 1)
                                       : META_REGION;
    void *m = os_map(region, SMP_PAGE_SIZE);
    if (m == NULL) return NULL;
    lock_acquire(&meta_lock);
    meta_next = (uintptr_t)m;
    meta_end = meta_next + region;
    lock_release(&meta_lock);
  }
}

/* ---- taking and growing ------------------------------------------------- */

#define CHUNK_SLABS (SMP_CHUNK_SIZE / SMP_SLAB_SIZE)

static void dirty_unlink(slab_t *sl) {
  if (sl->prev) sl->prev->next = sl->next; else dirty_head = sl->next;
  if (sl->next) sl->next->prev = sl->prev; else dirty_tail = sl->prev;
  atomic_store_explicit(&dirty_count, atomic_load_explicit(&dirty_count, memory_order_relaxed) - 1,
                        memory_order_relaxed);
  if (dirty_tail) atomic_store_explicit(&dirty_oldest, dirty_tail->stamp, memory_order_relaxed);
}

static slab_t *run_take(unsigned k, bool dirty, bool *zeroed);

/* One free granule, for a slab or a one-granule run (slab_lock held):
 * resident ones first (a dirty slab, then a granule split off a dirty run:
 * no page faults), then clean ones, fresh chunk space, and last a granule
 * of a clean run (longer runs are kept for large blocks).  NULL if none. */
static slab_t *granule_take(bool *zero) {
  slab_t *sl;
  if ((sl = dirty_head) != NULL) {
    dirty_unlink(sl);
    *zero = false;
  } else if ((sl = run_take(1, true, zero)) != NULL) {
  } else if ((sl = clean_head) != NULL) {
    clean_head = sl->next;
    *zero = true;
  } else if (chunk_next != chunk_end) {
    sl = &chunk_desc[(chunk_next - (chunk_end - SMP_CHUNK_SIZE)) / SMP_SLAB_SIZE];
    chunk_next += SMP_SLAB_SIZE;
    *zero = true;
  } else {
    sl = run_take(1, false, zero);
  }
  if (sl != NULL) sl->pool = 0; /* out of the pool */
  return sl;
}

slab_t *slab_get(unsigned cls, unsigned owner) {
  bool zero;
  lock_acquire(&slab_lock);
  slab_t *sl = granule_take(&zero);
  lock_release(&slab_lock);
  if (sl == NULL) return NULL;
  sl->zero = zero;
  /* Every block free but the bitmap's own: bits [first, first + count). */
  uint32_t first = smp_class[cls].first, end = first + smp_class[cls].count;
  uint64_t *bits = sl->bits = first ? (uint64_t *)sl->base : &sl->word;
  for (uint32_t w = 0; w < (end + 63) / 64; w++) {
    uint64_t lo = w * 64 >= first ? ~(uint64_t)0 : w * 64 + 64 <= first ? 0 : ~(uint64_t)0 << (first % 64);
    uint64_t hi = (w + 1) * 64 <= end ? ~(uint64_t)0 : ((uint64_t)1 << (end % 64)) - 1;
    bits[w] = lo & hi;
  }
  sl->hint = (uint16_t)(first / 64);
  sl->high = (uint16_t)first;
  sl->next = sl->prev = NULL;
  sl->used = 0;
  sl->cls = (uint16_t)cls;
  sl->owner = (uint16_t)owner;
  sl->state = SLAB_CUR;
  active_add(1);
  pagemap_set(sl->base, pm_slab_entry(sl, cls, owner));
  return sl;
}

/* Map a chunk and its descriptors, with no lock held.  NULL when out of
 * memory (cached large blocks are given back first). */
static chunk_meta_t *chunk_map(void) {
  void *c = os_map(SMP_CHUNK_SIZE, SMP_SLAB_SIZE);
  if (c == NULL && large_purge(true) > 0) c = os_map(SMP_CHUNK_SIZE, SMP_SLAB_SIZE);
  chunk_meta_t *cm = meta_alloc(sizeof *cm);
  if (c == NULL || cm == NULL || !pagemap_reserve((uintptr_t)c, SMP_CHUNK_SIZE)) {
    if (c != NULL) os_unmap(c, SMP_CHUNK_SIZE);
    return NULL; /* cm is metadata: not reusable, at worst 4 KiB lost */
  }
  slab_t *d = cm->desc;
  for (unsigned i = 0; i < CHUNK_SLABS; i++) d[i].base = (uintptr_t)c + i * SMP_SLAB_SIZE;
  stats_mapped(SMP_CHUNK_SIZE);
  return cm;
}

/* Make cm the chunk slabs and runs are carved from (slab_lock held).  What
 * is left of the previous one joins the pool as clean single slabs. */
static void chunk_install(chunk_meta_t *cm) {
  if (smp_canary == 0) smp_canary = (uintptr_t)(os_random() | 1);
  for (; chunk_next != chunk_end; chunk_next += SMP_SLAB_SIZE) {
    slab_t *sl = &chunk_desc[(chunk_next - (chunk_end - SMP_CHUNK_SIZE)) / SMP_SLAB_SIZE];
    sl->state = sl->pool = SLAB_CLEAN;
    sl->next = clean_head;
    clean_head = sl;
  }
  cm->next = chunks;
  chunks = cm;
  chunk_desc = cm->desc;
  chunk_next = cm->desc[0].base;
  chunk_end = chunk_next + SMP_CHUNK_SIZE;
}

bool slab_grow(void) {
  lock_acquire(&slab_lock);
  bool room = chunk_next != chunk_end || dirty_head != NULL || clean_head != NULL;
  lock_release(&slab_lock);
  if (room) return true; /* another thread grew it meanwhile */
  chunk_meta_t *cm = chunk_map();
  if (cm == NULL) return false;
  lock_acquire(&slab_lock);
  chunk_install(cm);
  lock_release(&slab_lock);
  return true;
}

/* ---- runs ------------------------------------------------------------------ */

static size_t dirty_cap(void);

#define RUN_KMAX (SMP_RUN_MAX / SMP_SLAB_SIZE)

/* Free runs by length, newest first: dirty (pages resident) and clean. */
static slab_t *run_dirty[RUN_KMAX + 1], *run_clean[RUN_KMAX + 1];
static _Atomic size_t run_dirty_slabs;  /* granules in dirty runs */

/* Carve k granules from the current chunk, or NULL (slab_lock held). */
static slab_t *run_carve(unsigned k) {
  if (chunk_end - chunk_next < (uintptr_t)k * SMP_SLAB_SIZE) return NULL;
  slab_t *sl = &chunk_desc[(chunk_next - (chunk_end - SMP_CHUNK_SIZE)) / SMP_SLAB_SIZE];
  for (unsigned i = 1; i < k; i++) {
    sl[i].state = RUN_TAIL;
    sl[i].pool = 0;
  }
  chunk_next += (uintptr_t)k * SMP_SLAB_SIZE;
  return sl;
}

/* Put a free run of k granules starting at sl on its list (slab_lock held). */
static void run_list_push(slab_t *sl, unsigned k, bool dirty, uint32_t stamp) {
  sl->cls = (uint16_t)k;
  sl->stamp = stamp;
  if (dirty) {
    sl->state = sl->pool = RUN_DIRTY;
    sl->next = run_dirty[k];
    run_dirty[k] = sl;
    atomic_fetch_add_explicit(&run_dirty_slabs, k, memory_order_relaxed);
  } else {
    sl->state = sl->pool = RUN_CLEAN;
    sl->next = run_clean[k];
    run_clean[k] = sl;
  }
}

/* A free run of at least k granules from the dirty (pages resident) or the
 * clean lists, the shortest that fits, its first k taken and the rest put
 * back as a shorter run.  NULL if none (slab_lock held). */
static slab_t *run_take(unsigned k, bool dirty, bool *zeroed) {
  slab_t **lists = dirty ? run_dirty : run_clean;
  for (unsigned j = k; j <= RUN_KMAX; j++) {
    slab_t *sl = lists[j];
    if (sl == NULL) continue;
    lists[j] = sl->next;
    if (dirty) atomic_fetch_sub_explicit(&run_dirty_slabs, j, memory_order_relaxed);
    if (j > k) run_list_push(&sl[k], j - k, dirty, sl->stamp);
    *zeroed = !dirty;
    sl->pool = 0;
    return sl;
  }
  return NULL;
}

slab_t *run_alloc(unsigned k, bool *zeroed) {
  slab_t *sl;
  chunk_meta_t *cm = NULL;
  lock_acquire(&slab_lock);
  for (;;) {
    if (k == 1 && (sl = granule_take(zeroed)) != NULL) {
      /* one granule: from the pool shared with slabs */
    } else if (k > 1 && ((sl = run_take(k, true, zeroed)) != NULL ||
                         (sl = run_take(k, false, zeroed)) != NULL)) {
      /* taken from a free run */
    } else if ((sl = run_carve(k)) != NULL) {
      *zeroed = true;
    } else if (cm != NULL) {
      chunk_install(cm); /* cannot fail to hold k <= RUN_KMAX granules */
      cm = NULL;
      continue;
    } else {
      lock_release(&slab_lock);
      if ((cm = chunk_map()) == NULL) return NULL;
      lock_acquire(&slab_lock);
      continue;
    }
    break;
  }
  if (cm != NULL) chunk_install(cm); /* mapped in vain: its slabs join the pool */
  sl->state = RUN_USED;
  sl->pool = 0;
  lock_release(&slab_lock);
  sl->cls = (uint16_t)k;
  active_add(k);
  pagemap_set(sl->base, (uint64_t)(uintptr_t)sl | PM_LARGE | PM_RUN);
  return sl;
}

static void dirty_push(slab_t *sl, uint32_t now);

void run_free(slab_t *sl) {
  pagemap_set(sl->base, 0);
  atomic_fetch_sub_explicit(&active_slabs, sl->cls, memory_order_relaxed);
  uint32_t now = os_now_ms();
  lock_acquire(&slab_lock);
  if (sl->cls == 1) dirty_push(sl, now); /* a lone granule joins the slabs' pool */
  else run_list_push(sl, sl->cls, true, now);
  lock_release(&slab_lock);
}

/* When the dirty run lists were last walked for aged runs (their ages are
 * not kept in order: a walk looks at every run, so at most one per half
 * delay). */
static _Atomic uint32_t run_walked;

/* Return the pages of dirty runs: all of them with `all`, else those older
 * than the delay.  No lock may be held. */
static size_t run_purge(bool all, uint32_t now) {
  if (atomic_load_explicit(&run_dirty_slabs, memory_order_relaxed) == 0) return 0;
  if (!all) atomic_store_explicit(&run_walked, now, memory_order_relaxed);
  slab_t *batch = NULL;
  size_t returned = 0;
  lock_acquire(&slab_lock);
  for (unsigned k = 1; k <= RUN_KMAX; k++)
    for (slab_t **link = &run_dirty[k]; *link != NULL;) {
      slab_t *sl = *link;
      if (all || (uint32_t)(now - sl->stamp) >= smp_opt.purge_delay_ms) {
        *link = sl->next;
        sl->state = sl->pool = RUN_PURGING;
        sl->next = batch;
        batch = sl;
        atomic_fetch_sub_explicit(&run_dirty_slabs, k, memory_order_relaxed);
      } else {
        link = &sl->next;
      }
    }
  lock_release(&slab_lock);
  for (slab_t *sl = batch; sl != NULL; sl = sl->next) {
    os_decommit((void *)sl->base, (size_t)sl->cls << SMP_SLAB_SHIFT);
    returned += (size_t)sl->cls << SMP_SLAB_SHIFT;
  }
  lock_acquire(&slab_lock);
  while (batch != NULL) {
    slab_t *sl = batch;
    batch = sl->next;
    sl->state = sl->pool = RUN_CLEAN;
    sl->next = run_clean[sl->cls];
    run_clean[sl->cls] = sl;
  }
  lock_release(&slab_lock);
  return returned;
}

/* ---- the pool ----------------------------------------------------------- */

void slab_release(slab_t *sl) {
  pagemap_set(sl->base, 0); /* from now on a free() into it is an invalid pointer */
  atomic_fetch_sub_explicit(&active_slabs, 1, memory_order_relaxed);
  uint32_t now = os_now_ms();
  lock_acquire(&slab_lock);
  dirty_push(sl, now);
  lock_release(&slab_lock);
}

/* Put the empty granule sl on the dirty list, newest first (slab_lock held). */
static void dirty_push(slab_t *sl, uint32_t now) {
  /* Pool states change only under slab_lock: purge_pick and
   * slab_unmap_free_chunks read them while walking the chunks. */
  sl->state = sl->pool = SLAB_DIRTY;
  sl->stamp = now;
  sl->prev = NULL;
  sl->next = dirty_head;
  if (dirty_head) dirty_head->prev = sl; else dirty_tail = sl;
  dirty_head = sl;
  atomic_store_explicit(&dirty_count, atomic_load_explicit(&dirty_count, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  atomic_store_explicit(&dirty_oldest, dirty_tail->stamp, memory_order_relaxed);
}

/* The purge policy.  Dirty granules (empty slabs and free runs whose pages
 * are still resident) may wait:
 *   - up to `cap` of them, however young: max(SMPALLOC_PURGE_THRESHOLD, an
 *     eighth of the granules in use, and - unless the threshold was set -
 *     the headroom between the granules in use and their peak since the
 *     last delayed purge, at most SMP_PURGE_PEAK_MAX); past it they go back
 *     at once, down to half the cap: runs first, then slabs in address
 *     order, merged into ranges.
 *     (Hysteresis: purging only down to the cap would make every release
 *     past it a system call and a TLB shootdown of its own.)  The headroom
 *     term lets a program that frees a burst and allocates it again (a
 *     server between requests, a build step between files) keep its pages:
 *     in use + dirty then stays within the peak it already reached, so the
 *     peak RSS does not grow, and the delay still returns what stays unused.
 *   - beyond `keep` = max(SMP_PURGE_KEEP_SLABS, an eighth of the granules in
 *     use), only until they are SMPALLOC_PURGE_DELAY_MS old.
 * A busy heap so keeps a little slack instead of returning pages it would
 * fault back in a moment later (each return also costs a TLB shootdown
 * across the process's threads); an emptied heap falls to the floor. */
static size_t dirty_eighth(void) {
  return atomic_load_explicit(&active_slabs, memory_order_relaxed) / 8;
}
static size_t dirty_keep(void) {
  size_t a = dirty_eighth();
  return a > SMP_PURGE_KEEP_SLABS ? a : SMP_PURGE_KEEP_SLABS;
}
static size_t dirty_cap(void) {
  size_t a = dirty_eighth(), t = smp_opt.purge_threshold / SMP_SLAB_SIZE;
  if (smp_opt.purge_peak) { /* the default: also the headroom below the peak */
    size_t in = atomic_load_explicit(&active_slabs, memory_order_relaxed);
    size_t pk = atomic_load_explicit(&active_peak, memory_order_relaxed);
    size_t room = pk > in ? pk - in : 0;
    if (room > SMP_PURGE_PEAK_MAX / SMP_SLAB_SIZE) room = SMP_PURGE_PEAK_MAX / SMP_SLAB_SIZE;
    if (room > t) t = room;
  }
  return a > t ? a : t;
}

static size_t dirty_total(void) {
  return atomic_load_explicit(&dirty_count, memory_order_relaxed) +
         atomic_load_explicit(&run_dirty_slabs, memory_order_relaxed);
}

/* Are the dirty runs worth a walk for aged ones? */
static bool run_walk_due(uint32_t now) {
  return atomic_load_explicit(&run_dirty_slabs, memory_order_relaxed) > 0 &&
         (uint32_t)(now - atomic_load_explicit(&run_walked, memory_order_relaxed)) >=
             smp_opt.purge_delay_ms / 2;
}

bool slab_purge_due(void) {
  size_t n = dirty_total();
  if (n > dirty_cap()) return true;
  if (n <= dirty_keep()) return false;
  uint32_t now = os_now_ms();
  if (atomic_load_explicit(&dirty_count, memory_order_relaxed) > 0 &&
      (uint32_t)(now - atomic_load_explicit(&dirty_oldest, memory_order_relaxed)) >=
          smp_opt.purge_delay_ms)
    return true;
  return run_walk_due(now);
}

/* A run of neighbouring slabs being purged: one system call. */
typedef struct {
  slab_t *first;
  unsigned n;
} purge_range_t;

#define PURGE_RANGES 128

/* Pick dirty slabs to purge, chunk by chunk in address order, so that
 * neighbours merge into one range (one madvise, one TLB shootdown, however
 * the slabs were freed), until `floor` dirty slabs are left; with `aged`,
 * only those that waited the delay.  slab_lock held; returns the number of
 * ranges filled. */
static unsigned purge_pick(size_t floor, bool aged, uint32_t now, purge_range_t *r) {
  size_t count = atomic_load_explicit(&dirty_count, memory_order_relaxed);
  unsigned nr = 0;
  for (chunk_meta_t *cm = chunks; cm != NULL && count > floor; cm = cm->next) {
    for (unsigned i = 0; i < CHUNK_SLABS && count > floor; i++) {
      slab_t *sl = &cm->desc[i];
      if (sl->pool != SLAB_DIRTY) continue;
      if (aged && (uint32_t)(now - sl->stamp) < smp_opt.purge_delay_ms) continue;
      if (nr > 0 && r[nr - 1].first + r[nr - 1].n == sl) {
        r[nr - 1].n++;
      } else {
        if (nr == PURGE_RANGES) return nr;
        r[nr].first = sl;
        r[nr].n = 1;
        nr++;
      }
      dirty_unlink(sl);
      sl->state = sl->pool = SLAB_PURGING;
      count--;
    }
  }
  return nr;
}

size_t slab_purge(bool all) {
  uint32_t now = os_now_ms();
  size_t cap = dirty_cap(), keep = dirty_keep(), floor = 0;
  bool over = dirty_total() > cap, aged = !all && !over;
  size_t returned = 0;
  if (all || over || run_walk_due(now)) returned = run_purge(all || over, now);
  if (over) floor = cap / 2 > keep ? cap / 2 : keep;
  else if (!all) floor = keep;
  purge_range_t r[PURGE_RANGES];
  for (;;) {
    lock_acquire(&slab_lock);
    unsigned nr = purge_pick(floor, aged, now, r);
    lock_release(&slab_lock);
    if (nr == 0) break;
    for (unsigned i = 0; i < nr; i++) {
      os_decommit((void *)r[i].first->base, (size_t)r[i].n * SMP_SLAB_SIZE);
      returned += (size_t)r[i].n * SMP_SLAB_SIZE;
    }
    lock_acquire(&slab_lock);
    for (unsigned i = 0; i < nr; i++)
      for (unsigned j = 0; j < r[i].n; j++) {
        slab_t *sl = r[i].first + j;
        sl->state = sl->pool = SLAB_CLEAN;
        sl->next = clean_head;
        clean_head = sl;
      }
    lock_release(&slab_lock);
    if (nr < PURGE_RANGES) break;
  }
  if (returned) stats_returned(returned);
  /* Memory that waited the delay unused: the slack the peak allowed is not
   * needed; count the peak from here. */
  if (returned && !over)
    atomic_store_explicit(&active_peak, atomic_load_explicit(&active_slabs, memory_order_relaxed),
                          memory_order_relaxed);
  return returned;
}

void slab_maintain(void) {
  if (slab_purge_due()) slab_purge(false);
  large_purge(false);
}

/* ---- giving address space back -------------------------------------------- */

static bool pooled(const slab_t *sl) { return sl->pool == SLAB_DIRTY || sl->pool == SLAB_CLEAN; }

size_t slab_unmap_free_chunks(void) {
  uintptr_t gone[16];
  unsigned n = 0;
  lock_acquire(&slab_lock);
  for (chunk_meta_t *cm = chunks; cm != NULL && n < 16; cm = cm->next) {
    if (cm->desc == chunk_desc) continue; /* still being carved */
    bool all = true;
    for (unsigned i = 0; i < CHUNK_SLABS && all; i++) all = pooled(&cm->desc[i]);
    if (!all) continue;
    for (unsigned i = 0; i < CHUNK_SLABS; i++) cm->desc[i].state = cm->desc[i].pool = SLAB_GONE;
    gone[n++] = cm->desc[0].base;
  }
  if (n > 0) { /* drop the gone slabs from both pool lists */
    slab_t *d = dirty_head;
    dirty_head = dirty_tail = NULL;
    size_t count = 0;
    while (d != NULL) {
      slab_t *next = d->next;
      if (d->pool == SLAB_DIRTY) {
        d->next = NULL;
        d->prev = dirty_tail;
        if (dirty_tail) dirty_tail->next = d; else dirty_head = d;
        dirty_tail = d;
        count++;
      }
      d = next;
    }
    atomic_store_explicit(&dirty_count, count, memory_order_relaxed);
    if (dirty_tail) atomic_store_explicit(&dirty_oldest, dirty_tail->stamp, memory_order_relaxed);
    slab_t **link = &clean_head;
    while (*link != NULL) {
      if ((*link)->pool == SLAB_GONE) *link = (*link)->next;
      else link = &(*link)->next;
    }
  }
  lock_release(&slab_lock);
  /* The descriptors stay (SLAB_GONE, never reused): 4 KiB per chunk. */
  for (unsigned i = 0; i < n; i++) {
    os_unmap((void *)gone[i], SMP_CHUNK_SIZE);
    stats_unmapped(SMP_CHUNK_SIZE);
  }
  return (size_t)n * SMP_CHUNK_SIZE;
}

/* ---- walking (statistics) ----------------------------------------------- */

/* The caller holds every slot lock (slot_lock_all), so descriptors of
 * slabs in use are stable; pool fields are stable under slab_lock. */
void slab_walk(void (*fn)(const slab_t *sl, void *arg), void *arg) {
  lock_acquire(&slab_lock);
  for (chunk_meta_t *cm = chunks; cm != NULL; cm = cm->next)
    for (unsigned i = 0; i < CHUNK_SLABS; i++) fn(&cm->desc[i], arg);
  lock_release(&slab_lock);
}

void slab_pool_counts(size_t *dirty, size_t *clean) {
  lock_acquire(&slab_lock);
  size_t c = 0;
  for (slab_t *sl = clean_head; sl != NULL; sl = sl->next) c++;
  /* (chunks given back are no longer mapped: not counted) */
  *dirty = atomic_load_explicit(&dirty_count, memory_order_relaxed);
  *clean = c;
  lock_release(&slab_lock);
}

void slab_fork_prepare(void) {
  lock_acquire(&slab_lock);
  lock_acquire(&meta_lock);
}
void slab_fork_parent(void) {
  lock_release(&meta_lock);
  lock_release(&slab_lock);
}
void slab_fork_child(void) {
  atomic_store_explicit(&meta_lock, 0, memory_order_relaxed);
  atomic_store_explicit(&slab_lock, 0, memory_order_relaxed);
}
