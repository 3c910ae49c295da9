/*
 * alloc.c - the smp_* entry points: the fast paths, and the checks on what
 * callers hand back.
 *
 * ## Basic design
 * (The whole picture, for a reader who opens only one file.)
 *
 * smpalloc is Zig's SmpAllocator carried into C and completed.  Memory for
 * requests up to 32 KiB comes from 64 KiB slabs, one size class per slab;
 * up to 1 MiB from runs of whole 64 KiB granules of the same chunks; bigger
 * requests are mapped alone.  Small-block state lives in a few
 * *slots* (one per CPU, at most 128), each with a lock: per size class, the
 * slab it allocates from and its other slabs with free blocks.  Each slab
 * keeps a bitmap of its free blocks (not SmpAllocator's list threaded
 * through them: a batch is taken without reading a block) and a count of
 * blocks out, so an empty slab is seen at once and its pages can go back to
 * the kernel.  A thread locks "its" slot with a try-lock and moves to the
 * next slot if that one is busy (SmpAllocator's rotation); when all are
 * busy it polls a lock briefly, then sleeps on it.
 * In front of the slots each thread has a small cache per class (tcache.c),
 * so the common malloc and free touch no lock and no atomic.
 *
 *   malloc(n):  class = size_class(n); pop the thread's cache for class;
 *               miss: lock a slot, take a batch from its current slab
 *               (lowest free bits first), a partial slab, or a pooled/new
 *               one.
 *   free(p):    entry = pagemap[p];           (two loads, no lock)
 *               small: check p is a block start; push on the thread cache;
 *               full: give the older half back to their slabs, each under
 *               its owning slot's lock; a slab whose count reaches 0 goes
 *               to the pool, and after a delay its pages to the kernel.
 *               large: a run goes to the pool too; a mapping to a small
 *               cache of mappings, or munmap.
 *
 * free() needs no size: the page map (pagemap.c) says, for every 64 KiB of
 * address space, which class the slab there holds or how long the large
 * block starting there is.  That is also how foreign and interior pointers
 * are caught: no entry, or an offset that is not a multiple of the class
 * size, aborts with a one-line message instead of corrupting a list.
 *
 * Small blocks carry no header: a 3-byte request costs 8 bytes.  Blocks are
 * 8-byte aligned; a block whose size is a multiple of 16 is 16-aligned
 * (every class that is a multiple of 16 sits at multiples of its size from
 * a 64 KiB-aligned slab).  Aligned requests pick the smallest class whose
 * size is a multiple of the alignment; alignments beyond 32 KiB go large.
 *
 * Where the files are: os.c (every system call), sizeclass.c (the class
 * table), pagemap.c (address -> slab), slab.c (chunks, slabs, runs,
 * descriptors, the pool of empty ones, returning memory), slot.c (slots, locks, batches, fork),
 * tcache.c (thread caches), large.c (big blocks), options.c (SMPALLOC_*),
 * stats.c (statistics), override.c (the libc names).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "smpalloc.h"

#define SMP_ALIGN_NATURAL 8u

static inline bool is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* ---- small blocks -------------------------------------------------------- */

/* A block of class c, or NULL when out of memory: pop the thread cache. */
static inline void *small_alloc(unsigned c) {
  tbin_t *b = &smp_tl_cache->bins[c];
  void *p = b->head;
  if (likely(p != NULL)) {
    b->head = *(void **)p;
    b->count--;
    return p;
  }
  return tcache_alloc_slow(c);
}

/* Free the small block p of class c: push on the thread cache. */
/* The same block freed twice in a row.  (Not noreturn, like bad_interior
 * below: the fast path reaches it by a tail jump and keeps no frame.) */
SMP_NOINLINE SMP_COLD static void double_free(const void *p, const char *who) {
  os_fatal(who, "double free of", p);
}

static inline void small_free(void *p, unsigned c, const char *who) {
  tbin_t *b = &smp_tl_cache->bins[c];
  if (likely(b->count < b->limit)) {
    if (unlikely(b->head == p)) return double_free(p, who);
    *(void **)p = b->head;
    b->head = p;
    b->count++;
    return;
  }
  tcache_free_slow(p, c, who);
}

/* Not the start of a block: an interior or misaligned pointer.  (A plain
 * function, not noreturn, so the fast path reaches it by a tail jump and
 * keeps no stack frame of its own.) */
SMP_NOINLINE SMP_COLD static void bad_interior(const void *p, const char *who) {
  os_fatal(who, "invalid pointer (inside a block, not its start)", p);
}

/* The class of the small block p described by slab entry e; aborts if p is
 * not the start of a block. */
static inline unsigned small_class_of(const void *p, uint64_t e, const char *who) {
  unsigned c = pm_class(e);
  if (unlikely(!block_start((uint32_t)((uintptr_t)p & (SMP_SLAB_SIZE - 1)), &smp_class[c])))
    bad_interior(p, who);
  return c;
}

/* Slab entries carry class + 1 in their top 16 bits; large ones never do. */
static inline bool is_slab(uint64_t e) { return (e >> 48) != 0; }

/* Checks on a pointer that is not a small block: NULL is for the caller to
 * handle; no entry or not the start of the large block aborts. */
SMP_COLD static void bad_pointer(const void *p, const char *who) {
  os_fatal(who, "invalid pointer (not allocated by smpalloc, or already freed)", p);
}
static inline void large_check(const void *p, uint64_t e, const char *who) {
  if (unlikely(e == 0 || ((uintptr_t)p & (SMP_SLAB_SIZE - 1)) != 0)) bad_pointer(p, who);
}

/* ---- shared paths ------------------------------------------------------- */

static void *fail(int err) {
  errno = err;
  return NULL;
}

SMP_NOINLINE static void *alloc_mid_or_large(size_t n) {
  void *p = n <= SMP_SMALL_MAX ? small_alloc(size_class(n)) : large_alloc(n, 0, NULL);
  return likely(p != NULL) ? p : fail(ENOMEM);
}

/* The malloc fast path: a table lookup and a pop.  The slow paths set
 * errno themselves, so nothing here waits on their result. */
static inline void *alloc_small_or_large(size_t n) {
  if (likely(n <= 1024)) return small_alloc(smp_class_by8[(n + 7) >> 3]);
  return alloc_mid_or_large(n);
}

/* align: a power of two. */
static void *alloc_aligned(size_t align, size_t n) {
  if (align <= SMP_ALIGN_NATURAL) return alloc_small_or_large(n);
  unsigned c = size_class_aligned(n, align);
  void *p = c < SMP_NCLASS ? small_alloc(c) : large_alloc(n, align, NULL);
  return p != NULL ? p : fail(ENOMEM);
}

SMP_NOINLINE static void free_slow(void *p, uint64_t e, const char *who) {
  if (p == NULL) return;
  large_check(p, e, who);
  large_free(p, e);
}

/* Free the small block p of entry e: on the thread cache if its slab is
 * this thread's slot's, else on the remote batch. */
static inline void small_free_entry(void *p, uint64_t e, const char *who) {
  unsigned c = pm_class(e);
  if (unlikely(!block_start((uint32_t)((uintptr_t)p & (SMP_SLAB_SIZE - 1)), &smp_class[c])))
    return bad_interior(p, who);
  if (likely(pm_owner(e) == smp_tl_slot)) return small_free(p, c, who);
  tcache_free_remote(p, who);
}

static inline void free_any(void *p, const char *who) {
  uint64_t e = pagemap_get(p);
  if (likely(is_slab(e))) {
    small_free_entry(p, e, who);
    return;
  }
  free_slow(p, e, who);
}

/* The usable size of p, checking p as `who` would. */
size_t usable_size(const void *p, const char *who) {
  uint64_t e = pagemap_get(p);
  if (is_slab(e)) return smp_class[small_class_of(p, e, who)].size;
  large_check(p, e, who);
  return large_size(e);
}

/* ---- the malloc family -------------------------------------------------- */

SMP_API void *smp_malloc(size_t n) { return alloc_small_or_large(n); }

SMP_API void smp_free(void *p) { free_any(p, "free"); }

SMP_API void *smp_calloc(size_t count, size_t size) {
  size_t n;
  if (unlikely(__builtin_mul_overflow(count, size, &n))) return fail(ENOMEM);
  if (likely(n <= SMP_SMALL_MAX)) {
    void *p = small_alloc(size_class(n));
    if (unlikely(p == NULL)) return fail(ENOMEM);
    return memset(p, 0, n);
  }
  bool zeroed;
  void *p = large_alloc(n, 0, &zeroed);
  if (p == NULL) return fail(ENOMEM);
  return zeroed ? p : memset(p, 0, n); /* fresh pages are zero; cached ones not */
}

SMP_API void *smp_realloc(void *p, size_t n) {
  if (p == NULL) return alloc_small_or_large(n);
  if (n == 0) { /* glibc: free and return NULL */
    free_any(p, "realloc");
    return NULL;
  }
  uint64_t e = pagemap_get(p);
  if (likely(is_slab(e))) {
    unsigned c = small_class_of(p, e, "realloc");
    size_t have = smp_class[c].size;
    /* Stay in place while the block is at most twice what is asked, and
     * aligned as a fresh block of n bytes would be (16 for multiples of 16). */
    if (n <= have && (n >= have / 2 || size_class(n) == c) &&
        ((n & 15) != 0 || ((uintptr_t)p & 15) == 0))
      return p;
    void *q = n <= SMP_SMALL_MAX ? small_alloc(size_class(n)) : large_alloc(n, 0, NULL);
    if (q == NULL) return n <= have ? p : fail(ENOMEM);
    memcpy(q, p, n < have ? n : have);
    small_free_entry(p, e, "realloc");
    return q;
  }
  large_check(p, e, "realloc");
  if (n > SMP_SMALL_MAX) {
    void *q = large_remap(p, e, n, 0, true);
    return q != NULL ? q : fail(ENOMEM);
  }
  /* Large to small: copy down and unmap. */
  void *q = small_alloc(size_class(n));
  if (q == NULL) return p; /* still valid and at least n bytes */
  memcpy(q, p, n);
  large_free(p, e);
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

SMP_API void *smp_valloc(size_t n) { return alloc_aligned(SMP_PAGE_SIZE, n); }

SMP_API void *smp_pvalloc(size_t n) {
  size_t r = (n + SMP_PAGE_SIZE - 1) & ~(size_t)(SMP_PAGE_SIZE - 1);
  if (r < n) return fail(ENOMEM);
  return alloc_aligned(SMP_PAGE_SIZE, r ? r : SMP_PAGE_SIZE);
}

SMP_API size_t smp_usable_size(const void *p) {
  return p == NULL ? 0 : usable_size(p, "smp_usable_size");
}

SMP_API void smp_free_sized(void *p, size_t size) {
  if (p == NULL) return;
  if (unlikely(size > usable_size(p, "free_sized")))
    os_fatal("free_sized", "size larger than the block at", p);
  free_any(p, "free_sized");
}

SMP_API void smp_free_aligned_sized(void *p, size_t align, size_t size) {
  if (p == NULL) return;
  if (unlikely(!is_pow2(align) || ((uintptr_t)p & (align - 1)) != 0))
    os_fatal("free_aligned_sized", "alignment does not match the block at", p);
  if (unlikely(size > usable_size(p, "free_aligned_sized")))
    os_fatal("free_aligned_sized", "size larger than the block at", p);
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
  uint64_t e = pagemap_get(p);
  if (is_slab(e)) return new_len <= smp_class[small_class_of(p, e, "smp_resize")].size;
  large_check(p, e, "smp_resize");
  return large_remap(p, e, new_len ? new_len : 1, align, false) != NULL;
}

SMP_API void *smp_remap(void *p, size_t len, size_t align, size_t new_len) {
  (void)len;
  if (p == NULL || new_len == 0) return NULL;
  uint64_t e = pagemap_get(p);
  if (is_slab(e)) /* small blocks never move by themselves: the caller copies */
    return new_len <= smp_class[small_class_of(p, e, "smp_remap")].size ? p : NULL;
  large_check(p, e, "smp_remap");
  if (align == 0) align = 1;
  return large_remap(p, e, new_len, align, true);
}

SMP_API size_t smp_collect(void) {
  tcache_flush_all();
  slot_collect();
  return slab_purge(true) + large_purge(true);
}

SMP_API void smp_dealloc(void *p, size_t len, size_t align) {
  (void)align;
  if (p == NULL) return;
  if (unlikely(len > usable_size(p, "smp_dealloc")))
    os_fatal("smp_dealloc", "length larger than the block at", p);
  free_any(p, "smp_dealloc");
}
