/*
 * override.c - the libc malloc family, served by smpalloc.
 *
 * Linked into libsmpalloc.so (for LD_PRELOAD or -lsmpalloc) and
 * libsmpalloc.a, these definitions take the libc names for the whole
 * process: the dynamic linker binds every reference to malloc & co. -
 * libc's own included - to the first definition it finds, and a preloaded
 * library or the executable comes before libc.  Each is a tail call into
 * the smp_* function (a single jump, bound inside the library at link time),
 * except malloc and free, which run the inline fast paths of alloc.h.
 *
 * glibc's internal names (__libc_malloc & co.) are served too: programs and
 * libraries that call them directly (to bypass an interposed malloc, or from
 * a malloc hook of their own) get blocks smpalloc can free, and a block from
 * malloc can go to __libc_free.  mallopt and mallinfo answer, so that a
 * statically linked program that calls them does not pull in glibc's
 * malloc.o next to ours.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "chunk.h"
#include "extent.h"
#include "os.h"
#include "smpalloc.h"
#include "track.h"

#define OVERRIDE SMP_API

/* malloc and free run the fast paths themselves (alloc.h): no jump. */
OVERRIDE void *malloc(size_t n) { return alloc_any(n); }
OVERRIDE void free(void *p) { free_any(p, "free"); }
OVERRIDE void *calloc(size_t c, size_t n) { return smp_calloc(c, n); }
OVERRIDE void *realloc(void *p, size_t n) { return smp_realloc(p, n); }
OVERRIDE void *reallocarray(void *p, size_t c, size_t n) { return smp_reallocarray(p, c, n); }
OVERRIDE int posix_memalign(void **out, size_t a, size_t n) { return smp_posix_memalign(out, a, n); }
OVERRIDE void *aligned_alloc(size_t a, size_t n) { return smp_aligned_alloc(a, n); }
OVERRIDE void *memalign(size_t a, size_t n) { return smp_memalign(a, n); }
OVERRIDE void *valloc(size_t n) { return smp_valloc(n); }
OVERRIDE void *pvalloc(size_t n) { return smp_pvalloc(n); }
OVERRIDE size_t malloc_usable_size(void *p) {
  return p == NULL ? 0 : track_size(p, usable_size(p, "malloc_usable_size")); /* valgrind: the request */
}
OVERRIDE void free_sized(void *p, size_t n) { smp_free_sized(p, n); }
OVERRIDE void free_aligned_sized(void *p, size_t a, size_t n) { smp_free_aligned_sized(p, a, n); }

OVERRIDE void *__libc_malloc(size_t n) { return smp_malloc(n); }
OVERRIDE void __libc_free(void *p) { smp_free(p); }
OVERRIDE void *__libc_calloc(size_t c, size_t n) { return smp_calloc(c, n); }
OVERRIDE void *__libc_realloc(void *p, size_t n) { return smp_realloc(p, n); }
OVERRIDE void *__libc_memalign(size_t a, size_t n) { return smp_memalign(a, n); }
OVERRIDE void *__libc_valloc(size_t n) { return smp_valloc(n); }
OVERRIDE void *__libc_pvalloc(size_t n) { return smp_pvalloc(n); }

/* ---- glibc's introspection calls, so existing tooling keeps working ------ */

OVERRIDE int malloc_trim(size_t pad) {
  (void)pad;
  return smp_collect() > 0;
}

OVERRIDE void malloc_stats(void) { smp_stats_print(2); }

/* ---- mlockall ------------------------------------------------------------ */

/* mlockall locks every page of the process's mappings (MCL_CURRENT) or of
 * those made after it (MCL_FUTURE), and faults them in: the address space
 * the heap reserves to grow into (chunk.c, region_take; up to 1 GiB)
 * would become resident whole, 128 MiB at the first malloc.  So before
 * the call, what the reservations have left goes back and chunks are
 * mapped alone from then on, as glibc's heap grows (tests/mem/
 * t_mem_mlock.sh).  With MCL_ONFAULT pages are locked only as they are
 * first written: nothing to give back. */
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4 /* Linux 4.4 */
#endif
OVERRIDE int mlockall(int flags) {
  if ((flags & (MCL_CURRENT | MCL_FUTURE)) != 0 && (flags & MCL_ONFAULT) == 0 && !tcache_reentered()) {
    tcache_enter();
    chunk_unreserve();
    extent_unreserve();
    tcache_leave();
  }
  return os_mlockall(flags);
}

OVERRIDE struct mallinfo2 mallinfo2(void) {
  smp_stats_t st;
  struct mallinfo2 mi;
  memset(&mi, 0, sizeof mi);
  if (smp_stats_get(&st) != 0) return mi;
  mi.arena = st.bytes_mapped - st.large_bytes; /* slab memory */
  mi.ordblks = st.slabs_free;
  mi.hblks = st.large_blocks;
  mi.hblkhd = st.large_bytes;
  mi.uordblks = st.bytes_in_use - st.large_bytes;
  mi.fordblks = mi.arena > mi.uordblks ? mi.arena - mi.uordblks : 0;
  mi.keepcost = 0;
  return mi;
}

/* glibc's tunables do not apply: accepted (1, success) and ignored, as
 * glibc does for parameters it does not know.  smpalloc's own settings are
 * the SMPALLOC_* environment variables. */
OVERRIDE int mallopt(int param, int value) {
  (void)param;
  (void)value;
  return 1;
}

/* The old mallinfo, with int fields: the same figures as mallinfo2,
 * clamped to INT_MAX. */
static int clamp(size_t v) { return v > 0x7fffffff ? 0x7fffffff : (int)v; }
OVERRIDE struct mallinfo mallinfo(void) {
  struct mallinfo2 m2 = mallinfo2();
  struct mallinfo mi;
  memset(&mi, 0, sizeof mi);
  mi.arena = clamp(m2.arena);
  mi.ordblks = clamp(m2.ordblks);
  mi.hblks = clamp(m2.hblks);
  mi.hblkhd = clamp(m2.hblkhd);
  mi.uordblks = clamp(m2.uordblks);
  mi.fordblks = clamp(m2.fordblks);
  return mi;
}

OVERRIDE int malloc_info(int options, FILE *fp) {
  if (options != 0 || fp == NULL) {
    errno = EINVAL;
    return -1;
  }
  smp_stats_t st;
  smp_stats_get(&st);
  fprintf(fp, "<malloc version=\"1\" allocator=\"smpalloc\">\n");
  for (unsigned c = 0; c < SMP_STATS_NCLASS; c++)
    if (st.classes[c].slabs)
      fprintf(fp, "<size from=\"%zu\" to=\"%zu\" total=\"%zu\" count=\"%zu\" slabs=\"%zu\"/>\n",
              c ? st.classes[c - 1].size + 1 : 1, st.classes[c].size,
              st.classes[c].in_use * st.classes[c].size, st.classes[c].in_use,
              st.classes[c].slabs);
  fprintf(fp, "<total type=\"mmap\" count=\"%zu\" size=\"%zu\"/>\n", st.large_blocks,
          st.large_bytes);
  fprintf(fp, "<system type=\"current\" size=\"%zu\"/>\n", st.bytes_mapped);
  fprintf(fp, "<system type=\"returned\" size=\"%zu\"/>\n", st.bytes_returned);
  fprintf(fp, "<aspace type=\"total\" size=\"%zu\"/>\n", st.bytes_mapped);
  fprintf(fp, "</malloc>\n");
  return 0;
}
