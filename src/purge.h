/*
 * purge.h - the purge policy: when free memory goes back to the kernel, and
 * the one reclaim path that upper layers call when memory runs out.
 *
 * Dirty granules (empty slabs and free runs whose pages may be resident)
 * wait, each by its own age (chunk.h: a stamp per granule):
 *   - beyond `keep` = max(SMP_PURGE_KEEP_SLABS, an eighth of the granules in
 *     use), until they are SMPALLOC_PURGE_DELAY_MS old: memory freed and
 *     taken again within the delay is never returned and faulted in again;
 *   - past `cap` = max(SMPALLOC_PURGE_THRESHOLD for each two threads that
 *     run at once, half the granules in use), at once, the aged ones first,
 *     down to half the cap (hysteresis: one batch, not a system call per
 *     release).  Half, not less: a heap of runs of many lengths keeps a
 *     share of its room free between blocks, which the program reuses.
 * Cached large mappings go after the same delay.  Purging runs from the
 * allocator's own slow paths (purge_maintain, cheap when nothing is due),
 * and, while free memory past the floor waits to age, from a background
 * thread (SMPALLOC_BACKGROUND), so that an idle program returns it too.
 */
#ifndef SMP_PURGE_H
#define SMP_PURGE_H

#include "base.h"
#include "chunk.h"
#include "extent.h"
#include "large.h"

/* The dirty granules that may wait however old: max(SMP_PURGE_KEEP_SLABS,
 * an eighth of the granules in use), counted by their resident share
 * (chunk.h, density_t): purge_dirty. */
static inline size_t purge_keep(void) {
  size_t a = chunk_active() / 8;
  return a > SMP_PURGE_KEEP_SLABS ? a : SMP_PURGE_KEEP_SLABS;
}
static inline size_t purge_dirty(void) { return density_weigh(&chunk_density, chunk_dirty()); }
/* A thread left (its blocks went back): where the heap now holds more
 * free granules than granules in use, and more than SMP_BG_HEAP of them,
 * the program shrank, and what is past purge_keep goes back at once,
 * whatever its age, as glibc trims its heap as it frees; then
 * purge_maintain.  No lock may be held.  (Not on every free: a program
 * that frees its heap between rounds of work, as realloc-grow does, takes
 * it back at once; not for a small heap: mleak's rounds of threads that
 * exit took 0.59x glibc's time instead of 0.42x.) */
SMP_HIDDEN void purge_left(void);
/* purge_maintain past its common case. */
SMP_HIDDEN void purge_due(void);
/* Purge what is due.  No lock may be held.  Inline, as every slow path
 * calls it: the common case (few dirty granules, no cached mapping) is
 * five relaxed loads and no call; otherwise a thread looks at the policy on
 * one slow path in SMP_PURGE_EVERY (it reads the clock and the caps: in a
 * heap of runs replaced at random, 130 instructions an operation). */
SMP_HIDDEN extern __thread unsigned purge_tick;
static inline void purge_maintain(void) {
  if (likely(purge_dirty() <= purge_keep() && extent_dirty() == 0 && large_cache_empty())) return;
  if (++purge_tick % SMP_PURGE_EVERY != 0) return;
  purge_due();
}
/* Is there no background thread yet (a relaxed read)? */
SMP_HIDDEN bool purge_bg_none(void);
/* Start it, once a process, if the heap is big enough (purge.c).  Called
 * only past an allocation's slow path, outside it: creating a thread
 * allocates, and takes locks of libc's that a free may be called under. */
SMP_HIDDEN void purge_bg_start(void);
/* In a child after fork: no thread there; it starts again when needed. */
SMP_HIDDEN void purge_bg_fork_child(void);
/* Statistics: is it running, how often it woke, the bytes it returned. */
SMP_HIDDEN void purge_bg_counts(bool *running, size_t *wakeups, size_t *returned);
/* Return everything free now: the calling thread's cache, empty current
 * slabs, every dirty granule and cached mapping.  Returns the bytes. */
SMP_HIDDEN size_t purge_all(void);
/* Out of memory: purge_all, then unmap chunks left wholly free.  True if
 * anything was returned (worth trying again). */
SMP_HIDDEN bool purge_reclaim(void);

#endif /* SMP_PURGE_H */
