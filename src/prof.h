/*
 * prof.h - the sampled heap profiler, and the sampling of the guard pool.
 *
 * Each thread counts down the bytes it allocates (tcache_tls.sample_left:
 * while samples are on, every malloc takes alloc_slow, which subtracts its
 * request, tcache.h, tcache_sampling; calloc, realloc and the aligned
 * entry points subtract theirs inline); when the count goes below zero
 * the allocation takes the sampled path, prof_fired decides what
 * to do with it and draws the next count from an exponential distribution
 * of mean prof_mean.  So a block of n bytes is reached with probability
 * 1 - exp(-n / mean), whatever came before it.  Profiled blocks (mean
 * SMPALLOC_PROF_SAMPLE) are recorded with their stack and the weight 1/P
 * (P the probability that they were profiled): the totals estimated are
 * unbiased.  With both the profiler and the guard pool on, the countdown's
 * mean is the smaller of SMPALLOC_PROF_SAMPLE and 16 * SMPALLOC_GUARD_SAMPLE
 * and each feature takes its share of the firings by a draw.
 *
 * Where the blocks go: a profiled block of at most SMP_SMALL_MAX bytes
 * comes from the profiler's pool (a slot of SMP_SMALL_MAX bytes of address
 * space each, its touched pages given back when it is freed), a guarded
 * one from the guard pool (guard.h): neither has a page map entry, so
 * free finds them on its large-block path (free_large, like blocks served
 * aside: reentry.h) and the small-block fast path is unchanged.  A larger
 * profiled block is an ordinary one, recorded by address: free_large and
 * realloc look it up only while prof_large_live is not zero.
 *
 * Records, stacks and the pool live in one reservation made at the first
 * sample; the profiler's lock is never held while calling code that may
 * allocate (the unwinder, dlopen): stacks are taken before it, with the
 * thread marked busy, so that allocations made meanwhile are not sampled.
 */
#ifndef SMP_PROF_H
#define SMP_PROF_H

#include "base.h"

/* What prof_fired leaves for a large profiled block, which the caller
 * allocates: its stack (0: none to record) and weight; and whether the
 * block it returned is fresh. */
typedef struct {
  uint32_t stack;
  double weight;
  bool fresh; /* the block prof_fired returned reads as zero */
} prof_ticket_t;

/* The options are read: the countdown's mean, what each firing does. */
SMP_HIDDEN void prof_init(void);
/* The constructor has run, so libc is set up: from now on samples take
 * stacks (before, none is taken: a -static program's unwinder aborts while
 * libc initialises, and that is when libc allocates its own set-up). */
SMP_HIDDEN void prof_allow_stacks(void);
/* Start-up done (the constructor): the dump signal's handler, the dump
 * and leak report at exit. */
SMP_HIDDEN void prof_start(void);
/* The calling thread's countdown ran out at an allocation of n bytes
 * (align: 0, or the alignment asked) made by the allocator entry point
 * whose canonical frame address is cfa.  Returns a block of the profiler's
 * or the guard pool, recorded; or NULL: the caller allocates as usual and,
 * if t->stack is not 0, hands the block to prof_keep.  Starts the next
 * countdown. */
SMP_HIDDEN void *prof_fired(size_t n, size_t align, uintptr_t cfa, prof_ticket_t *t);
SMP_HIDDEN void prof_keep(void *p, size_t n, const prof_ticket_t *t);
/* p has no page map entry: if it is a block of either pool, free it
 * (cfa: the entry point's, for a guarded block's free stack) and return
 * true. */
SMP_HIDDEN bool prof_free(void *p, uintptr_t cfa);
/* The usable size of such a block; 0 if p is not one. */
SMP_HIDDEN size_t prof_size(const void *p);
/* The usable sizes of the profiler's pool's live blocks (in use: stats). */
SMP_HIDDEN size_t prof_pool_bytes(void);
/* Profiled large blocks live now; prof_forget(p) drops p's record (a large
 * block freed or resized in place), if it has one. */
SMP_HIDDEN extern _Atomic size_t prof_large_live;
SMP_HIDDEN void prof_forget(void *p);
/* A dump was asked for by signal (prof_poll writes it, outside every
 * lock: the allocation slow path calls it when prof_asked is set). */
SMP_HIDDEN extern _Atomic int prof_asked;
SMP_HIDDEN void prof_poll(void);
/* Write the profile (peak: the one of the heap's peak) to path: 0, or -1. */
SMP_HIDDEN int prof_write(const char *path, bool peak);
SMP_HIDDEN void prof_fork_prepare(void);
SMP_HIDDEN void prof_fork_parent(void);
SMP_HIDDEN void prof_fork_child(void);

#endif /* SMP_PROF_H */

/* ---- for prof_out.c: the stacks and their estimated totals -------------- */

typedef struct {
  double live_n, live_b;   /* blocks and bytes live now (or at the peak) */
  double alloc_n, alloc_b; /* allocated in all */
  const uintptr_t *pc;
  unsigned depth;
} prof_site_t;
/* Call fn on every stack, the profiler's lock held (fn must neither
 * allocate nor lock); peak: the totals at the heap's peak. */
SMP_HIDDEN void prof_each(void (*fn)(const prof_site_t *, void *), void *arg, bool peak);
/* How many stacks there are (an upper bound for prof_each's calls). */
SMP_HIDDEN size_t prof_nstacks(void);
/* Samples refused because the pool or the tables were full. */
SMP_HIDDEN size_t prof_dropped(void);
