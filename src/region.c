/*
 * region.c - the address space that chunks and metadata come from (see
 * region.h): metadata regions, mapped guarded and never given back, and the
 * reservations chunks are carved from.
 *
 * meta_lock is taken alone.  The reservations are chunk.c's grow lock's:
 * every function of theirs is called with it held.
 */
#include "region.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "track.h"

/* ---- metadata ------------------------------------------------------------- */

static lock_t meta_lock;
static uintptr_t meta_next, meta_end;
static size_t meta_size; /* of the last region mapped (SMP_META_REGION) */

void *meta_alloc(size_t size, size_t align) {
  if (align < 64) align = 64; /* cache-line granularity: no false sharing */
  size = (size + 63) & ~(size_t)63;
  for (;;) {
    lock_take(&meta_lock);
    uintptr_t p = (meta_next + align - 1) & ~(uintptr_t)(align - 1);
    if (meta_next != 0 && p <= meta_end && meta_end - p >= size) {
      meta_next = p + size;
      lock_drop(&meta_lock);
      return (void *)p;
    }
    /* Each region twice the last, up to SMP_META_REGION_MAX: a big heap
     * maps its metadata in few calls (a chunk's descriptors take 72 KiB). */
    size_t region = meta_size == 0 ? SMP_META_REGION : meta_size < SMP_META_REGION_MAX ? 2 * meta_size : meta_size;
    lock_drop(&meta_lock);
    /* Map a new region with no lock held, then install it; if another
     * thread installed one meanwhile, ours replaces it (the rest of theirs
     * is lost: at most one region, and only in that race). */
    size_t page = os_page_size();
    if (size + align > region) region = (size + align + page - 1) & ~(page - 1);
    void *m = os_map_guarded(region);
    if (m == NULL) return NULL;
    lock_take(&meta_lock);
    meta_next = (uintptr_t)m;
    meta_end = meta_next + region;
    if (region > meta_size) meta_size = region;
    lock_drop(&meta_lock);
  }
}

void meta_fork_prepare(void) { lock_take(&meta_lock); }
void meta_fork_parent(void) { lock_drop(&meta_lock); }
void meta_fork_child(void) { lock_reset(&meta_lock); }

/* ---- reservations ----------------------------------------------------------- */

/* Chunks come from reservations (os_reserve), carved in address order:
 * one for sparse chunks, one for dense ones, advised for huge pages once,
 * whole.  So a new chunk costs no system call.  A mapping takes the
 * address space's lock for writing: it waits for every populate and every
 * page fault under that lock in progress in the process (a huge page's
 * first touch, 0.3-2.4 ms on a virtual machine whose host backs the page
 * first; the first fault in an area takes the lock), and so does every
 * thread that waits for the grow lock meanwhile.  In realloc-grow and
 * glibc-thread (two threads growing a 30-50 MB heap) a thread slept on the
 * grow lock, or in mmap waiting for the address space's lock, several
 * times a run, a CPU idle each time.  Carved from reservations, the time
 * of glibc-thread went 0.66x -> 0.54x glibc's wall and realloc-grow's
 * 0.78x -> 0.74x (docs/design.md, "Growing without mapping").  The grow
 * lock held, no other (chunk.c). */
typedef struct {
  uintptr_t next, end; /* what is left to carve */
  size_t size;         /* of the last reservation, 0 before the first */
  bool huge;           /* the last reservation is advised for huge pages */
  bool off;            /* reservations refused: chunks are mapped alone */
} region_t;
static region_t regions[2]; /* [dense] */

/* A new reservation for r (dense: advised for huge pages); false, and
 * none from then on, if the kernel refuses. */
static bool region_grow(region_t *r, bool dense) {
  /* The valgrind build under memcheck: its leak check would scan the
   * whole reservation (as pagemap.c's flat map). */
  if (r->off || track_running()) return false;
  size_t size = r->size == 0 ? SMP_REGION_MIN : r->size < SMP_REGION_MAX ? 2 * r->size : SMP_REGION_MAX;
  size_t hp = dense ? os_huge_size() : 0; /* a dense chunk starts a huge page; any, a granule */
  void *p = os_reserve(size, hp > SMP_SLAB_SIZE && hp <= SMP_CHUNK_SIZE ? hp : SMP_SLAB_SIZE);
  if (p == NULL) {
    r->off = true;
    return false;
  }
  r->huge = dense && os_hugepage(p, size);
  if (!r->huge) os_smallpages_unless_asked(p, size); /* sparse: 4 KiB pages in any mode */
  r->next = (uintptr_t)p;
  r->end = (uintptr_t)p + size;
  r->size = size;
  return true;
}

void *region_take(bool dense, bool *huge) {
  region_t *r = &regions[dense];
  /* The first reservation of the dense kind is made with the first of
   * the sparse kind, most often by the first malloc, before the program
   * starts threads: made later, its mapping would wait for the address
   * space's lock while other threads populate, as above. */
  if (!dense && regions[true].size == 0 && options.hugepages != 0 && os_huge_size() != 0)
    region_grow(&regions[true], true);
  if (r->next == r->end && !region_grow(r, dense)) return NULL;
  if (!os_use(SMP_CHUNK_SIZE)) return NULL;
  *huge = r->huge;
  r->next += SMP_CHUNK_SIZE;
  return (void *)(r->next - SMP_CHUNK_SIZE);
}

size_t region_unreserve(void) {
  size_t n = 0;
  for (int k = 0; k < 2; k++) {
    region_t *r = &regions[k];
    if (r->next < r->end) os_unreserve((void *)r->next, r->end - r->next);
    n += r->end - r->next;
    r->next = r->end;
    r->off = true;
  }
  return n;
}

/* Map a chunk alone, where no reservation is made: a dense one aligned
 * to huge pages, advised for them, and mapped apart from the last mapping.
 * Right against a dense chunk, the advice would merge the two into one
 * area, and a merge waits for every fault in progress in the area (a
 * thread faulting in a huge page there held the growing thread: in
 * glibc-thread chunk_map took 0.56-1.9 ms up to three times a run,
 * otherwise 6-77 us; mapped apart, at most 45 us).  Apart, each dense
 * chunk is an area of its own; past SMP_APART_CHUNKS of them (4 GiB) they
 * go side by side again, so that a big heap stays far from the kernel's
 * limit on areas (65,530 by default). */
void *region_map_alone(bool dense, bool *huge) {
  static unsigned apart; /* dense chunks mapped apart (grow lock) */
  size_t hp = dense ? os_huge_size() : 0;
  bool away = hp != 0 && apart < SMP_APART_CHUNKS;
  void *c = os_map(SMP_CHUNK_SIZE, hp > SMP_SLAB_SIZE && hp <= SMP_CHUNK_SIZE ? hp : SMP_SLAB_SIZE, away);
  if (c == NULL) return NULL;
  *huge = hp != 0 && os_hugepage(c, SMP_CHUNK_SIZE);
  if (!*huge) os_smallpages_unless_asked(c, SMP_CHUNK_SIZE); /* sparse: 4 KiB pages in any mode */
  apart += away;
  return c;
}
