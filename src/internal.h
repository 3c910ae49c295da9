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
/* Number of CPUs this process may run on (affinity mask), at least 1. */
SMP_HIDDEN unsigned os_cpu_count(void);
/* The kernel's page size. */
SMP_HIDDEN size_t os_page_size(void);
/* Block until *addr != val or a wake-up; wake up to n waiters of addr. */
SMP_HIDDEN void os_futex_wait(_Atomic int *addr, int val);
SMP_HIDDEN void os_futex_wake(_Atomic int *addr, int n);
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
  uint32_t limit;  /* blocks per slab * size: the first offset past the last block */
  uint32_t pad;
} class_info_t;

SMP_HIDDEN extern const class_info_t smp_class[SMP_NCLASS];

/* Class of a request of n bytes (n <= SMP_SMALL_MAX) with no alignment need
 * beyond 8. */
static inline unsigned size_class(size_t n) {
  if (n <= 128) return (unsigned)(((n | (n == 0)) - 1) >> 3);
  size_t m = n - 1;
  unsigned b = 63u - (unsigned)__builtin_clzl(m);  /* 7 <= b < 15 */
  return 16u + (b - 7u) * 8u + (unsigned)((m >> (b - 3u)) & 7u);
}
/* Class for n bytes aligned to align (a power of two), or SMP_NCLASS if no
 * slab class can serve it. */
SMP_HIDDEN unsigned size_class_aligned(size_t n, size_t align);

/* ---- pagemap.c: address -> what smpalloc keeps there -------------------- */
/* One 64-bit entry per 64 KiB granule of the 48-bit address space, in a
 * two-level table: pm_top[addr >> 32] -> leaf[(addr >> 16) & 0xffff].
 *   entry == 0                     not ours (or inside a large block)
 *   entry & 1 == 0, entry != 0     a slab of class (entry >> 1) - 1
 *   entry & 1 == 1                 the first granule of a large block whose
 *                                  mapping is entry & ~0xffff bytes long
 * Invariant: an entry is non-zero exactly while the slab or large block it
 * describes is handed out to smpalloc's users. */
#define PM_LEAF_BITS 16
#define PM_TOP_BITS 16
#define PM_LARGE 1u

SMP_HIDDEN extern _Atomic(_Atomic uint64_t *) pm_top[1u << PM_TOP_BITS];

static inline uint64_t pagemap_get(const void *p) {
  uintptr_t a = (uintptr_t)p;
  if (unlikely(a >> (PM_TOP_BITS + 32))) return 0;
  _Atomic uint64_t *leaf = atomic_load_explicit(&pm_top[a >> 32], memory_order_acquire);
  if (unlikely(leaf == NULL)) return 0;
  return atomic_load_explicit(&leaf[(a >> SMP_SLAB_SHIFT) & ((1u << PM_LEAF_BITS) - 1)],
                              memory_order_relaxed);
}
static inline uint64_t pm_slab_entry(unsigned cls) { return (uint64_t)(cls + 1) << 1; }
static inline unsigned pm_slab_class(uint64_t e) { return (unsigned)(e >> 1) - 1; }

/* Make sure leaves exist for [p, p+size); false if out of memory. */
SMP_HIDDEN bool pagemap_reserve(uintptr_t p, size_t size);
/* Set the entry of the granule holding p (its leaf must be reserved). */
SMP_HIDDEN void pagemap_set(uintptr_t p, uint64_t entry);

/* ---- slab.c: 64 KiB slabs carved from chunks ---------------------------- */
/* A fresh slab for class cls, registered in the page map, its memory zero.
 * slab_new may map memory (a system call: call it with no slot lock held)
 * and returns NULL only when out of memory; slab_try_new never makes a
 * system call and returns NULL when it would have to. */
SMP_HIDDEN void *slab_new(unsigned cls);
SMP_HIDDEN void *slab_try_new(unsigned cls);
/* Give back a slab from slab_new that was never used. */
SMP_HIDDEN void slab_spare(void *slab);
SMP_HIDDEN void slab_fork_prepare(void);
SMP_HIDDEN void slab_fork_parent(void);
SMP_HIDDEN void slab_fork_child(void);

/* ---- slot.c: slots, their locks, rotation ------------------------------- */
/* Per class, per slot.  Invariants (while the slot's lock is held):
 *   every block on `free` is a free block of this class, linked through its
 *   first word; bump <= end; [bump, end) is never-used zero memory of one
 *   slab, a whole number of blocks long; bump == end means "no slab". */
typedef struct {
  void *free;
  uintptr_t bump;
  uintptr_t end;
  uintptr_t pad;
} bin_t;

typedef struct {
  _Alignas(SMP_CACHE_LINE) _Atomic int lock;  /* 0 free, 1 held, 2 held + waiters */
  bin_t bins[SMP_NCLASS];
} slot_t;

SMP_HIDDEN extern slot_t smp_slots[SMP_MAX_SLOTS];
SMP_HIDDEN extern _Atomic unsigned smp_nslots;
SMP_HIDDEN extern __thread unsigned smp_tl_slot;

SMP_HIDDEN slot_t *slot_lock_slow(unsigned start);
SMP_HIDDEN void slot_wake(slot_t *s);
SMP_HIDDEN void slot_init(void);
/* Refill bin cls of the held slot s: steal another slot's free list or take
 * a new slab.  Returns a block, or NULL (out of memory).  Keeps s locked.
 * *populate is set to a new slab the caller should fault in (os_populate)
 * once it has let the slot go, or NULL. */
SMP_HIDDEN void *slot_refill(slot_t *s, unsigned cls, bool *zeroed, void **populate);
/* Install slab as bin cls's bump region; returns its first block.  Sets
 * *populate as slot_refill does. */
SMP_HIDDEN void *slot_install(slot_t *s, unsigned cls, void *slab, void **populate);

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

/* ---- large.c: blocks beyond the slab classes ---------------------------- */
/* Large blocks are mapped alone, 64 KiB aligned (or more), sizes rounded to
 * 64 KiB, and described by their page-map entry. */
SMP_HIDDEN void *large_alloc(size_t n, size_t align);
SMP_HIDDEN void large_free(void *p, uint64_t entry);
/* Grow or shrink in place (may_move false) or by moving pages; NULL if not
 * possible, block unchanged. */
SMP_HIDDEN void *large_remap(void *p, uint64_t entry, size_t n, size_t align, bool may_move);
static inline size_t large_size(uint64_t e) { return (size_t)(e & ~(uint64_t)0xffff); }

#endif /* SMP_INTERNAL_H */
