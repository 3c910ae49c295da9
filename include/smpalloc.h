/*
 * smpalloc.h - public interface of libsmpalloc.
 *
 * libsmpalloc is a general-purpose, thread-safe memory allocator for Linux
 * derived from the design of Zig's std.heap.SmpAllocator.  It can be used in
 * three ways:
 *
 *   1. As a drop-in replacement for the libc malloc family: preload
 *      libsmpalloc.so (LD_PRELOAD) or link libsmpalloc.a / -lsmpalloc.  The
 *      libc names (malloc, free, calloc, realloc, reallocarray,
 *      posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 *      malloc_usable_size, free_sized, free_aligned_sized) are then served by
 *      smpalloc.
 *   2. Through the prefixed smp_* functions below, which are always smpalloc
 *      whatever else serves malloc in the process.
 *   3. Through the Zig-style sized interface (smp_alloc, smp_resize,
 *      smp_remap, smp_dealloc), where the caller remembers each block's
 *      length and alignment.
 *
 * Conventions shared by every function here:
 *   - Failure returns NULL (or an error number for smp_posix_memalign) and
 *     sets errno to ENOMEM for sizes that cannot be served (overflow, sizes
 *     near SIZE_MAX, the kernel refusing memory) and to EINVAL for an
 *     alignment that is not a power of two.  A successful call leaves errno
 *     unchanged.
 *   - Every block of 16 bytes or more is aligned to 16 (alignof(max_align_t)
 *     on x86-64 and aarch64), smaller ones to 8: every object with
 *     fundamental alignment that fits is correctly aligned.
 *   - Freeing a pointer that smpalloc did not hand out, an interior pointer,
 *     a block never handed out, or a block already freed prints one line on
 *     stderr naming the call and the address, then aborts.  (A double free
 *     is missed only when the block's first word was written between the
 *     two frees, a use after free that checked mode catches.)  NULL is always accepted
 *     by the free functions and ignored.
 *   - Where C leaves freedom, smpalloc behaves as glibc 2.36 does:
 *     malloc(0) returns a unique, freeable pointer; realloc(p, 0) with p not
 *     NULL frees p and returns NULL; realloc(NULL, n) is malloc(n).
 *     Unlike glibc 2.36, memalign and aligned_alloc reject an alignment that
 *     is not a power of two with EINVAL (as glibc 2.38 does for
 *     aligned_alloc) instead of rounding it up.
 */
#ifndef SMPALLOC_H
#define SMPALLOC_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(SMP_NO_ATTRIBUTES)
#define SMP_MALLOC_ATTR __attribute__((malloc, warn_unused_result))
#define SMP_ALLOC_SIZE(i) __attribute__((alloc_size(i)))
#define SMP_ALLOC_SIZE2(i, j) __attribute__((alloc_size(i, j)))
#define SMP_ALLOC_ALIGN(i) __attribute__((alloc_align(i)))
#define SMP_NODISCARD __attribute__((warn_unused_result))
#else
#define SMP_MALLOC_ATTR
#define SMP_ALLOC_SIZE(i)
#define SMP_ALLOC_SIZE2(i, j)
#define SMP_ALLOC_ALIGN(i)
#define SMP_NODISCARD
#endif

#define SMPALLOC_VERSION_MAJOR 0
#define SMPALLOC_VERSION_MINOR 1
#define SMPALLOC_VERSION_PATCH 0

/* ---- The malloc family, prefixed ------------------------------------- */

/* A block of at least n bytes, or NULL with errno ENOMEM.  smp_malloc(0)
 * returns a unique pointer to a block of usable size 8. */
void *smp_malloc(size_t n) SMP_MALLOC_ATTR SMP_ALLOC_SIZE(1);

/* A zeroed block of count * size bytes; NULL with ENOMEM on overflow. */
void *smp_calloc(size_t count, size_t size) SMP_MALLOC_ATTR SMP_ALLOC_SIZE2(1, 2);

/* Resize p to n bytes, keeping min(old, n) bytes of content; the block may
 * move.  realloc(NULL, n) == malloc(n); realloc(p, 0) frees p and returns
 * NULL (glibc's behaviour).  On failure returns NULL with ENOMEM and p is
 * untouched and still valid. */
void *smp_realloc(void *p, size_t n) SMP_NODISCARD SMP_ALLOC_SIZE(2);

/* realloc(p, count * size), NULL with ENOMEM if the product overflows. */
void *smp_reallocarray(void *p, size_t count, size_t size) SMP_NODISCARD SMP_ALLOC_SIZE2(2, 3);

/* Release a block from any function of this header (or the libc names when
 * smpalloc serves them).  smp_free(NULL) does nothing. */
void smp_free(void *p);

/* C23 free_sized: size must be the size passed when p was allocated (by
 * malloc, calloc or realloc).  A size larger than the block aborts. */
void smp_free_sized(void *p, size_t size);

/* C23 free_aligned_sized: for blocks from aligned_alloc. */
void smp_free_aligned_sized(void *p, size_t alignment, size_t size);

/* A block of n bytes aligned to alignment, which must be a power of two
 * (any power of two, 1 B to 2^62 in principle); NULL with EINVAL otherwise. */
void *smp_aligned_alloc(size_t alignment, size_t n) SMP_MALLOC_ATTR SMP_ALLOC_ALIGN(1) SMP_ALLOC_SIZE(2);

/* Same as smp_aligned_alloc (the obsolete memalign name). */
void *smp_memalign(size_t alignment, size_t n) SMP_MALLOC_ATTR SMP_ALLOC_ALIGN(1) SMP_ALLOC_SIZE(2);

/* POSIX: alignment must be a power of two and a multiple of sizeof(void *),
 * else EINVAL is returned and *out is not written.  ENOMEM when out of
 * memory (*out not written).  0 on success. */
int smp_posix_memalign(void **out, size_t alignment, size_t n);

/* Page-aligned block of n bytes (valloc), of n rounded up to a whole page
 * (pvalloc). */
void *smp_valloc(size_t n) SMP_MALLOC_ATTR SMP_ALLOC_SIZE(1);
void *smp_pvalloc(size_t n) SMP_MALLOC_ATTR;

/* The number of bytes usable in the block at p (>= the size requested),
 * stable until p is freed or resized; 0 for NULL. */
size_t smp_usable_size(const void *p);

/* ---- The Zig-style sized interface ----------------------------------- */
/* The caller keeps each block's length and alignment and passes them back.
 * alignment must be a power of two (0 is read as 1).  Blocks from this
 * interface are ordinary smpalloc blocks: smp_free and smp_usable_size work
 * on them too. */

/* A block of len bytes aligned to alignment; NULL (ENOMEM or EINVAL) if it
 * cannot be served.  len 0 gives a unique pointer, like smp_malloc(0).
 * (Not marked alloc_align: alignment 0 is valid here and means 1.) */
void *smp_alloc(size_t len, size_t alignment) SMP_MALLOC_ATTR SMP_ALLOC_SIZE(1);

/* Try to change the block's length to new_len without moving it.  Returns
 * true if the block at p is now at least new_len bytes long (contents
 * kept), false if it would have to move (the block is then unchanged). */
bool smp_resize(void *p, size_t len, size_t alignment, size_t new_len);

/* Change the block's length to new_len, moving it if that is cheap (large
 * blocks move by remapping pages, without a copy).  Returns the new address,
 * or NULL if the allocator refuses (the block is then unchanged and the
 * caller allocates, copies and frees itself).  new_len must not be 0. */
void *smp_remap(void *p, size_t len, size_t alignment, size_t new_len) SMP_NODISCARD;

/* Free a block, given the length and alignment it was allocated (or last
 * resized or remapped) with. */
void smp_dealloc(void *p, size_t len, size_t alignment);

/* ---- Memory return, statistics ----------------------------------------- */

/* Return every wholly free slab and cached mapping to the kernel now.
 * Returns the number of bytes returned.  (malloc_trim(pad) does the same
 * when smpalloc serves malloc, and returns 1 if anything was returned.) */
size_t smp_collect(void);

/* A snapshot of the allocator's counters.  Counts are process-wide and
 * approximate while other threads allocate.  SMP_STATS_NCLASS is the
 * number of size classes of this version (73 until the classes above
 * 4 KiB were fitted to the slab, then 63 until blocks of 21-32 KiB got
 * three classes): the struct's size follows it, so a program built with
 * another version's header must be rebuilt. */
#define SMP_STATS_NCLASS 65
typedef struct {
  size_t bytes_in_use;      /* bytes in blocks handed out (block sizes) */
  size_t bytes_mapped;      /* bytes taken from the kernel: chunks (carved from
                               reservations, counted as they are carved),
                               blocks mapped alone, metadata */
  size_t bytes_metadata;    /* ... of which metadata: the page map, descriptors,
                               bitmaps, thread caches (guarded, never unmapped) */
  size_t bytes_resident;    /* mapped minus returned: what smpalloc may hold in RAM */
  size_t bytes_returned;    /* total bytes given back to the kernel so far */
  size_t return_calls;      /* ... in this many system calls (munmap, madvise) */
  size_t slabs;             /* slabs in use by a size class */
  size_t slabs_free;        /* slabs held empty for reuse */
  size_t large_blocks;      /* blocks mapped alone */
  size_t large_bytes;       /* their total length */
  size_t slots;             /* slots in use */
  size_t lock_contended;    /* slot try-locks that found the slot busy */
  size_t lock_waits;        /* times a thread slept waiting for a slot */
  struct {
    size_t size;            /* block size of the class */
    size_t in_use;          /* blocks of the class handed out */
    size_t slabs;           /* slabs holding the class */
  } classes[SMP_STATS_NCLASS];
} smp_stats_t;

/* Fill *out with a snapshot.  Returns 0 on success. */
int smp_stats_get(smp_stats_t *out);

/* Print the statistics, human-readable, to the file descriptor fd. */
void smp_stats_print(int fd);

/* Write the heap profile of the blocks live now (sampled: SMPALLOC_PROF_SAMPLE)
 * to path, in the text format google-pprof reads; path NULL: PREFIX.PID.N.heap
 * (PREFIX from SMPALLOC_PROF_DUMP, else "smpalloc").  0, or -1 if the file
 * cannot be written.  Allocates nothing. */
int smp_prof_dump(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* SMPALLOC_H */
