/*
 * alloc.c - the smp_* entry points, their slow paths, and the checks on
 * what callers hand back (the fast paths of malloc and free are inline in
 * alloc.h, for override.c's names too).
 *
 * ## Basic design
 * (The whole picture, for a reader who opens only one file.)
 *
 * smpalloc is Zig's SmpAllocator carried into C and completed.  Requests up
 * to 32 KiB come from 64 KiB slabs, one size class per slab; up to 1 MiB
 * from runs of whole 64 KiB granules of the same chunks; bigger requests are
 * mapped alone.  Small-block state lives in a few *slots* (one per CPU, at
 * most 128), each with a lock: per size class, the slab it allocates from
 * and its other slabs with free blocks.  Each slab keeps a bitmap of its
 * free blocks and a count of blocks out, both out of band, so an empty slab
 * is seen at once and its pages can go back to the kernel.  A thread locks
 * "its" slot with a try-lock and moves to the next slot if that one is busy
 * (SmpAllocator's rotation).  In front of the slots each thread has a small
 * array of free blocks per class, so the common malloc and free touch no
 * lock and no atomic.
 *
 * Page faults cost more than anything else a young heap does, so a class
 * that holds 4 MiB of slabs (or any busy class once the heap holds 24 MiB)
 * gets its new slabs from chunks advised for transparent huge pages, while
 * a class used lightly is faulted in a page at a time; both costs are
 * timed, and huge pages are given up where they cost more than the pages
 * they replace (a young virtual machine's).  Freed runs merge
 * with free runs beside them, and realloc grows a run into free granules
 * after it.
 *
 *   malloc(n):  class = class_of(n); pop the thread's array for class;
 *               miss: lock a slot, take a batch from its current slab
 *               (lowest free bits first), a partial slab, or a new one.
 *   free(p):    entry = pagemap[p >> 16];     (one load, no lock)
 *               small: check p is a block start that was handed out, and
 *               not free already (the free key); push on the thread's
 *               array of the block's class in its slot's row (another
 *               slot's row is all zero: the block goes home in a remote
 *               batch, posted to that slot's inbox with no lock, which
 *               its next refill drains); full: give the older half back
 *               to their slabs, each under its owning slot's lock; a
 *               slab whose count reaches 0 goes to the pool (the current
 *               one once used past half), and later its pages to the
 *               kernel.  large:
 *               a run goes to the pool too; a mapping to a small cache
 *               of mappings, or munmap.
 *
 * free() needs no size: the page map says, for every 64 KiB of address
 * space, which slab is there or how long the large block starting there is.
 * That is also how foreign and interior pointers are caught: no entry, or an
 * offset that is not a multiple of the class size, aborts with a one-line
 * message instead of corrupting anything.
 *
 * Safe by default.  No allocator state sits next to a user block: bitmaps,
 * descriptors, thread caches and the page map live in guarded metadata
 * regions, and free blocks are linked by nothing.  A free block carries a
 * random per-process key in its first word, cleared when it is handed out
 * again: free, realloc or free_sized of a block that holds it is a double
 * free (abort), whichever thread's cache or slab the block sits in.  A block
 * start past the slab's high-water mark was never handed out (abort).  Both
 * checks cost a few instructions on the free path (docs/trust.md).
 *
 * Small blocks carry no header: a 3-byte request costs 8 bytes, and every
 * block of 16 bytes or more is 16-aligned.  Aligned requests pick the
 * smallest class whose size is a multiple of the alignment; alignments
 * beyond 32 KiB go large.
 *
 * The layers, each file calling only those below it:
 *   override.c   the libc names
 *   alloc.c      the smp_* entry points (this file; fast paths: alloc.h)
 *   init.c       start-up, fork, thread exit     stats.c   statistics
 *   purge.c      the purge policy, the reclaim path
 *   prof.c       the heap profiler's samples     prof_out.c  its profiles
 *   guard.c      guarded samples                 stack.c, symbol.c  stacks
 *   tcache.c     thread caches
 *   slot.c       slots, rotation, batches        large.c   runs, mappings
 *   slab.c       one slab's bitmap               extent.c  arenas, 1-32 MiB
 *   chunk.c      chunks, descriptors, the pool of free granules
 *   pagemap.c    address -> slab or large block  sizeclass.c  the classes
 *   region.c     metadata, chunk reservations
 *   lock.c       the mutex                       options.c    SMPALLOC_*
 *   os_proc.c    clock, CPUs, futexes, threads, messages
 *   os.c         every other system call: memory
 */
#include <errno.h>
#include <string.h>

#include "alloc.h"
#include "init.h"
#include "large.h"
#include "os.h"
#include "pagemap.h"
#include "prof.h"
#include "purge.h"
#include "reentry.h"
#include "slab.h"
#include "smpalloc.h"
#include "tcache.h"
#include "track.h"

static inline bool is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static void *fail(int err) {
  errno = err;
  return NULL;
}

/* ---- the checks ------------------------------------------------------------ */

static const char bad_pointer[] = "invalid pointer (not allocated by smpalloc, or already freed)";
const char alloc_bad_interior[] = "invalid pointer (inside a block, not its start)";
const char alloc_bad_never[] = "invalid pointer (a block that was never allocated)";
const char alloc_bad_double[] = "double free (the block is free already) of";

/* The class of the small block p of slab sl, for the slow paths. */
static unsigned small_class(const void *p, const slab_t *sl, const char *who) {
  const char *bad = small_bad(p, sl);
  if (unlikely(bad != NULL)) os_fatal(who, bad, p);
  return sl->cls;
}

/* A large block must start where its entry is: a pointer into its first
 * granule is inside it (one into a later granule finds no entry, and is
 * just invalid). */
static inline void large_check(const void *p, pagemap_entry_t e, const char *who) {
  SMP_CHECK(pagemap_kind(e) >= PAGEMAP_RUN, who, bad_pointer, p);
  SMP_CHECK(((uintptr_t)p & (SMP_SLAB_SIZE - 1)) == 0, who, alloc_bad_interior, p);
}

/* ---- slow paths, and calls that re-enter them ------------------------------ */

/* Every path that may take a lock or change the thread's cache runs
 * between enter and leave (tcache_enter): a signal handler's call that
 * interrupts it is served aside (reentry.h).  Leaving, the frees that such
 * calls put off are done, now that no lock is held; past an allocation's,
 * the background purge may be started (purge.h). */
static void enter(void) { tcache_enter(); }
static void free_deferred(void);
static inline void leave(void) {
  tcache_leave();
  if (unlikely(atomic_load_explicit(&reentry_pending, memory_order_relaxed) != 0) && !tcache_reentered())
    free_deferred();
}
/* Past an allocation's slow path: the background purge may be due, and a
 * profile asked for by signal is written (prof.h). */
static inline void leave_alloc(void) {
  leave();
  if (unlikely(purge_bg_none()) && !tcache_reentered()) purge_bg_start();
  if (unlikely(atomic_load_explicit(&prof_asked, memory_order_relaxed) != 0) && !tcache_reentered()) prof_poll();
}

/* ---- small blocks -------------------------------------------------------- */

SMP_NOINLINE static void *small_alloc_slow(unsigned c) {
  if (unlikely(tcache_reentered())) return reentry_alloc(class_table[c].size, SMP_ALIGN_MIN) ?: fail(ENOMEM);
  void *p;
  if (unlikely(tcache_sampling) && tcache_pop_row(tcache_tls.self->bins, bin_offset(c), &p))
    return slab_unkey(p); /* malloc's row hides the thread's while samples are on */
  if (!tcache_ready()) init_thread();
  enter();
  p = tcache_alloc_slow(c);
  if (p == NULL && purge_reclaim()) p = tcache_alloc_slow(c);
  purge_maintain(); /* a program that only allocates still returns memory */
  leave_alloc();
  return p != NULL ? p : fail(ENOMEM);
}

/* A block of class c for n bytes, or NULL (ENOMEM): pop the thread's
 * cache, and clear the free key of the block handed out. */
static inline void *small_alloc(unsigned c, size_t n) {
  void *p;
  if (likely(tcache_pop(bin_offset(c), &p))) return track_alloc(slab_unkey(p), n, false);
  return track_alloc(small_alloc_slow(c), n, false);
}

/* The small block p of slab sl stays where it is for n bytes: p, or NULL
 * if it is too short. */
static void *small_resize(void *p, const slab_t *sl, size_t n, const char *who) {
  size_t have = class_table[small_class(p, sl, who)].size;
  return n <= have ? track_resize(p, track_size(p, have), n) : NULL;
}

/* ---- large blocks and the shared paths ------------------------------------- */

/* A large block, reclaiming memory once if the first try fails. */
SMP_NOINLINE static void *large_alloc_retry(size_t n, size_t align, bool *zeroed) {
  if (unlikely(tcache_reentered())) {
    if (zeroed != NULL) *zeroed = true; /* a fresh mapping */
    return reentry_alloc(n, align) ?: fail(ENOMEM);
  }
  if (!tcache_ready()) init_thread();
  enter();
  /* Not for calloc (zeroed asked): a cached run is dirty, fresh ones not. */
  void *p = zeroed == NULL && align <= SMP_SLAB_SIZE ? large_runs_take(tcache_runs(), n) : NULL;
  if (p == NULL) p = large_alloc(n, align, zeroed);
  if (p == NULL && purge_reclaim()) p = large_alloc(n, align, zeroed);
  purge_maintain();
  leave_alloc();
  return p != NULL ? p : fail(ENOMEM);
}

/* ---- samples (prof.h) ----------------------------------------------------- */

/* The canonical frame address of the entry point the caller reached (a
 * tail jump from a libc name keeps its caller's): stacks start above it. */
#define ENTRY_CFA() ((uintptr_t)__builtin_dwarf_cfa())

/* Count n bytes off the thread's sampling countdown: true when it ran out. */
static inline bool sample_due(size_t n) { return unlikely((int64_t)(tcache_tls.sample_left -= n) < 0); }

/* A block as the entry points get one, with no countdown: align 0 or a
 * power of two; *zeroed (if asked) tells whether it reads as zero. */
static void *alloc_plain(size_t n, size_t align, bool *zeroed) {
  if (zeroed != NULL) *zeroed = false;
  if (align <= 8 || (align <= SMP_ALIGN_MIN && n > 8))
    return n <= SMP_SMALL_MAX ? small_alloc(class_of(n), n) : large_alloc_retry(n, 0, zeroed);
  unsigned c = class_aligned(n, align);
  return c < SMP_NCLASS ? small_alloc(c, n) : large_alloc_retry(n, align, zeroed);
}

/* The countdown ran out at this allocation: the profiler or the guard pool
 * may take it (t.fresh: its block's pages read as zero). */
SMP_NOINLINE static void *alloc_sampled(size_t n, size_t align, uintptr_t cfa, bool *zeroed) {
  prof_ticket_t t;
  void *p = prof_fired(n, align, cfa, &t);
  if (p != NULL) {
    if (zeroed != NULL) *zeroed = t.fresh;
  } else {
    p = alloc_plain(n, align, zeroed);
    if (p != NULL && t.stack != 0) prof_keep(p, n, &t);
  }
  if (unlikely(atomic_load_explicit(&prof_asked, memory_order_relaxed) != 0) && !tcache_reentered()) prof_poll();
  return p != NULL ? p : fail(ENOMEM);
}

/* The usable size of a block served aside or by the profiler's or the guard
 * pool (p has no page map entry); 0 if p is none of those. */
static size_t aside_size(const void *p) {
  size_t s = reentry_size(p);
  return s != 0 ? s : prof_size(p);
}

/* The fast path's misses; while samples are on, every malloc (tcache.h,
 * tcache_sampling): the countdown, then a pop of the thread's own row. */
SMP_NOINLINE void *alloc_slow(size_t n) {
  if (unlikely(tcache_sampling) && !tcache_reentered()) {
    if (sample_due(n)) return alloc_sampled(n, 0, ENTRY_CFA(), NULL);
    void *p;
    if (n <= 1024 && tcache_pop_row(tcache_tls.self->bins, bin_of_size[n], &p))
      return track_alloc(slab_unkey(p), n, false);
  }
  return n <= SMP_SMALL_MAX ? small_alloc(class_of(n), n) : large_alloc_retry(n, 0, NULL);
}

/* (The class and owner are read again here, not passed: the fast path
 * then keeps no copy of them.  sl stays p's slab while p is out.) */
SMP_NOINLINE void free_small_slow(void *p, const slab_t *sl, const char *who) {
  if (unlikely(tcache_reentered())) { /* checked and marked free: freed as the slow path leaves */
    reentry_defer(p);
    return;
  }
  if (!tcache_ready()) init_thread();
  enter();
  if (tcache_free_slow(p, sl->cls, sl->owner, who)) purge_maintain();
  leave();
}

/* align: a power of two.  Blocks of 16 bytes or more are 16-aligned.
 * Inline in each entry point, whose frame ENTRY_CFA names. */
static inline __attribute__((always_inline)) void *alloc_aligned(size_t align, size_t n) {
  if (align <= 8 || (align <= SMP_ALIGN_MIN && n > 8)) return alloc_any(n);
  if (sample_due(n)) return alloc_sampled(n, align, ENTRY_CFA(), NULL);
  unsigned c = class_aligned(n, align);
  return c < SMP_NCLASS ? small_alloc(c, n) : large_alloc_retry(n, align, NULL);
}

SMP_NOINLINE void free_large(void *p, pagemap_entry_t e, const char *who) {
  if (p == NULL) return;
  if (unlikely(pagemap_kind(e) < PAGEMAP_RUN) && (reentry_free(p) || prof_free(p, ENTRY_CFA())))
    return; /* served aside, or a profiled or guarded sample */
  large_check(p, e, who);
  if (unlikely(atomic_load_explicit(&prof_large_live, memory_order_relaxed) != 0)) prof_forget(p);
  if (unlikely(tcache_reentered())) {
    reentry_defer(p);
    return;
  }
  enter();
  if (!large_runs_put(tcache_runs(), e)) large_free(p, e);
  purge_maintain();
  leave();
}

/* The frees put off by calls that re-entered a slow path (reentry.h),
 * each block checked when it was freed: small ones marked free already. */
SMP_NOINLINE static void free_deferred(void) {
  for (void *p; (p = reentry_next()) != NULL;) {
    pagemap_entry_t e = pagemap_get(p);
    if (pagemap_kind(e) == PAGEMAP_SLAB) {
      const slab_t *sl = pagemap_desc(e);
      if (!tcache_push(p, sl->bin)) free_small_slow(p, sl, "free");
    } else {
      free_large(p, e, "free");
    }
  }
}

SMP_NOINLINE void free_other(void *p, const char *who) {
  pagemap_entry_t e = pagemap_get(p);
  if (pagemap_kind(e) == PAGEMAP_SLAB) return small_free(p, pagemap_desc(e), who);
  free_large(p, e, who);
}

size_t usable_size(const void *p, const char *who) {
  pagemap_entry_t e = pagemap_get(p);
  if (pagemap_kind(e) == PAGEMAP_SLAB) return class_table[small_class(p, pagemap_desc(e), who)].size;
  size_t aside = pagemap_kind(e) < PAGEMAP_RUN ? aside_size(p) : 0;
  if (unlikely(aside != 0)) return aside;
  large_check(p, e, who);
  return large_size(e);
}

/* ---- the malloc family -------------------------------------------------- */

SMP_API void *smp_malloc(size_t n) { return alloc_any(n); }

SMP_API void smp_free(void *p) { free_any(p, "free"); }

SMP_API void *smp_calloc(size_t count, size_t size) {
  size_t n;
  if (unlikely(__builtin_mul_overflow(count, size, &n))) return fail(ENOMEM);
  bool zeroed;
  if (sample_due(n)) {
    void *p = alloc_sampled(n, 0, ENTRY_CFA(), &zeroed);
    return p == NULL || zeroed ? p : memset(p, 0, n);
  }
  if (likely(n <= SMP_SMALL_MAX)) {
    void *p = small_alloc(class_of(n), n);
    return p != NULL ? memset(p, 0, n) : NULL;
  }
  void *p = large_alloc_retry(n, 0, &zeroed);
  if (p == NULL) return NULL;
  return zeroed ? p : memset(p, 0, n); /* fresh pages are zero; reused ones not */
}

/* realloc of a large block p (entry e) in a call that re-entered a slow
 * path, or of a block served aside (aside: its size): by a copy, the old
 * block freed (put off, for a large one of the heap). */
SMP_NOINLINE static void *realloc_aside(void *p, pagemap_entry_t e, size_t aside, size_t n) {
  if (aside == 0) large_check(p, e, "realloc");
  size_t have = aside ? aside : large_size(e);
  void *q = smp_malloc(n);
  if (q == NULL) return NULL;
  memcpy(q, p, n < have ? n : have);
  free_large(p, e, "realloc");
  return q;
}

static void *realloc_plain(void *p, size_t n);

/* realloc of p whose new size ran the countdown out.  Small: a new block,
 * which the profiler or the guard pool may take.  Large: resized as
 * usual (in place where it can be), then recorded if profiled. */
SMP_NOINLINE static void *realloc_sampled(void *p, size_t n, uintptr_t cfa) {
  if (n > SMP_SMALL_MAX) {
    prof_ticket_t t;
    (void)prof_fired(n, 0, cfa, &t); /* no pool block past SMP_SMALL_MAX */
    void *q = realloc_plain(p, n);
    if (q != NULL && t.stack != 0) prof_keep(q, n, &t);
    return q;
  }
  size_t have = track_size(p, usable_size(p, "realloc"));
  void *q = alloc_sampled(n, 0, cfa, NULL);
  if (q == NULL) return NULL;
  memcpy(q, p, n < have ? n : have);
  free_any(p, "realloc");
  return q;
}

SMP_API void *smp_realloc(void *p, size_t n) {
  if (p == NULL) return alloc_any(n);
  if (n == 0) { /* glibc: free and return NULL */
    free_any(p, "realloc");
    return NULL;
  }
  if (sample_due(n)) return realloc_sampled(p, n, ENTRY_CFA());
  return realloc_plain(p, n);
}

/* realloc of p (not NULL) to n bytes (not 0), with no countdown. */
static void *realloc_plain(void *p, size_t n) {
  pagemap_entry_t e = pagemap_get(p);
  if (likely(pagemap_kind(e) == PAGEMAP_SLAB)) {
    slab_t *sl = pagemap_desc(e);
    unsigned c = small_class(p, sl, "realloc");
    track_quiet_begin(); /* valgrind: p's first word may be undefined, or past its request */
    SMP_CHECK(*(uint64_t *)p != slab_free_key, "realloc", alloc_bad_double, p);
    track_quiet_end();
    size_t have = class_table[c].size, kept = track_size(p, have);
    /* Stay in place while the block is at most twice what is asked. */
    if (n <= have && (n >= have / 2 || class_of(n) == c)) return track_resize(p, kept, n);
    void *q = n <= SMP_SMALL_MAX ? small_alloc(class_of(n), n) : large_alloc_retry(n, 0, NULL);
    if (q == NULL) return n <= have ? track_resize(p, kept, n) : NULL;
    memcpy(q, p, n < kept ? n : kept);
    track_free(p);
    small_free(p, sl, "realloc");
    return q;
  }
  size_t aside = pagemap_kind(e) < PAGEMAP_RUN ? aside_size(p) : 0;
  if (unlikely(aside != 0 || tcache_reentered())) return realloc_aside(p, e, aside, n);
  large_check(p, e, "realloc");
  if (n > SMP_SMALL_MAX) {
    if (unlikely(atomic_load_explicit(&prof_large_live, memory_order_relaxed) != 0)) prof_forget(p);
    enter();
    large_runs_flush(tcache_runs()); /* the runs after p, if it is one, may be in the cache */
    void *q = large_remap(p, e, n, 0, true);
    if (q == NULL && purge_reclaim()) q = large_remap(p, e, n, 0, true);
    leave();
    return q != NULL ? q : fail(ENOMEM);
  }
  /* Large to small: copy down and free. */
  void *q = small_alloc(class_of(n), n);
  if (q == NULL) return track_resize(p, track_size(p, large_size(e)), n); /* still valid, at least n bytes */
  memcpy(q, p, track_size(p, n));
  track_free(p);
  free_large(p, e, "realloc");
  return q;
}

SMP_API void *smp_reallocarray(void *p, size_t count, size_t size) {
  size_t n;
  if (__builtin_mul_overflow(count, size, &n)) return fail(ENOMEM);
  return smp_realloc(p, n);
}

SMP_API void *smp_aligned_alloc(size_t align, size_t n) {
  if (!is_pow2(align)) return fail(EINVAL);
  return alloc_aligned(align, n);
}

SMP_API void *smp_memalign(size_t align, size_t n) { return smp_aligned_alloc(align, n); }

SMP_API int smp_posix_memalign(void **out, size_t align, size_t n) {
  if (!is_pow2(align) || align % sizeof(void *) != 0) return EINVAL;
  int saved = errno;
  void *p = alloc_aligned(align, n);
  errno = saved;
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

SMP_API void *smp_valloc(size_t n) { return alloc_aligned(os_page_size(), n); }

SMP_API void *smp_pvalloc(size_t n) {
  size_t page = os_page_size(), r = (n + page - 1) & ~(page - 1);
  if (r < n) return fail(ENOMEM);
  return alloc_aligned(page, r ? r : page);
}

SMP_API size_t smp_usable_size(const void *p) {
  return p == NULL ? 0 : track_size(p, usable_size(p, "smp_usable_size"));
}

SMP_API void smp_free_sized(void *p, size_t size) {
  if (p == NULL) return;
  SMP_CHECK(size <= usable_size(p, "free_sized"), "free_sized", "size larger than the block at", p);
  free_any(p, "free_sized");
}

SMP_API void smp_free_aligned_sized(void *p, size_t align, size_t size) {
  if (p == NULL) return;
  SMP_CHECK(is_pow2(align) && ((uintptr_t)p & (align - 1)) == 0, "free_aligned_sized",
            "alignment does not match the block at", p);
  SMP_CHECK(size <= usable_size(p, "free_aligned_sized"), "free_aligned_sized",
            "size larger than the block at", p);
  free_any(p, "free_aligned_sized");
}

/* ---- the Zig-style sized interface -------------------------------------- */

SMP_API void *smp_alloc(size_t len, size_t align) {
  if (align == 0) align = 1;
  if (!is_pow2(align)) return fail(EINVAL);
  return alloc_aligned(align, len);
}

SMP_API bool smp_resize(void *p, size_t len, size_t align, size_t new_len) {
  (void)len;
  if (p == NULL) return false;
  pagemap_entry_t e = pagemap_get(p);
  if (pagemap_kind(e) == PAGEMAP_SLAB) return small_resize(p, pagemap_desc(e), new_len, "smp_resize") != NULL;
  size_t aside = pagemap_kind(e) < PAGEMAP_RUN ? aside_size(p) : 0;
  if (unlikely(aside != 0)) return new_len <= aside;
  large_check(p, e, "smp_resize");
  if (unlikely(tcache_reentered())) return false;
  if (unlikely(atomic_load_explicit(&prof_large_live, memory_order_relaxed) != 0)) prof_forget(p);
  enter();
  bool ok = large_remap(p, e, new_len ? new_len : 1, align, false) != NULL;
  leave();
  return ok;
}

SMP_API void *smp_remap(void *p, size_t len, size_t align, size_t new_len) {
  (void)len;
  if (p == NULL || new_len == 0) return NULL;
  pagemap_entry_t e = pagemap_get(p);
  if (pagemap_kind(e) == PAGEMAP_SLAB) /* small blocks never move by themselves: the caller copies */
    return small_resize(p, pagemap_desc(e), new_len, "smp_remap");
  size_t aside = pagemap_kind(e) < PAGEMAP_RUN ? aside_size(p) : 0;
  if (unlikely(aside != 0)) return new_len <= aside ? p : NULL;
  large_check(p, e, "smp_remap");
  if (unlikely(tcache_reentered())) return NULL; /* the caller copies */
  if (unlikely(atomic_load_explicit(&prof_large_live, memory_order_relaxed) != 0)) prof_forget(p);
  if (align == 0) align = 1;
  enter();
  void *q = large_remap(p, e, new_len, align, true);
  leave();
  return q;
}

SMP_API size_t smp_collect(void) {
  if (tcache_reentered()) return 0;
  enter();
  size_t n = purge_all();
  leave();
  return n;
}

SMP_API void smp_dealloc(void *p, size_t len, size_t align) {
  (void)align;
  if (p == NULL) return;
  SMP_CHECK(len <= usable_size(p, "smp_dealloc"), "smp_dealloc", "length larger than the block at",
            p);
  free_any(p, "smp_dealloc");
}
