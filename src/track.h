/*
 * track.h - what the valgrind build tells memcheck about smpalloc's blocks.
 *
 * `make VALGRIND=1` compiles the core with -DSMP_VALGRIND (into
 * build/valgrind).  The functions here then make valgrind client requests
 * (a few instructions that do nothing when the program does not run under
 * valgrind), or change how smpalloc stores addresses; in every other build
 * each is empty, or the identity, and leaves no trace in the code.
 *
 * Memcheck then sees each block as malloc'd: handed out (undefined; defined
 * for calloc's known-zero memory), resized, freed (no access), with the
 * size the caller asked for (not the class size), so a read or write past
 * the request or after the free, a read of bytes never written, a free of
 * what is not a block, and a block never freed are reported.  The rest of
 * smpalloc's chunks and mappings (free blocks, the tail of a class or of a
 * large block, granules not handed out) is no-access.  A live block's size
 * is kept by memcheck alone; track_size asks for it.
 *
 * The allocator's own accesses to blocks memcheck sees as free or too short
 * (the free key in a block's first word, checked mode's fill and
 * verification) are made between track_quiet_begin and track_quiet_end:
 * they change no state and report nothing.
 *
 * Memcheck's leak check takes any word of the process that holds a block's
 * address, smpalloc's own memory included, for a pointer to the block.  So
 * smpalloc keeps no stale copy of a block's address (track_forget: thread
 * caches, the large-block cache), and stores the addresses it must keep
 * (a granule's base, the mapping hint, the carve limits) concealed
 * (track_conceal / track_reveal).  Memcheck does scan the blocks of
 * smpalloc's chunks as it scans any mapping, so a block that only a leaked
 * block points to is "still reachable", not "indirectly lost".
 *
 * Leaf header: base.h and the valgrind headers only.
 */
#ifndef SMP_TRACK_H
#define SMP_TRACK_H

#include "base.h"

#ifdef SMP_VALGRIND
#ifdef __has_include
#if !__has_include(<valgrind/memcheck.h>)
#error "the valgrind build (make VALGRIND=1) needs valgrind's headers: valgrind/memcheck.h"
#endif
#endif
#include <string.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

/* Under valgrind (any tool): large blocks then move by copying, never by
 * mremap (memcheck keeps a block's record where it was). */
static inline bool track_running(void) { return RUNNING_ON_VALGRIND != 0; }

/* p (NULL: nothing) is handed out for n bytes; zeroed: all known zero. */
static inline void *track_alloc(void *p, size_t n, bool zeroed) {
  VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, zeroed);
  return p;
}
/* p (NULL: nothing) is freed; memcheck reports it if it is not a block. */
static inline void track_free(const void *p) {
  if (p != NULL) VALGRIND_FREELIKE_BLOCK(p, 0);
}
/* The block p of old bytes now has n, in place (n == 0: left as it is). */
static inline void *track_resize(void *p, size_t old, size_t n) {
  if (n != 0) VALGRIND_RESIZEINPLACE_BLOCK(p, old, n, 0);
  return p;
}
static inline void track_noaccess(const void *p, size_t n) { VALGRIND_MAKE_MEM_NOACCESS(p, n); }

/* The size of the live block p as memcheck knows it, at most bound (which
 * must not pass the block's usable size): the length of its addressable
 * start, found by bisection, as everything past a block's request is kept
 * no-access.  bound when not under memcheck. */
static inline size_t track_size(const void *p, size_t bound) {
  uintptr_t b = (uintptr_t)p;
  char v;
  if (bound == 0 || VALGRIND_GET_VBITS(b, &v, 1) == 0) return bound; /* 0: not memcheck */
  size_t lo = 0, hi = bound; /* [b, b + lo) addressable, b + hi not (or hi == bound) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (VALGRIND_GET_VBITS(b + mid, &v, 1) == 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Around the allocator's own accesses to blocks (see above). */
static inline void track_quiet_begin(void) { VALGRIND_DISABLE_ERROR_REPORTING; }
static inline void track_quiet_end(void) { VALGRIND_ENABLE_ERROR_REPORTING; }

/* n bytes at p held block addresses that are no longer meant. */
static inline void track_forget(void *p, size_t n) { memset(p, 0, n); }
/* An address stored so that it points nowhere. */
static inline uintptr_t track_conceal(uintptr_t a) { return ~a; }
static inline uintptr_t track_reveal(uintptr_t a) { return ~a; }

#else /* the default build: nothing */

static inline bool track_running(void) { return false; }
static inline void *track_alloc(void *p, size_t n, bool zeroed) { (void)n, (void)zeroed; return p; }
static inline void track_free(const void *p) { (void)p; }
static inline void *track_resize(void *p, size_t old, size_t n) { (void)old, (void)n; return p; }
static inline void track_noaccess(const void *p, size_t n) { (void)p, (void)n; }
static inline size_t track_size(const void *p, size_t bound) { (void)p; return bound; }
static inline void track_quiet_begin(void) {}
static inline void track_quiet_end(void) {}
static inline void track_forget(void *p, size_t n) { (void)p, (void)n; }
static inline uintptr_t track_conceal(uintptr_t a) { return a; }
static inline uintptr_t track_reveal(uintptr_t a) { return a; }

#endif /* SMP_VALGRIND */
#endif /* SMP_TRACK_H */
