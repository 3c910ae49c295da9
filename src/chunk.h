/*
 * chunk.h - chunks of granules, their descriptors, and the pool of free
 * granules; metadata memory.
 *
 * Address space for slabs and runs comes in chunks of SMP_CHUNK_SIZE bytes
 * (64 granules of 64 KiB), mapped 64 KiB-aligned (2 MiB for the dense
 * chunks of huge pages, chunk.c), so a block's granule is its address with
 * the low 16 bits cleared.  Every granule has a descriptor
 * (slab_t), and every slab a bitmap; both live in the chunk's metadata
 * (chunk_t), out of band in a guarded metadata region: no allocator state
 * is ever next to a user block.
 *
 * A free granule is in the pool: "dirty" (its pages may be resident) until
 * the purge policy (purge.c) returns its pages, then "clean".  Runs of k
 * contiguous granules (large blocks up to SMP_RUN_MAX) come from the same
 * chunks and pool.  The pool keeps each chunk's free granules as a bit
 * mask, so free neighbours form one range whatever their pages' state, and
 * a request takes the best-fitting range (chunk.c); a run in use can grow
 * into the free granules after it.
 *
 * Locking: the pool lock guards the pool (every chunk's masks and list
 * links) and the state of pooled descriptors; it is taken alone, or under
 * a slot lock.  No system call is made under it: pages are returned with
 * no lock held, and chunks mapped under the grow lock only, which guards
 * nothing else.
 */
#ifndef SMP_CHUNK_H
#define SMP_CHUNK_H

#include "base.h"
#include "sizeclass.h"
#include "track.h"

/* One state per granule descriptor, in one field.  Who may change it:
 *   G_FRESH                  just taken from the pool, or a chunk not yet in it
 *   SLAB_CUR / _PARTIAL / _FULL
 *                            a slab of a size class: its owner slot's lock
 *   G_FREE, G_GONE           in the pool; of a chunk unmapped: the pool lock
 *   RUN_USED                 the head of a run handed out: its user
 *   RUN_CACHED               the head of a run its thread freed into its
 *                            run cache (large.h): that thread
 *   RUN_TAIL                 a granule inside a run (its head speaks for it)
 * Walks under the pool lock (purge, unmapping chunks, statistics) read it
 * with relaxed atomics; the pool states they act on change only under that
 * lock. */
enum {
  G_FRESH = 0, SLAB_CUR, SLAB_PARTIAL, SLAB_FULL, G_FREE, G_GONE, RUN_USED, RUN_TAIL, RUN_CACHED
};

typedef struct slab_s slab_t;
typedef struct chunk_s chunk_t;

/* A granule's descriptor.  Two cache lines: the first is read by every
 * free() with no lock and written only when the granule changes hands (and
 * high_mark as a slab's blocks are first handed out); the second is written
 * under a lock.  For a slab of class cls:
 *     used + (set bits in bits) == class_table[cls].count
 * where used counts blocks handed out to users or thread caches, and every
 * block below high_off was handed out at least once (blocks are taken
 * lowest address first), so a block start at or past it was never handed
 * out.  high_mark == class_mark(high_off, recip): the offsets of the
 * blocks handed out are exactly those whose mark is below it (sizeclass.h),
 * so free tests "a block start, handed out" with one compare.  For a run,
 * cls is its length in granules. */
struct slab_s {
  _Alignas(64) uint32_t high_mark; /* read by free with no lock: stored
                         with __atomic_store_n, read with SMP_RACY_LOAD */
  uint32_t recip;     /* class_table[cls].recip (one load less on free) */
  uint16_t cls;       /* stored with __atomic_store_n: a probe of another
                         slot reads it with no lock (slot.c) */
  uint16_t owner;     /* index of the owning slot */
  uint32_t bin;       /* slab_bin(cls, owner): where free finds its
                         class's bin in its slot's thread-cache row, with
                         no shift (slab.h, tcache.h) */
  uintptr_t base;     /* the granule's address, concealed: chunk_base() */
  uint64_t *bits;     /* bit i set while block i is free in the slab: the
                         descriptor's word (classes of at most 64 blocks)
                         or the chunk's bitmap for this granule */
  chunk_t *chunk;     /* constant */
  _Alignas(64) _Atomic uint8_t state;
  uint8_t untouched;  /* a slab's pages past high_off were never touched (a
                         fresh granule, not populated whole: slot.c) */
  uint16_t hint;      /* bits[0 .. hint) are all clear */
  uint32_t used;      /* blocks handed out */
  uint32_t high_off;  /* past the last block ever handed out (a multiple
                         of the size) */
  uint32_t stamp;     /* ms clock when it was freed (in the pool; a run's
                         head in a thread's run cache, large.h) */
  slab_t *next, *prev; /* a slot's partial list; a run tail's prev: its head */
  uint64_t word;
};

#define SMP_BITMAP_WORDS (SMP_SLAB_SIZE / 8 / 64) /* a bit per 8-byte block */

/* A chunk's pool state, bit i for granule i, under the pool lock:
 *     free & purging == 0,   dirty is a subset of free,
 *     chunk_n_dirty == sum of |dirty| over all chunks,
 *     longest == the longest range of set bits in free (0 once gone),
 *     bare  =>  free == all 64 bits and dirty == 0,
 * and a granule is in use (a slab or part of a run) exactly when its bit
 * is clear in free and in purging.  The header is small and packed with
 * other chunks' headers; its descriptors and bitmaps are one block of
 * their own (desc, then bitmap: page-aligned), whose pages go back to the
 * kernel while no granule needs them: a bitmap page once the granules it
 * describes are all free and clean, the descriptors' pages once the whole
 * chunk is (bare: its descriptors read as zero until chunk_take writes
 * them again), so a purged heap holds a header a chunk. */
struct chunk_s {
  slab_t *desc;           /* [SMP_CHUNK_SLABS] descriptors (constant) */
  uint64_t (*bitmap)[SMP_BITMAP_WORDS]; /* [SMP_CHUNK_SLABS] (constant) */
  uintptr_t base;         /* granule 0's address (constant) */
  chunk_t *next;          /* every chunk, newest first (constant once set) */
  uint64_t free;          /* granules in the pool */
  uint64_t dirty;         /* of those, the ones whose pages may be resident */
  uint64_t purging;       /* out of the pool while their pages go back */
  _Atomic uint64_t bitmapped; /* granules whose bitmap row a slab wrote
                             (slab_new, in use: an atomic or) since its
                             page last went back (chunk_purge, its granules
                             out of the pool meanwhile) */
  chunk_t *fnext, *fprev; /* its pool's list of chunks of the same longest */
  uint8_t longest;        /* its longest free range, granules: its list */
  uint8_t kind;           /* the pool it serves: sparse 0, dense 1 */
  bool gone;              /* unmapped (chunk_unmap_free); never reused */
  bool huge;              /* advised for transparent huge pages (a dense chunk) */
  bool bare;              /* its descriptors' pages were returned */
};

/* The granule's address.  The descriptor keeps it concealed (track.h): in
 * the valgrind build, memcheck's leak check must not count it as a pointer
 * to the granule's first block. */
static inline uintptr_t chunk_base(const slab_t *g) { return track_reveal(g->base); }

static inline unsigned chunk_state(const slab_t *g) {
  return atomic_load_explicit(&((slab_t *)g)->state, memory_order_relaxed);
}
static inline void chunk_set_state(slab_t *g, unsigned s) {
  atomic_store_explicit(&g->state, (uint8_t)s, memory_order_relaxed);
}

/* k contiguous free granules (1 <= k <= SMP_CHUNK_SLABS) from the pool,
 * out of it (state G_FRESH for the caller to set), the best fit; *zero
 * tells whether their memory is known to be zero (no page of them
 * resident).  dense: a slab that will be filled, or a run written whole,
 * from a chunk advised for huge pages.  Never makes a system call: NULL
 * when none is at hand (call chunk_grow with the same k and dense). */
SMP_HIDDEN slab_t *chunk_take(unsigned k, bool dense, bool *zero);
/* One free granule of the sparse pool whose pages are not resident (clean,
 * *zero set), the lowest of the newest chunk that has one, taken as
 * chunk_take takes; NULL if none (no system call). */
SMP_HIDDEN slab_t *chunk_take_clean(bool *zero);
/* Make room for k granules (dense: in a chunk advised for huge pages): map
 * a new chunk unless another thread made room meanwhile (a system call: no
 * lock may be held).  False when out of memory. */
SMP_HIDDEN bool chunk_grow(unsigned k, bool dense);
/* Give back what the reservations have left uncarved, and make none from
 * then on (each chunk mapped alone): mlockall would lock every page of
 * them and fault it in (override.c).  Returns the bytes given back.  No
 * lock may be held. */
SMP_HIDDEN size_t chunk_unreserve(void);
/* k granules from chunk_take come back (the caller cleared their page-map
 * entry): dirty, into the pool, aged from since (the ms clock when they
 * were freed: os_now_ms(), or earlier for a run a thread cache kept); a
 * run merges with the free dirty runs next to it. */
SMP_HIDDEN void chunk_put(slab_t *g, unsigned k, uint32_t since);
/* Grow the run of k granules at g (from chunk_take, in use) to want
 * granules in place, with the free granules right after it; false (the run
 * unchanged) when they are not all free. */
SMP_HIDDEN bool chunk_extend(slab_t *g, unsigned k, unsigned want);

/* For the purge policy: granules in use (slabs and runs), and free
 * granules whose pages may be resident. */
SMP_HIDDEN extern _Atomic size_t chunk_n_active, chunk_n_dirty;
static inline size_t chunk_active(void) { return atomic_load_explicit(&chunk_n_active, memory_order_relaxed); }
static inline size_t chunk_dirty(void) { return atomic_load_explicit(&chunk_n_dirty, memory_order_relaxed); }
/* Return the pages of dirty granules at least delay ms old (0: any) until
 * at most floor dirty granules are left, chunk by chunk, neighbours with
 * one system call; the bitmap pages of granules whose pages all went back
 * go too.  No lock may be held.  Returns the bytes returned. */
SMP_HIDDEN size_t chunk_purge(size_t floor, uint32_t now, uint32_t delay);
/* Out of address space: unmap every chunk whose granules are all in the
 * pool.  No lock may be held.  Returns the bytes unmapped. */
SMP_HIDDEN size_t chunk_unmap_free(void);

/* How much of the dirty granules of a pool (the chunks', the arenas') is
 * resident, measured where it counts: on the ranges purged, a window of
 * each (mincore) before its pages go back, in pages, halved past 2^20
 * pages so that it follows the program.  The purge policy weighs dirty
 * granules by it (purge.c): a program that writes a page or two of each
 * block leaves free room that costs little memory, and purging that room
 * only faulted its few pages in again (the sweep's run/T2/W5000: 25,830
 * madvise calls in 0.3 s).  scale is the resident share in 1/1024ths, at
 * least 2^-floor (1024 until a range was measured: dense). */
typedef struct {
  _Atomic uint32_t seen, res; /* pages looked at, found resident */
  _Atomic uint32_t scale;     /* 1024 * max(res, seen >> floor) / seen */
  uint32_t floor;             /* constant: the least share is 2^-floor */
} density_t;
SMP_HIDDEN extern density_t chunk_density;
/* The resident pages of [p, p+size), guessed from a window of up to 64
 * pages at a place that varies from call to call (os_resident: a system
 * call; no lock held); SIZE_MAX if the kernel cannot tell. */
SMP_HIDDEN size_t chunk_resident_guess(void *p, size_t size);
/* Note the pages of [p, p+size) (dirty, about to be purged): no lock held. */
SMP_HIDDEN void density_note(density_t *d, void *p, size_t size);
/* n granules of d's pool weighed by their resident share, and back. */
static inline size_t density_weigh(density_t *d, size_t n) {
  return n * atomic_load_explicit(&d->scale, memory_order_relaxed) >> 10;
}
static inline size_t density_unweigh(density_t *d, size_t n) {
  uint32_t s = atomic_load_explicit(&d->scale, memory_order_relaxed);
  return s == 0 ? n : (n << 10) / s;
}

/* Call fn on every descriptor, with the pool lock held (statistics; the
 * caller holds every slot lock, so slab descriptors are stable too). */
SMP_HIDDEN void chunk_walk(void (*fn)(const slab_t *g, void *arg), void *arg);
/* Pooled granules, dirty and clean. */
SMP_HIDDEN void chunk_pool_counts(size_t *dirty, size_t *clean);

SMP_HIDDEN void chunk_fork_prepare(void);
SMP_HIDDEN void chunk_fork_parent(void);
SMP_HIDDEN void chunk_fork_child(void);

#endif /* SMP_CHUNK_H */
