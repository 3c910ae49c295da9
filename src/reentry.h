/*
 * reentry.h - calls that re-enter the allocator: a signal handler that
 * allocates while its thread is inside one of smpalloc's slow paths.
 *
 * The interrupted slow path may hold a lock (a slot's, the pool's, the
 * large-block cache's) and may be half way through changing the thread's
 * cache.  A call from the handler must touch neither: waiting for a lock
 * its own thread holds would hang it for good.  So while a thread is in a
 * slow path (tcache.h, tcache_enter) its cache looks empty and full to the
 * fast paths, and the slow paths, seeing the thread inside already, serve
 * the handler here instead:
 *   - an allocation gets a mapping of its own (page-aligned, zero), listed
 *     in a fixed table so that free, realloc and malloc_usable_size find
 *     it (they look here only where the page map knows no block: no cost
 *     to any other block);
 *   - a free of any other block is put off: the block goes into a table
 *     of deferred frees, freed as a slow path leaves (this thread's, once
 *     the handler returned, or any other's).
 * Everything here is async-signal-safe: system calls and atomics, no lock.
 * A lock a thread would take twice is still caught (lock.h: the owner),
 * with a message and an abort, never a hang.
 */
#ifndef SMP_REENTRY_H
#define SMP_REENTRY_H

#include "base.h"

/* A block of n bytes aligned to align (a power of two) in a mapping of its
 * own, zero; NULL when the kernel has none or the table is full. */
SMP_HIDDEN void *reentry_alloc(size_t n, size_t align);
/* If p is such a block: its usable size; else 0. */
SMP_HIDDEN size_t reentry_size(const void *p);
/* If p is such a block, unmap it and return true; else false. */
SMP_HIDDEN bool reentry_free(void *p);

/* Put the free of the (checked) block p off; false when the table is full
 * (the block is then kept: a leak, never a reuse). */
SMP_HIDDEN bool reentry_defer(void *p);
/* Frees put off and not yet taken (a hint: 0 is the common case, read
 * relaxed at every slow path's exit). */
SMP_HIDDEN extern _Atomic unsigned reentry_pending;
/* The next deferred block, taken off the table, or NULL. */
SMP_HIDDEN void *reentry_next(void);
/* Blocks served aside and frees deferred, and those refused (statistics). */
SMP_HIDDEN void reentry_counts(size_t *served, size_t *deferred, size_t *refused);

#endif /* SMP_REENTRY_H */
