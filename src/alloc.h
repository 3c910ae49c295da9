/*
 * alloc.h - the fast paths of malloc and free, and what override.c needs of
 * alloc.c beyond the public smp_* functions.
 *
 * The fast paths are here, inline, so that malloc and free (override.c) run
 * them directly, like smp_malloc and smp_free (alloc.c): a libc name that
 * jumped to its smp_* twin would cost an instruction a call.  Everything
 * past them - a miss, an overflow, a large block, a bad pointer - is a tail
 * jump into alloc.c (or os_proc.c's os_fail), so neither builds a stack frame
 * (tests/api/t_fastpath_frame.sh reads the disassembly).
 */
#ifndef SMP_ALLOC_H
#define SMP_ALLOC_H

#include "base.h"
#include "os.h"
#include "pagemap.h"
#include "slab.h"
#include "tcache.h"
#include "track.h"

/* The messages of the pointer checks. */
SMP_HIDDEN extern const char alloc_bad_interior[], alloc_bad_never[], alloc_bad_double[];

/* The slow paths (alloc.c): a block of n bytes, any size (the thread cache
 * missed, or n > 1024), or NULL with errno ENOMEM; the small block p of slab
 * sl that its thread cache did not take; a large block (or NULL). */
SMP_HIDDEN void *alloc_slow(size_t n); /* every malloc while samples are on */
SMP_HIDDEN void free_small_slow(void *p, const slab_t *sl, const char *who);
SMP_HIDDEN void free_large(void *p, pagemap_entry_t e, const char *who);
/* free of p, which the flat page map does not cover (pagemap.h). */
SMP_HIDDEN void free_other(void *p, const char *who);

/* Is p a block start of slab sl that was handed out?  One multiply and
 * one compare with the slab's high-water mark (class_mark, sizeclass.h).
 * Returns the message for os_fail, or NULL. */
static inline const char *small_bad(const void *p, const slab_t *sl) {
  uint32_t mark = class_mark((uint32_t)((uintptr_t)p & (SMP_SLAB_SIZE - 1)), sl->recip);
  if (likely(mark < SMP_RACY_LOAD(sl->high_mark))) return NULL;
  return mark >= 0x10000u ? alloc_bad_interior : alloc_bad_never;
}

/* The malloc fast path: a table lookup and a pop (the key of the block
 * handed out cleared).  No sampling countdown: while samples are on
 * (tcache_sampling, tcache.h) malloc's row is empty, so every malloc takes
 * alloc_slow, which counts.  n is kept for the slow path, which works the
 * class out again: no copy of it is made here. */
static inline __attribute__((always_inline)) void *alloc_any(size_t n) {
  void *p;
  if (likely(n <= 1024) && likely(tcache_pop(bin_of_size[n], &p)))
    return track_alloc(slab_unkey(p), n, false);
  return alloc_slow(n);
}

/* Free the small block p of slab sl: check it, mark it free (the key),
 * push it on the thread's cache.  Every failure is a tail jump. */
static inline __attribute__((always_inline)) void small_free(void *p, slab_t *sl,
                                                             const char *who) {
  const char *bad = small_bad(p, sl);
  if (unlikely(bad != NULL)) return os_fail(who, bad, p);
  uint64_t key = slab_free_key;
  track_quiet_begin(); /* valgrind: memcheck sees p freed already (track_free) */
  if (unlikely(*(uint64_t *)p == key)) return track_quiet_end(), os_fail(who, alloc_bad_double, p);
  *(uint64_t *)p = key;
  track_quiet_end();
  if (likely(tcache_push(p, sl->bin))) return;
  free_small_slow(p, sl, who);
}

/* The free fast path: the flat page map, then a small block's checks and
 * push.  A pointer beyond the flat map (or with none) takes free_other. */
static inline __attribute__((always_inline)) void free_any(void *p, const char *who) {
  track_free(p); /* valgrind: before the checks, so that memcheck reports a bad free first */
  pagemap_entry_t e;
  if (unlikely(!pagemap_get_flat(p, &e))) return free_other(p, who);
  /* A slab's entry is its descriptor + 1: e - 1 is the descriptor, and its
   * low bits are 0 for a slab only (none, runs and mappings leave 3, 1, 2). */
  slab_t *sl = (slab_t *)(uintptr_t)(e - PAGEMAP_SLAB);
  if (likely(((uintptr_t)sl & PAGEMAP_KIND) == 0)) return small_free(p, sl, who);
  free_large(p, e, who);
}

/* The usable size of the block p (not NULL), checking p as the call `who`
 * would (messages name that call). */
SMP_HIDDEN size_t usable_size(const void *p, const char *who);

#endif /* SMP_ALLOC_H */
