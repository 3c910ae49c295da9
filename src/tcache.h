/*
 * tcache.h - a small cache of free blocks per thread, in front of the slots.
 *
 * The fast paths of malloc and free touch only the calling thread's cache:
 * an array of free blocks per class, popped and pushed with no lock and no
 * atomic instruction.  A miss fills half of the empty array from a slot
 * (one lock for limit/2 blocks, taken and handed out lowest address
 * first, the way a program's writes are prefetched); a full array gives
 * its older half back to the blocks' slabs (one lock per owning slot
 * met).  A bin's limit starts at
 * SMP_TCACHE_START and doubles each time it misses or overflows, up to its
 * class's limit (about SMP_TCACHE_BYTES, at most SMP_TCACHE_COUNT blocks;
 * more in a heap of 16 MiB and 8 MiB a thread: SMP_TCACHE_BIG_BYTES);
 * its array takes room in the cache when the class is first used and as it
 * grows, packed, so a thread that
 * allocates little holds little, however many threads there are.
 *
 * The arrays hold pointers: nothing is linked through free blocks, so a
 * write into a freed block (a use after free, an overflow from its
 * neighbour) cannot redirect an allocation.  What a free block does carry
 * is slab_free_key in its first word, written by free and cleared when the
 * block is handed out again: free() of a block that holds it is a double
 * free, caught whichever thread's cache (or slab) the block sits in.
 *
 * Cached blocks keep their slabs in use: a few blocks of a size, freed in
 * a random order, can hold every slab that size used.  So before a bin
 * fills from a new slab of memory that is not resident (no dirty granule
 * is pooled), the thread's other bins give their blocks back, and the slabs
 * they emptied serve the new slab instead of fresh pages: a thread that
 * walks from size to size keeps about one size's memory
 * (tests/mem/t_mem_size_walk.sh).  Not in a big heap, whose caches may
 * hold more anyway (tcache_heap_big): there the pass cost more than the
 * memory it gave back.
 *
 * free() pushes here only blocks of slabs that the thread's own slot owns.
 * A block of another slot's slab goes on the thread's remote batch, sent
 * home SMP_REMOTE_BATCH blocks at a time (slot_send: a parcel for each
 * slot, to its inbox, with no lock): reusing it here would write into
 * cache lines that its slab's other blocks share with other threads (false
 * sharing), and it is wanted back where it came from.  That costs free no
 * compare: a thread has a row of bins per slot (slab_rows of them, slab.h)
 * and a slab names its class's bin in its owner's row; every row but the
 * thread's own slot's is zero, a bin whose top is its end, so a block of
 * another slot finds its bin "full" and takes the slow path.
 *
 * A thread starts with tcache_tls pointing at tcache_none and zero rows:
 * every bin is empty and full, so its first malloc or free falls into the
 * slow path, which (through init.c) gives it a cache of its own.  No
 * "initialised?" test on the fast path.
 */
#ifndef SMP_TCACHE_H
#define SMP_TCACHE_H

#include "large.h"
#include "lock.h"
#include "sizeclass.h"
#include "track.h"

/* A bin's blocks are base .. top, newest at top[-1]; its room ends at end
 * (the limit is end - base: 0 with no array yet, or not cached:
 * tcache_none, checked mode, classes past SMP_TCACHE_MAX).  A bin with no
 * array yet is all zero.  Pointers, not
 * counts: a push compares with end and stores, a pop compares with base
 * and loads, with no index arithmetic.  32 bytes, so that both reach a
 * bin's fields from one scaled index and a bin never straddles a cache
 * line. */
typedef struct {
  _Alignas(32) void **top;
  void **end;
  void **base;
} tcache_bin_t;

/* Blocks of other slots' slabs on their way home, with each one's slot
 * and class; and the runs the thread freed (large.h), touched only by a
 * thread that frees runs. */
typedef struct tcache_remote_s {
  void *v[SMP_REMOTE_BATCH];
  uint8_t slot[SMP_REMOTE_BATCH];
  uint8_t cls[SMP_REMOTE_BATCH];
  large_runs_t runs;
} tcache_remote_t;

typedef struct tcache_s {
  _Alignas(64) char *bins; /* the live row: rows + slab_row(slot % slab_rows) */
  char *rows;             /* slab_rows rows of SMP_NCLASS bins, in pairs
                             (slab.h); all but the live one are zero
                             (empty and full) */
  uint64_t arrays[(SMP_NCLASS + 63) / 64]; /* bit c: bin c of the live row
                             has an array (is not zero): the slow paths
                             visit no other bin, and touch no other memory */
  unsigned slot;          /* this thread's slot index (slot.c moves it) */
  uint32_t nremote;       /* blocks in the remote batch */
  struct tcache_remote_s *remote; /* the batch: after the arrays' room, so
                             that a thread that frees no other slot's
                             blocks never touches it */
  struct parcel_s *stash; /* empty parcels for sending them (slot.h) */
  void **space;           /* the arrays' room: after the rows, in the same
                             allocation; a thread touches the header, its
                             live row and its bins' arrays, packed (a page
                             or two) */
  void **room, **room_end; /* the part of space the arrays do not use */
  struct tcache_s *next_free;
  /* Emptying an idle thread's cache from another thread (tcache_reclaim):
   * steal is held by the owner inside a slow path (tcache_enter) and by
   * the emptier; tls names the owner (NULL: none, the cache is free);
   * epoch counts the owner's slow paths. */
  lock_t steal;
  struct tcache_tls_s *_Atomic tls;
  struct tcache_s *next_all; /* every cache ever made (tcache_lock) */
  _Atomic uint32_t epoch;
} tcache_t;
_Static_assert(sizeof(tcache_t) == 128, "a thread cache's header is 128 bytes (config.h, SMP_TCACHE_HEAD_AT)");

/* What the fast paths read of the calling thread, in one thread-local
 * block: malloc the live row, free the rows, the slow paths the cache. */
typedef struct tcache_tls_s {
  char *bins, *rows;
  tcache_t *self;
  unsigned inside; /* slow paths the thread is in (tcache_enter) */
  tcache_t *locked; /* the cache whose steal lock the outermost one took */
  /* The thread's id, and what tcache_reclaim last saw of its cache: the
   * epoch, and when (SEEN_EMPTIED: emptied at that epoch).  Written by the
   * emptier under the cache's tcache_lock. */
  int tid;
  uint32_t seen_epoch, seen_ms;
  /* Bytes left to allocate before the next sample (prof.h): each request
   * is subtracted (malloc's in alloc_slow, while samples are on), and the
   * sampled path taken once it is below zero (as int64_t; unsigned, so
   * that the subtraction wraps, defined).  0 in a new thread: its first
   * counted allocation starts the count. */
  uint64_t sample_left;
} tcache_tls_t;
SMP_HIDDEN extern __thread tcache_tls_t tcache_tls;

/* The rows of a thread with no cache: zero, every bin empty and full. */
SMP_HIDDEN extern char tcache_none_rows[];

/* While samples are on (the profiler's or the guard pool's countdown,
 * prof.h), malloc's row (tcache_tls.bins) is tcache_none_rows, never the
 * thread's own: every malloc misses, and alloc_slow counts it down before
 * it pops the thread's row.  So malloc's fast path has no countdown, and
 * with samples off costs nothing for them.  free's rows are the thread's
 * either way.  Set at start-up (tcache_set_sampling). */
SMP_HIDDEN extern bool tcache_sampling;
static inline char *tcache_malloc_row(const tcache_t *tc) { return tcache_sampling ? tcache_none_rows : tc->bins; }
/* Samples on or off; the calling thread's malloc row follows at once,
 * other threads' at their next slow path. */
SMP_HIDDEN void tcache_set_sampling(bool on);

/* The thread enters a slow path (one that may take a lock or change its
 * cache): until it leaves, its cache is hidden (every bin empty and full
 * to the fast paths), so that a signal handler's call takes a slow path
 * too, finds the thread inside (tcache_reentered) and is served aside
 * (reentry.h).  Nests. */
static inline void tcache_enter(void) {
  if (tcache_tls.inside++ == 0) {
    tcache_t *tc = tcache_tls.self;
    /* Not while another thread empties it (tcache_reclaim). */
    if (atomic_load_explicit(&tc->tls, memory_order_relaxed) != NULL) {
      lock_take(&tc->steal);
      tcache_tls.locked = tc;
    }
  }
  atomic_signal_fence(memory_order_seq_cst);
  tcache_tls.bins = tcache_none_rows;
  tcache_tls.rows = tcache_none_rows;
  atomic_signal_fence(memory_order_seq_cst);
}
/* ...and leaves it: the cache shows again once the outermost one left. */
static inline void tcache_leave(void) {
  atomic_signal_fence(memory_order_seq_cst);
  if (tcache_tls.inside == 1) {
    tcache_tls.bins = tcache_malloc_row(tcache_tls.self);
    tcache_tls.rows = tcache_tls.self->rows;
    tcache_t *tc = tcache_tls.locked;
    if (tc != NULL) {
      tcache_tls.locked = NULL;
      atomic_store_explicit(&tc->epoch, atomic_load_explicit(&tc->epoch, memory_order_relaxed) + 1,
                            memory_order_relaxed);
      lock_drop(&tc->steal);
    }
  }
  atomic_signal_fence(memory_order_seq_cst);
  tcache_tls.inside--;
}
/* Did this call interrupt the thread inside a slow path (a signal
 * handler's call), or come from one (a call the slow path itself made)? */
static inline bool tcache_reentered(void) { return tcache_tls.inside != 0; }

/* Pop a block from the thread's cache into *out, from the bin at offset
 * bin of its live row (bin_offset of its class: bin_of_size); false
 * when the bin is empty.  (The valgrind build clears the slot: track.h,
 * leak check.) */
static inline bool tcache_pop_row(char *row, size_t bin, void **out) {
  tcache_bin_t *b = (tcache_bin_t *)(row + bin);
  void **top = b->top;
  if (unlikely(top == b->base)) return false;
  b->top = --top;
  *out = *top;
  track_forget(top, sizeof *out);
  return true;
}
static inline bool tcache_pop(size_t bin, void **out) { return tcache_pop_row(tcache_tls.bins, bin, out); }
_Static_assert(2 * sizeof(tcache_bin_t) == 1u << SMP_BIN_SHIFT, "a row's stride is two bins (slab.h)");

/* Bin c of the row at `row` (a live row: tc->bins). */
static inline tcache_bin_t *tcache_bin(char *row, unsigned c) { return (tcache_bin_t *)(row + bin_offset(c)); }

/* Push the block p whose slab's bin offset is bin (slab_bin: its class in
 * its owner's row): false when it does not go here (another slot's: a zero
 * bin, whose top is its end; or the array is full). */
static inline bool tcache_push(void *p, uint32_t bin) {
  tcache_bin_t *b = (tcache_bin_t *)(tcache_tls.rows + bin);
  void **top = b->top;
  if (unlikely(top == b->end)) return false;
  *top = p;
  b->top = top + 1;
  return true;
}

/* Does the calling thread have a cache (or is it past needing one)? */
SMP_HIDDEN extern tcache_t tcache_none;
static inline bool tcache_ready(void) { return tcache_tls.self != &tcache_none; }
/* Give the calling thread a cache (init.c calls it); NULL when out of
 * memory (the thread then works without one). */
SMP_HIDDEN tcache_t *tcache_create(void);
/* The thread exits: give its blocks back, and its cache to the next
 * thread; from now on it works without one. */
SMP_HIDDEN void tcache_destroy(tcache_t *tc);
/* A block of class c when the cache is empty (a batch from a slot), with
 * its free key cleared; NULL when out of memory. */
SMP_HIDDEN void *tcache_alloc_slow(unsigned c);
/* The block p (class c, owner's slab, free key written) did not fit the
 * fast path: remote batch, a grown and trimmed array, or its slab.  True
 * when blocks went back to their slabs (a purge may be due). */
SMP_HIDDEN bool tcache_free_slow(void *p, unsigned c, unsigned owner, const char *who);
/* Give the calling thread's blocks back and its bins the limits the
 * options now give (checked mode switched on at start-up: none). */
SMP_HIDDEN void tcache_refresh(void);
/* The calling thread's run cache (inside a slow path: tcache_enter); NULL
 * for a thread with no cache. */
SMP_HIDDEN large_runs_t *tcache_runs(void);
/* Give every block of the calling thread's cache back. */
SMP_HIDDEN void tcache_flush(void);
/* The calling thread owns tc (its cache, whose thread exit runs
 * tcache_destroy): from now on another thread may empty it while this one
 * is idle (tcache_reclaim). */
SMP_HIDDEN void tcache_publish(tcache_t *tc);
/* Empty the caches of other threads that are blocked in a system call
 * (they cannot be inside a fast path) and have left no slow path for
 * idle_ms (0: any such thread, as malloc_trim wants), each once until its
 * thread works again: their blocks go back to their slabs.  *waiting is
 * set where a cache may become idle later (look again in idle_ms).
 * Returns the caches emptied.  No lock may be held. */
SMP_HIDDEN unsigned tcache_reclaim(uint32_t now, uint32_t idle_ms, bool *waiting);
/* How many threads have a cache now (the purge cap scales with them). */
SMP_HIDDEN unsigned tcache_threads(void);
SMP_HIDDEN void tcache_fork_prepare(void);
SMP_HIDDEN void tcache_fork_parent(void);
SMP_HIDDEN void tcache_fork_child(void);

#endif /* SMP_TCACHE_H */
