/*
 * purge.c - the purge policy and the reclaim path (see purge.h).
 */
#include "chunk.h"
#include "large.h"
#include "options.h"
#include "os.h"
#include "purge.h"
#include "slot.h"
#include "tcache.h"

/* max(the threshold for each two threads that run at once, an eighth of
 * the granules in use).  Threads that run at once are those with a cache,
 * at most one a slot: each frees and allocates again in bursts of its own
 * (realloc-grow on 16 CPUs: 16 threads free 16 MiB each between rounds;
 * with one 64 MiB cap for all of them the second round faulted back in what
 * the first had returned, 0.97x glibc's wall instead of 0.79x). */
static size_t cap(void) {
  unsigned run = tcache_threads(), slots = slot_count();
  if (run > slots) run = slots;
  size_t a = chunk_active() / 8, t = options.purge_threshold / SMP_SLAB_SIZE * (run > 3 ? run / 2 : 1);
  return a > t ? a : t;
}

/* When the free runs were last walked for aged ones (their ages are not
 * kept in order: a walk looks at every run, so at most one per half
 * delay). */
static _Atomic uint32_t runs_walked;

static bool runs_due(uint32_t now) {
  return chunk_dirty_runs() > 0 &&
         (uint32_t)(now - atomic_load_explicit(&runs_walked, memory_order_relaxed)) >=
             options.purge_delay_ms / 2;
}

void purge_due(void) {
  size_t n = chunk_dirty(), keep = purge_keep();
  size_t c = cap();
  uint32_t delay = options.purge_delay_ms, now = os_now_ms();
  bool over = n > c;
  bool aged = !over && n > keep && chunk_dirty_singles() > 0 &&
              (uint32_t)(now - chunk_dirty_oldest()) >= delay;
  if (over || runs_due(now)) {
    if (!over) atomic_store_explicit(&runs_walked, now, memory_order_relaxed);
    chunk_purge_runs(over, now, delay);
  }
  if (over) chunk_purge(c / 2 > keep ? c / 2 : keep, false, now, delay);
  else if (aged) chunk_purge(keep, true, now, delay);
  large_cache_purge(false, now, options.purge_delay_ms);
}

size_t purge_all(void) {
  uint32_t now = os_now_ms();
  tcache_flush();
  slot_collect();
  size_t r = chunk_purge_runs(true, now, 0) + chunk_purge(0, false, now, 0);
  r += large_cache_purge(true, now, 0);
  return r;
}

bool purge_reclaim(void) {
  size_t r = purge_all();
  return r + chunk_unmap_free() > 0;
}
