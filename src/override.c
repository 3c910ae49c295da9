/*
 * override.c - the libc malloc family, served by smpalloc.
 *
 * Linked into libsmpalloc.so (for LD_PRELOAD or -lsmpalloc) and
 * libsmpalloc.a, these definitions take the libc names for the whole
 * process: the dynamic linker binds every reference to malloc & co. -
 * libc's own included - to the first definition it finds, and a preloaded
 * library or the executable comes before libc.  Each is a tail call into
 * the smp_* function (a single jump, bound inside the library at link time).
 */
#include <stddef.h>

#include "internal.h"
#include "smpalloc.h"

#define OVERRIDE SMP_API

OVERRIDE void *malloc(size_t n) { return smp_malloc(n); }
OVERRIDE void free(void *p) { smp_free(p); }
OVERRIDE void *calloc(size_t c, size_t n) { return smp_calloc(c, n); }
OVERRIDE void *realloc(void *p, size_t n) { return smp_realloc(p, n); }
OVERRIDE void *reallocarray(void *p, size_t c, size_t n) { return smp_reallocarray(p, c, n); }
OVERRIDE int posix_memalign(void **out, size_t a, size_t n) { return smp_posix_memalign(out, a, n); }
OVERRIDE void *aligned_alloc(size_t a, size_t n) { return smp_aligned_alloc(a, n); }
OVERRIDE void *memalign(size_t a, size_t n) { return smp_memalign(a, n); }
OVERRIDE void *valloc(size_t n) { return smp_valloc(n); }
OVERRIDE void *pvalloc(size_t n) { return smp_pvalloc(n); }
OVERRIDE size_t malloc_usable_size(void *p) { return smp_usable_size(p); }
OVERRIDE void free_sized(void *p, size_t n) { smp_free_sized(p, n); }
OVERRIDE void free_aligned_sized(void *p, size_t a, size_t n) { smp_free_aligned_sized(p, a, n); }
