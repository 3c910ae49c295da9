/*
 * large.c - blocks beyond the slab classes (> SMP_SMALL_MAX, or aligned
 * beyond what a class can give).
 *
 * Up to SMP_RUN_MAX (1 MiB) a large block is a run of whole 64 KiB granules
 * carved from the slab chunks (slab.c): no system call to get or free one,
 * and freed runs are reused, split, and purged like empty slabs.  Realloc
 * of a run copies (cheaper at these sizes than moving pages).
 *
 * Beyond that each is its own mapping, 64 KiB-aligned (or more, for larger
 * alignments),
 * its length rounded to 64 KiB, so that no two of our blocks or slabs ever
 * share a page-map granule.  The block's page-map entry holds the mapping's
 * length: there is no header, and the user's pointer is the mapping's start.
 * Growing and shrinking use mremap, so a big buffer grows without a copy.
 *
 * A freed block of up to SMP_LARGE_CACHE_MAX bytes is not unmapped at once:
 * it waits in a small cache (SMP_LARGE_CACHE_BYTES in all) for a request it
 * can hold (the smallest that fits; a much longer one loses its tail),
 * which then costs no page faults for the pages it already has.  Like
 * empty slabs, cached blocks go back to the kernel after the purge delay, or
 * at once past the budget, or on malloc_trim/smp_collect.  The unmapping is
 * done outside the cache's lock.
 */
#include <string.h>

#include "internal.h"
#include "options.h"

#define LARGE_GRANULE SMP_SLAB_SIZE

/* n rounded up to a whole granule (at least one: aligned_alloc(2 MiB, 0)
 * gets a block too); 0 if that overflows. */
static size_t large_round(size_t n) {
  if (n == 0) return LARGE_GRANULE;
  if (n > SIZE_MAX - (LARGE_GRANULE - 1)) return 0;
  return (n + LARGE_GRANULE - 1) & ~(size_t)(LARGE_GRANULE - 1);
}

/* ---- the cache of freed mappings ---------------------------------------- */

#define LC_ENTRIES 256

typedef struct {
  uintptr_t addr;
  size_t size;
  uint32_t stamp;
} lc_entry_t;

static smp_mutex_t lc_lock;
static lc_entry_t lc[LC_ENTRIES];  /* lc[0..lc_n) in the order they came in */
static unsigned lc_n;
static size_t lc_bytes;
static _Atomic uint32_t lc_oldest;  /* stamp of lc[0], when lc_n > 0 */
static _Atomic unsigned lc_count;

static void lc_remove(unsigned i) {
  lc_bytes -= lc[i].size;
  for (unsigned j = i + 1; j < lc_n; j++) lc[j - 1] = lc[j];
  lc_n--;
  atomic_store_explicit(&lc_count, lc_n, memory_order_relaxed);
  if (lc_n) atomic_store_explicit(&lc_oldest, lc[0].stamp, memory_order_relaxed);
}

/* The smallest cached mapping of at least size bytes, or 0.  One more than
 * a quarter too long loses its tail (unmapped here, outside the lock): its
 * pages already faulted in are what a reuse saves, and the tail's would
 * only be held. */
static lc_entry_t lc_take(size_t size) {
  lc_entry_t got = {0, 0, 0};
  if (atomic_load_explicit(&lc_count, memory_order_relaxed) == 0) return got;
  mutex_lock(&lc_lock);
  unsigned best = LC_ENTRIES;
  for (unsigned i = 0; i < lc_n; i++)
    if (lc[i].size >= size && (best == LC_ENTRIES || lc[i].size < lc[best].size)) best = i;
  if (best != LC_ENTRIES) {
    got = lc[best];
    lc_remove(best);
  }
  mutex_unlock(&lc_lock);
  if (got.addr != 0 && got.size - size > size / 4) {
    os_unmap((void *)(got.addr + size), got.size - size);
    stats_unmapped(got.size - size);
    stats_returned(got.size - size);
    got.size = size;
  }
  return got;
}

/* Unmap the victims collected outside the lock. */
static void lc_unmap(lc_entry_t *v, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    os_unmap((void *)v[i].addr, v[i].size);
    stats_unmapped(v[i].size);
    stats_returned(v[i].size);
  }
}

/* How many bytes the cache may hold: the purge threshold, or a quarter of
 * the large memory in use if more, never past SMP_LARGE_CACHE_BYTES.  So a
 * program that frees all its big blocks keeps little of them. */
static size_t lc_budget(void) {
  size_t quarter = large_in_use() / 4, b = smp_opt.purge_threshold;
  if (quarter > b) b = quarter;
  return b < SMP_LARGE_CACHE_BYTES ? b : SMP_LARGE_CACHE_BYTES;
}

/* Keep the mapping for reuse; false if it is not cacheable. */
static bool lc_put(uintptr_t addr, size_t size) {
  size_t budget = lc_budget();
  if (size > SMP_LARGE_CACHE_MAX || size > budget) return false;
  lc_entry_t victims[LC_ENTRIES + 1];
  unsigned nv = 0;
  mutex_lock(&lc_lock);
  while (lc_n > 0 && (lc_n == LC_ENTRIES || lc_bytes + size > budget)) {
    victims[nv++] = lc[0];
    lc_remove(0);
  }
  lc[lc_n++] = (lc_entry_t){addr, size, os_now_ms()};
  lc_bytes += size;
  atomic_store_explicit(&lc_count, lc_n, memory_order_relaxed);
  atomic_store_explicit(&lc_oldest, lc[0].stamp, memory_order_relaxed);
  mutex_unlock(&lc_lock);
  lc_unmap(victims, nv);
  return true;
}

size_t large_purge(bool all) {
  if (atomic_load_explicit(&lc_count, memory_order_relaxed) == 0) return 0;
  if (!all && (uint32_t)(os_now_ms() - atomic_load_explicit(&lc_oldest, memory_order_relaxed)) <
                  smp_opt.purge_delay_ms)
    return 0;
  lc_entry_t victims[LC_ENTRIES];
  unsigned nv = 0;
  size_t bytes = 0;
  uint32_t now = os_now_ms();
  mutex_lock(&lc_lock);
  while (lc_n > 0 && (all || (uint32_t)(now - lc[0].stamp) >= smp_opt.purge_delay_ms)) {
    bytes += lc[0].size;
    victims[nv++] = lc[0];
    lc_remove(0);
  }
  mutex_unlock(&lc_lock);
  lc_unmap(victims, nv);
  return bytes;
}

void large_fork_prepare(void) { mutex_lock(&lc_lock); }
void large_fork_parent(void) { mutex_unlock(&lc_lock); }
void large_fork_child(void) { atomic_store_explicit(&lc_lock, 0, memory_order_relaxed); }

/* ---- blocks --------------------------------------------------------------- */

static void *large_map(size_t size, size_t align);

void *large_alloc(size_t n, size_t align, bool *zeroed) {
  size_t size = large_round(n);
  if (size == 0 || size > ((size_t)1 << 46)) return NULL;
  if (size <= SMP_RUN_MAX && align <= LARGE_GRANULE) {
    bool z;
    slab_t *run = run_alloc((unsigned)(size >> SMP_SLAB_SHIFT), &z);
    if (run == NULL) return NULL;
    stats_large(size, 1);
    if (zeroed) *zeroed = z;
    return (void *)run->base;
  }
  if (align <= LARGE_GRANULE) {
    lc_entry_t e = lc_take(size);
    if (e.addr != 0) {
      pagemap_set(e.addr, (uint64_t)e.size | PM_LARGE);
      stats_large(e.size, 1);
      if (zeroed) *zeroed = false;
      return (void *)e.addr;
    }
  }
  slab_maintain();
  if (zeroed) *zeroed = true;
  return large_map(size, align);
}

/* A fresh mapping of exactly size bytes (a multiple of the granule), as
 * one kernel mapping (VMA): mremap can only grow or move a block that is
 * one.  NULL when out of memory. */
static void *large_map(size_t size, size_t align) {
  if (align < LARGE_GRANULE) align = LARGE_GRANULE;
  void *p = os_map(size, align);
  /* Out of address space (ulimit -v) or memory: cached blocks hold some;
   * give them back and try once more. */
  if (p == NULL && large_purge(true) > 0) p = os_map(size, align);
  if (p == NULL) {
    /* Still nothing: empty what the calling thread caches and what the
     * slots hold in empty slabs, and unmap the chunks left wholly free. */
    tcache_flush_all();
    slot_collect();
    if (slab_unmap_free_chunks() > 0) p = os_map(size, align);
  }
  if (p == NULL) return NULL;
  if (!pagemap_reserve((uintptr_t)p, size)) {
    os_unmap(p, size);
    return NULL;
  }
  pagemap_set((uintptr_t)p, (uint64_t)size | PM_LARGE);
  stats_mapped(size);
  stats_large(size, 1);
  return p;
}

void large_free(void *p, uint64_t entry) {
  stats_large(large_size(entry), -1);
  if (pm_is_run(entry)) {
    run_free(pm_run(entry));
    slab_maintain();
    return;
  }
  /* Clear the entry first: once unmapped, the range may be mapped again by
   * anyone, us included. */
  pagemap_set((uintptr_t)p, 0);
  if (!lc_put((uintptr_t)p, large_size(entry))) {
    os_unmap(p, large_size(entry));
    stats_unmapped(large_size(entry));
  }
  slab_maintain();
}

void *large_remap(void *p, uint64_t entry, size_t n, size_t align, bool may_move) {
  size_t old = large_size(entry), size = large_round(n);
  if (size == 0 || size > ((size_t)1 << 46)) return NULL;
  if (size == old) return p;
  /* Runs keep their length when shrinking (the part beyond n is never
   * touched) and move by copying when growing: at these sizes a copy is
   * cheaper than moving pages, which costs a TLB shootdown in a threaded
   * process.  A mapping shrinking to run size moves into a run likewise. */
  bool run = pm_is_run(entry);
  if (run && size <= old) return p;
  if (run || (size <= SMP_RUN_MAX && may_move)) {
    if (!may_move) return NULL;
    void *q = large_alloc(n, align, NULL);
    if (q == NULL) return NULL;
    memcpy(q, p, old < size ? old : size);
    large_free(p, entry);
    return q;
  }
  if (os_resize(p, old, size)) {
    pagemap_set((uintptr_t)p, (uint64_t)size | PM_LARGE);
    stats_large(old, -1);
    stats_large(size, 1);
    if (size > old) stats_mapped(size - old); else stats_unmapped(old - size);
    return p;
  }
  if (!may_move) return NULL;
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
    pagemap_set((uintptr_t)p, entry);
    large_free(q, (uint64_t)size | PM_LARGE);
    return NULL;
  }
  /* The old mapping is gone with the move. */
  stats_unmapped(old);
  stats_large(old, -1);
  return q;
}
