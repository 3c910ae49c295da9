/*
 * internal.h - declarations shared between smpalloc's source files, grouped
 * by the file that defines them.  Everything here has hidden visibility; the
 * only exported symbols are the smp_* functions of include/smpalloc.h and the
 * libc names of override.c.
 */
#ifndef SMP_INTERNAL_H
#define SMP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SMP_API __attribute__((visibility("default")))
#define SMP_HIDDEN __attribute__((visibility("hidden")))
#define SMP_NOINLINE __attribute__((noinline))
#define SMP_COLD __attribute__((cold, noinline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Debug-only assertion for internal logic (-DSMP_DEBUG).  Never <assert.h>:
 * it may allocate.  Checks that guard against bad input are always on and go
 * through os_fatal() instead. */
#ifdef SMP_DEBUG
#define SMP_ASSERT(c) \
  do { if (!(c)) os_fatal("internal", "assertion failed: " #c, NULL); } while (0)
#else
#define SMP_ASSERT(c) ((void)0)
#endif

/* A futex lock: 0 free, 1 held, 2 held with waiters.  Uncontended, one
 * atomic instruction each way and no system call; contended, it spins
 * briefly (SMP_LOCK_SPIN) before it sleeps. */
typedef _Atomic int smp_mutex_t;
SMP_HIDDEN void os_futex_wait(_Atomic int *addr, int val);
SMP_HIDDEN void os_futex_wake(_Atomic int *addr, int n);
static inline bool mutex_trylock(smp_mutex_t *l) {
  int expect = 0;
  return atomic_compare_exchange_strong_explicit(l, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed);
}
/* The contended path of mutex_lock (slot.c). */
SMP_HIDDEN void mutex_lock_wait(smp_mutex_t *l);
static inline void mutex_lock(smp_mutex_t *l) {
  if (likely(mutex_trylock(l))) return;
  mutex_lock_wait(l);
}
static inline void mutex_unlock(smp_mutex_t *l) {
  if (unlikely(atomic_exchange_explicit(l, 0, memory_order_release) == 2)) os_futex_wake(l, 1);
}

/* ---- os.c: the only file that talks to the kernel ---------------------- */
/* Contract for every os_* function: errno is the same on return as on entry
 * (callers set ENOMEM themselves at the API boundary), sizes and addresses
 * are multiples of SMP_PAGE_SIZE unless said otherwise, and failure is
 * reported by the return value, never by aborting. */

/* Fresh zeroed read-write memory of size bytes, aligned to align (a power of
 * two >= SMP_PAGE_SIZE).  NULL if the kernel refuses. */
SMP_HIDDEN void *os_map(size_t size, size_t align);
/* Give [p, p+size) back to the kernel. */
SMP_HIDDEN void os_unmap(void *p, size_t size);
/* Resize the mapping at p from old_size to new_size bytes in place; false
 * (mapping unchanged) if the pages after it are taken or memory is short. */
SMP_HIDDEN bool os_resize(void *p, size_t old_size, size_t new_size);
/* Move the pages of the mapping at p (old_size bytes) to dest, a mapping of
 * new_size bytes from os_map that they replace, growing or shrinking it to
 * new_size.  False (both unchanged) on failure. */
SMP_HIDDEN bool os_move(void *p, size_t old_size, size_t new_size, void *dest);
/* Fault in [p, p+size) now, writable (a hint: failure is ignored). */
SMP_HIDDEN void os_populate(void *p, size_t size);
/* A millisecond clock (coarse, monotonic; cheap: no system call). */
SMP_HIDDEN uint32_t os_now_ms(void);
/* Return the pages of [p, p+size) to the kernel; they read as zero after. */
SMP_HIDDEN void os_decommit(void *p, size_t size);
/* 64 random bits from the kernel (AT_RANDOM), without a system call. */
SMP_HIDDEN uint64_t os_random(void);
/* Number of CPUs this process may run on (affinity mask), at least 1. */
SMP_HIDDEN unsigned os_cpu_count(void);
/* The kernel's page size. */
SMP_HIDDEN size_t os_page_size(void);
/* os_futex_wait: block until *addr != val or a wake-up; os_futex_wake: wake
 * up to n waiters of addr (declared above, with the mutex). */
/* A close-on-exec duplicate of stderr (or 2 if that fails): the at-exit
 * report still reaches the terminal when the program closed its stderr. */
SMP_HIDDEN int os_dup_stderr(void);
/* Write len bytes to stderr (messages, statistics). */
SMP_HIDDEN void os_write_err(const char *s, size_t len);
/* Write one line "smpalloc: CALL(): WHAT 0xADDR" to stderr and abort. */
SMP_HIDDEN _Noreturn SMP_COLD void os_fatal(const char *call, const char *what,
                                            const void *addr);

/* ---- sizeclass.c: the class table -------------------------------------- */
/* Classes 0..15 are 8..128 bytes in 8-byte steps; above that eight classes
 * per doubling up to SMP_SMALL_MAX (worst-case waste 1/9 of the block).
 * Every power of two from 8 to SMP_SMALL_MAX is a class, which is what makes
 * aligned requests servable from slabs. */
#define SMP_NCLASS 80

typedef struct {
  uint32_t size;   /* block size in bytes */
  uint32_t recip;  /* ceil(2^32 / size): offset / size by one multiply */
  uint16_t begin;  /* offset of the first block handed out: first * size */
  uint16_t last;   /* offset of the last block, minus begin */
  uint16_t count;  /* blocks per slab handed out */
  uint16_t first;  /* blocks at the slab's start that hold its bitmap */
} class_info_t;
/* A slab of a class with more than 64 blocks keeps its bitmap (slab_t) in
 * its first `first` blocks, which are never handed out; one with at most 64
 * keeps it in its descriptor.  Either way the bitmap costs no memory that
 * outlives the slab's pages. */

SMP_HIDDEN extern const class_info_t smp_class[SMP_NCLASS];

/* smp_class_by8[(n + 7) / 8] is the class of n bytes, for n <= 1024. */
SMP_HIDDEN extern const uint8_t smp_class_by8[129];

/* Class of a request of n bytes (n <= SMP_SMALL_MAX) with no alignment need
 * beyond 8. */
static inline unsigned size_class(size_t n) {
  if (n <= 1024) return smp_class_by8[(n + 7) >> 3];
  size_t m = n - 1;
  unsigned b = 63u - (unsigned)__builtin_clzl(m);  /* 7 <= b < 15 */
  return 16u + (b - 7u) * 8u + (unsigned)((m >> (b - 3u)) & 7u);
}
/* Is offset off of a slab of class ci the start of a block?  With recip =
 * ceil(2^32 / size), off * recip mod 2^32 is idx * err (err < size, so below
 * 2^16) when off = idx * size, and at least recip >= 2^17 when off is not a
 * multiple: one multiply decides.  Offsets of the bitmap's blocks and of the
 * slab's tail (past the last whole block) are refused by one compare. */
static inline bool block_start(uint32_t off, const class_info_t *ci) {
  return (uint32_t)(off * ci->recip) < 0x10000u && (uint32_t)(off - ci->begin) <= ci->last;
}

/* Class for n bytes aligned to align (a power of two), or SMP_NCLASS if no
 * slab class can serve it. */
SMP_HIDDEN unsigned size_class_aligned(size_t n, size_t align);

/* ---- pagemap.c: address -> what smpalloc keeps there -------------------- */
/* One 64-bit entry per 64 KiB granule of the 48-bit address space, in a
 * two-level table: pm_top[addr >> 32] -> leaf[(addr >> 16) & 0xffff].
 *   entry == 0          not ours (a pooled slab, inside a large block, foreign)
 *   entry & 1 == 0      a slab in use: bits 0..47 its descriptor (slab_t *),
 *                       bits 48..54 its class + 1, bits 55..61 its owner
 *   entry & 3 == 1      the first granule of a large block whose mapping is
 *                       entry & ~0xffff bytes long
 *   entry & 3 == 3      the first granule of a run (a large block of up to
 *                       SMP_RUN_MAX carved from a chunk): entry & ~7 is the
 *                       run's descriptor (its first slab's slab_t)
 * Invariant: an entry is non-zero exactly while the slab or large block it
 * describes belongs to a size class or a user. */
#define PM_LEAF_BITS 16
#define PM_TOP_BITS 16
#define PM_LARGE 1u
#define PM_RUN 2u

SMP_HIDDEN extern _Atomic(_Atomic uint64_t *) pm_top[1u << PM_TOP_BITS];

static inline uint64_t pagemap_get(const void *p) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> (PM_TOP_BITS + 32))) return 0;
  _Atomic uint64_t *leaf = atomic_load_explicit(&pm_top[a >> 32], memory_order_acquire);
  if (unlikely(leaf == NULL)) return 0;
  return atomic_load_explicit(&leaf[(a >> SMP_SLAB_SHIFT) & ((1u << PM_LEAF_BITS) - 1)],
                              memory_order_acquire);
}

/* Make sure leaves exist for [p, p+size); false if out of memory. */
SMP_HIDDEN bool pagemap_reserve(uintptr_t p, size_t size);
/* Set the entry of the granule holding p (its leaf must be reserved). */
SMP_HIDDEN void pagemap_set(uintptr_t p, uint64_t entry);

/* ---- slab.c: 64 KiB slabs, their descriptors, the pool of empty ones ---- */
enum {
  SLAB_CUR = 1, SLAB_PARTIAL, SLAB_FULL, SLAB_DIRTY, SLAB_CLEAN, SLAB_PURGING, SLAB_GONE,
  RUN_USED, RUN_DIRTY, RUN_CLEAN, RUN_PURGING, RUN_TAIL
};

/* A slab's descriptor, kept outside the slab (so an empty slab's pages can go
 * back to the kernel untouched).  A slab's free blocks are the set bits of
 * its bitmap, not a list threaded through the blocks: taking blocks reads
 * no block (a free list of cold blocks is a chain of dependent cache
 * misses), they come out in address order, a stray write into a free block
 * cannot redirect an allocation, and a block given back twice is seen at
 * once (its bit is already set).  While the slab belongs to a class, every
 * field but base and bits is guarded by the lock of slot `owner`, and
 *     used + (set bits in bits) == smp_class[cls].count
 * where used counts blocks handed out to users or thread caches.
 *   SLAB_CUR      the slab bins[cls].cur of its owner allocates from
 *   SLAB_PARTIAL  on the owner bin's partial list: some bit set, used > 0
 *   SLAB_FULL     no bit set (used == count); on no list
 * A slab whose used count drops to 0 (and is not CUR) leaves its class for
 * the pool (slab_release): SLAB_DIRTY, then SLAB_CLEAN once its pages were
 * returned; pool fields are guarded by the slab lock. */
typedef struct slab_s slab_t;
struct slab_s {
  uint64_t *bits;       /* bit i set while block i is free: at the slab's
                           base, or &word (see class_info_t) */
  uint64_t word;        /* the bitmap of a class of at most 64 blocks */
  slab_t *next, *prev;  /* partial list, or the pool's lists */
  uint32_t used;        /* blocks handed out */
  uint16_t cls;
  uint16_t owner;       /* index of the owning slot */
  uint16_t hint;        /* bits[0 .. hint) are all clear */
  uint16_t high;        /* checked mode: blocks [high, count) never handed out */
  uint8_t state;
  uint8_t zero;         /* its never-used blocks are known to be zero */
  uint8_t pool;         /* the pool state (SLAB_DIRTY ... RUN_PURGING) or 0;
                           read and written under slab_lock only, so walks
                           of the chunks never read `state`, which slot
                           locks guard */
  uint8_t pad;
  uint32_t stamp;       /* ms clock when it entered the pool */
  uintptr_t base;       /* the slab's address: constant */
};

/* Checked mode: while a block is free in its slab, its first word holds
 * smp_canary ^ its address; a block taken out again must still hold it, or
 * it was written after its free (abort: "written after it was freed"). */
SMP_HIDDEN extern uintptr_t smp_canary;

/* A slab's page-map entry: descriptor in bits 0..47, class + 1 in bits
 * 48..54, owning slot in bits 55..61 (so free can tell a block of its own
 * slot's slabs from a remote one without touching the descriptor). */
static inline uint64_t pm_slab_entry(const slab_t *sl, unsigned cls, unsigned owner) {
  return (uint64_t)(uintptr_t)sl | ((uint64_t)(cls + 1) << 48) | ((uint64_t)owner << 55);
}
static inline slab_t *pm_slab(uint64_t e) {
  return (slab_t *)(uintptr_t)(e & (((uint64_t)1 << 48) - 1));
}
static inline unsigned pm_class(uint64_t e) { return (unsigned)((e >> 48) & 0x7f) - 1; }
static inline unsigned pm_owner(uint64_t e) { return (unsigned)(e >> 55) & 0x7f; }

/* An empty slab for class cls owned by slot owner, registered in the page
 * map; never makes a system call (NULL: none at hand, call slab_grow). */
SMP_HIDDEN slab_t *slab_get(unsigned cls, unsigned owner);
/* Map a new chunk of slabs (a system call: no slot lock may be held).  False
 * when out of memory. */
SMP_HIDDEN bool slab_grow(void);
/* An empty slab leaves its class for the pool (owner's lock held). */
SMP_HIDDEN void slab_release(slab_t *sl);
/* Return pooled slabs' pages to the kernel: those older than the purge delay,
 * or all when `all` or past the threshold.  No lock may be held.  Returns
 * the bytes returned. */
SMP_HIDDEN size_t slab_purge(bool all);
/* Runs: k contiguous granules of a chunk (1 <= k <= SMP_RUN_MAX / 64 KiB),
 * for large blocks that are not worth a mapping of their own.  The run's
 * descriptor is its first granule's; its cls field holds k.  run_alloc
 * returns the descriptor (NULL when out of memory; may map a chunk, so no
 * slot lock may be held) and tells whether the memory is zero. */
SMP_HIDDEN slab_t *run_alloc(unsigned k, bool *zeroed);
SMP_HIDDEN void run_free(slab_t *run);
/* Out of address space: unmap every chunk whose slabs are all in the pool
 * (no lock may be held).  Returns the bytes unmapped. */
SMP_HIDDEN size_t slab_unmap_free_chunks(void);
/* For slow paths, with no lock held: purge what is due (slabs, runs,
 * cached mappings).  Cheap when nothing is. */
SMP_HIDDEN void slab_maintain(void);
/* Cheap test, for slow paths: is a purge due? */
SMP_HIDDEN bool slab_purge_due(void);
/* Zeroed metadata memory that is never freed (descriptors, thread caches). */
SMP_HIDDEN void *meta_alloc(size_t size);
SMP_HIDDEN void slab_fork_prepare(void);
SMP_HIDDEN void slab_fork_parent(void);
SMP_HIDDEN void slab_fork_child(void);

/* ---- slot.c: slots, their locks, rotation ------------------------------- */
/* Per class, per slot: the slab being allocated from and the slabs of the
 * class this slot owns that have free blocks (a doubly linked list). */
typedef struct {
  slab_t *cur;
  slab_t *partial;
} bin_t;

typedef struct {
  _Alignas(SMP_CACHE_LINE) _Atomic int lock;  /* 0 free, 1 held, 2 held + waiters */
  uint64_t taken[(SMP_NCLASS + 63) / 64];      /* classes that took a slab (populate hint) */
  _Atomic size_t contended;                    /* try-locks that found it busy */
  bin_t bins[SMP_NCLASS];
} slot_t;

SMP_HIDDEN extern slot_t smp_slots[SMP_MAX_SLOTS];
SMP_HIDDEN extern _Atomic unsigned smp_nslots;
/* One past the highest slot index ever in use (the slot count only grows
 * this): fork, statistics and collection lock slots below it only. */
SMP_HIDDEN extern _Atomic unsigned smp_slots_hi;
SMP_HIDDEN extern __thread unsigned smp_tl_slot;

SMP_HIDDEN slot_t *slot_lock_slow(unsigned start);
SMP_HIDDEN void slot_wake(slot_t *s);
/* Learn the number of slots (the CPU count) if not yet done. */
SMP_HIDDEN void slot_init(void);
/* Re-read the CPU count, at most once a second (slow paths, no lock held). */
SMP_HIDDEN void slot_recount(void);

/* Lock the calling thread's slot, moving to another one if it is busy. */
static inline slot_t *slot_lock(void) {
  unsigned i = smp_tl_slot;
  slot_t *s = &smp_slots[i];
  int expect = 0;
  if (likely(atomic_compare_exchange_strong_explicit(&s->lock, &expect, 1,
                                                     memory_order_acquire,
                                                     memory_order_relaxed)))
    return s;
  return slot_lock_slow(i);
}
static inline void slot_unlock(slot_t *s) {
  if (unlikely(atomic_exchange_explicit(&s->lock, 0, memory_order_release) == 2))
    slot_wake(s);
}

/* Take up to want blocks of class cls into out[0 .. n), in address order;
 * returns n (0 only when out of memory).  Locks a slot itself, and touches
 * no block: the caller links them, after the lock is released. */
SMP_HIDDEN unsigned slot_take(unsigned cls, unsigned want, void **out);
/* Give back a list of blocks (any classes, linked through their first
 * words, NULL-terminated) to the slabs they came from.  who names the call
 * for error messages. */
SMP_HIDDEN void slot_give(void *list, const char *who);
/* Release every empty current slab to the pool (for smp_collect). */
SMP_HIDDEN void slot_collect(void);

/* ---- tcache.c: a small cache of free blocks per thread ------------------- */
/* Per class: a list of free blocks and its length.  limit is 0 for classes
 * that are not cached, and in tc_empty, the cache every thread starts with:
 * its first allocation or free falls into the slow path, which gives the
 * thread a cache of its own. */
typedef struct {
  void *head;
  uint32_t count;
  uint32_t limit;
} tbin_t;

/* remote: blocks of slabs another slot owns, freed by this thread, kept
 * apart (not reused here: a block another thread used may share a cache
 * line with that thread's blocks) and given back in batches. */
typedef struct tcache_s {
  tbin_t bins[SMP_NCLASS];
  void *remote;
  uint32_t nremote;
  struct tcache_s *next_free;
} tcache_t;

SMP_HIDDEN extern __thread tcache_t *smp_tl_cache;
SMP_HIDDEN void *tcache_alloc_slow(unsigned cls);
SMP_HIDDEN void tcache_free_slow(void *p, unsigned cls, const char *who);
SMP_HIDDEN void tcache_free_remote(void *p, const char *who);
/* Give every block of the calling thread's cache back. */
SMP_HIDDEN void tcache_flush_all(void);
SMP_HIDDEN void tcache_fork_prepare(void);
SMP_HIDDEN void tcache_fork_parent(void);
SMP_HIDDEN void tcache_fork_child(void);

/* ---- large.c: blocks beyond the slab classes ---------------------------- */
/* Large blocks are mapped alone, 64 KiB aligned (or more), sizes rounded to
 * 64 KiB, and described by their page-map entry. */
/* *zeroed (if not NULL) tells whether the block is known to be all zero. */
SMP_HIDDEN void *large_alloc(size_t n, size_t align, bool *zeroed);
/* Unmap cached freed blocks: those older than the purge delay, or all. */
SMP_HIDDEN size_t large_purge(bool all);
SMP_HIDDEN void large_fork_prepare(void);
SMP_HIDDEN void large_fork_parent(void);
SMP_HIDDEN void large_fork_child(void);
SMP_HIDDEN void large_free(void *p, uint64_t entry);
/* Grow or shrink in place (may_move false) or by moving pages; NULL if not
 * possible, block unchanged. */
SMP_HIDDEN void *large_remap(void *p, uint64_t entry, size_t n, size_t align, bool may_move);
static inline bool pm_is_run(uint64_t e) { return (e & (PM_LARGE | PM_RUN)) == (PM_LARGE | PM_RUN); }
static inline slab_t *pm_run(uint64_t e) { return (slab_t *)(uintptr_t)(e & ~(uint64_t)7); }
/* The length of the large block or run described by entry e. */
static inline size_t large_size(uint64_t e) {
  if (pm_is_run(e)) return (size_t)pm_run(e)->cls << SMP_SLAB_SHIFT;
  return (size_t)(e & ~(uint64_t)0xffff);
}

/* ---- alloc.c ------------------------------------------------------------- */
/* The usable size of the block p (not NULL), checking p as the call `who`
 * would (messages name that call). */
SMP_HIDDEN size_t usable_size(const void *p, const char *who);

/* ---- stats.c: counters and reports ------------------------------------- */
SMP_HIDDEN void stats_mapped(size_t bytes);
SMP_HIDDEN void stats_unmapped(size_t bytes);
SMP_HIDDEN void stats_returned(size_t bytes);
SMP_HIDDEN void stats_large(size_t bytes, int sign);
/* Bytes in large blocks handed out now. */
SMP_HIDDEN size_t large_in_use(void);
SMP_HIDDEN void stats_lock_wait(void);
/* The verbose start-up line and the at-exit report, per the options. */
SMP_HIDDEN void stats_init(void);
/* slab.c: call fn on every slab descriptor (all slot locks and the slab
 * lock must be held by the caller, through slab_walk_lock). */
SMP_HIDDEN void slab_walk(void (*fn)(const slab_t *sl, void *arg), void *arg);
SMP_HIDDEN void slab_pool_counts(size_t *dirty, size_t *clean);
SMP_HIDDEN unsigned slot_lock_all(void);
SMP_HIDDEN void slot_unlock_all(unsigned locked);

#endif /* SMP_INTERNAL_H */
