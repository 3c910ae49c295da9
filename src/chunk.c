/*
 * chunk.c - chunks, descriptors, the pool of free granules, metadata memory
 * (see chunk.h).
 *
 * Lock order: a slot lock, then pool_lock; grow_lock (held while a chunk is
 * mapped: a system call under it, but it guards nothing else) before
 * pool_lock and meta_lock; meta_lock is taken alone otherwise.
 */
#include "chunk.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"

/* ---- metadata ------------------------------------------------------------- */

static lock_t meta_lock;
static uintptr_t meta_next, meta_end;
static size_t meta_size; /* of the last region mapped (SMP_META_REGION) */

void *chunk_meta_alloc(size_t size, size_t align) {
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

/* ---- the pool ----------------------------------------------------------- */

static lock_t pool_lock;
static lock_t grow_lock; /* taken alone or before pool_lock: one chunk_grow at a time */

/* Two chunks are carved at a time: a sparse one (CARVE_SPARSE), whose
 * pages are faulted in as blocks are first taken (slot.c), and a dense one
 * (CARVE_DENSE), advised for transparent huge pages, so that its granules
 * are faulted in 2 MiB at a time (one fault instead of 512; on a virtual
 * machine a fault can cost 1-10 us).  Only the slabs of a class past the mark
 * (SMP_HUGE_AFTER: it holds 4 MiB already, slot.c), and every slab and run
 * once the heap holds SMP_HUGE_HEAP granules (slot.c, large.c), are dense,
 * so a huge page is filled by memory about to be used, and a light user
 * never pays one; where a page's first touch is dear (chunk_dear, timed:
 * config.h, SMP_DEAR_TOUCH_NS), the marks are lower, and where a huge
 * page's is dearer than its 4 KiB pages' (chunk_huge_pays, timed on the
 * first dense chunks: config.h, SMP_HUGE_SAMPLES), no chunk is dense any
 * more (the rest of the one being carved joins the pool: dense_demote).
 * A dense chunk is carved up before the next one is mapped; what a run
 * cannot use of its end joins the pool. */
enum { CARVE_SPARSE, CARVE_DENSE };
typedef struct {
  uintptr_t next, end; /* the uncarved part of the chunk (concealed) */
  chunk_t *chunk;      /* the chunk being carved */
  chunk_t *spare;      /* a whole chunk to carve next, or NULL: one mapped
                          while another thread grew the cursor (chunk_grow) */
} carve_t;
static carve_t carves[2];
static chunk_t *chunks; /* every chunk, newest first */

/* Single free granules: dirty ones newest first (purging takes the oldest
 * first), and clean ones.  Free runs by length, newest first. */
static slab_t *dirty_head, *dirty_tail, *clean_head;
/* Free runs, by length (up to a whole chunk: neighbours merge), newest
 * first, doubly linked through next and prev; a free run's last granule
 * points back at its head (prev), so that a run freed after it can merge. */
#define RUN_LISTS (SMP_CHUNK_SLABS + 1)
static slab_t *run_dirty[RUN_LISTS], *run_clean[RUN_LISTS];
_Atomic size_t chunk_n_dirty, chunk_n_run_dirty; /* granules (chunk.h) */
static _Atomic uint32_t dirty_oldest;       /* stamp of dirty_tail, when any */
_Atomic size_t chunk_n_active;               /* granules in use (chunk.h) */

static void add(_Atomic size_t *c, size_t k) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + k,
                        memory_order_relaxed);
}
static void sub(_Atomic size_t *c, size_t k) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) - k,
                        memory_order_relaxed);
}

uint32_t chunk_dirty_oldest(void) { return atomic_load_explicit(&dirty_oldest, memory_order_relaxed); }

static void dirty_unlink(slab_t *g) {
  if (g->prev) g->prev->next = g->next; else dirty_head = g->next;
  if (g->next) g->next->prev = g->prev; else dirty_tail = g->prev;
  sub(&chunk_n_dirty, 1);
  if (dirty_tail) atomic_store_explicit(&dirty_oldest, dirty_tail->stamp, memory_order_relaxed);
}

static void clean_push(slab_t *g);

/* Put the single granule g on the dirty list, newest first (pool lock). */
static void dirty_push(slab_t *g, uint32_t now) {
  chunk_set_state(g, G_DIRTY);
  g->stamp = now;
  g->prev = NULL;
  g->next = dirty_head;
  if (dirty_head) dirty_head->prev = g; else dirty_tail = g;
  dirty_head = g;
  add(&chunk_n_dirty, 1);
  atomic_store_explicit(&dirty_oldest, dirty_tail->stamp, memory_order_relaxed);
}

/* Put a free run of k >= 2 granules starting at g on its list (pool lock). */
static void run_push(slab_t *g, unsigned k, bool dirty, uint32_t stamp) {
  __atomic_store_n(&g->cls, (uint16_t)k, __ATOMIC_RELAXED); /* read racily: slot.c, class_measure */
  g->stamp = stamp;
  for (unsigned i = 1; i < k; i++) chunk_set_state(&g[i], RUN_TAIL);
  g[k - 1].prev = g;
  chunk_set_state(g, dirty ? RUN_DIRTY : RUN_CLEAN);
  slab_t **head = dirty ? &run_dirty[k] : &run_clean[k];
  g->prev = NULL;
  g->next = *head;
  if (*head) (*head)->prev = g;
  *head = g;
  if (dirty) add(&chunk_n_run_dirty, k);
}

/* Take the free run at g off its list (pool lock). */
static void run_unlink(slab_t *g) {
  bool dirty = chunk_state(g) == RUN_DIRTY;
  unsigned k = g->cls;
  if (g->prev) g->prev->next = g->next;
  else if (dirty) run_dirty[k] = g->next;
  else run_clean[k] = g->next;
  if (g->next) g->next->prev = g->prev;
  if (dirty) sub(&chunk_n_run_dirty, k);
}

/* Put the k free granules at g back as a single or a run (pool lock). */
static void free_push(slab_t *g, unsigned k, bool dirty, uint32_t stamp) {
  if (k >= 2) run_push(g, k, dirty, stamp);
  else if (dirty) dirty_push(g, stamp);
  else clean_push(g);
}

static void clean_push(slab_t *g) {
  chunk_set_state(g, G_CLEAN);
  g->next = clean_head;
  clean_head = g;
}

/* A free run of at least k granules, dirty or clean, the shortest that
 * fits; the rest goes back as a shorter run (or a single).  Pool lock. */
static slab_t *run_take(unsigned k, bool dirty, bool *zero) {
  slab_t **lists = dirty ? run_dirty : run_clean;
  for (unsigned j = k < 2 ? 2 : k; j < RUN_LISTS; j++) {
    slab_t *g = lists[j];
    if (g == NULL) continue;
    run_unlink(g);
    if (j > k) free_push(&g[k], j - k, dirty, g->stamp);
    *zero = !dirty;
    return g;
  }
  return NULL;
}

/* k >= 2 dirty singles side by side in one chunk, taken off the dirty
 * list as a run, or NULL (pool lock).  Freed slabs and one-granule runs
 * stay singles (slabs take them first), so a heap whose large blocks grow
 * from one granule to two or more would otherwise fault in fresh granules
 * while resident free ones wait beside each other.  The newest
 * SMP_DIRTY_SCAN singles are looked at, each as a member of a group:
 * the walk from it goes back to the group's first granule, then forward. */
static slab_t *dirty_group(unsigned k) {
  unsigned seen = 0;
  for (slab_t *g = dirty_head; g != NULL && seen < SMP_DIRTY_SCAN; g = g->next, seen++) {
    slab_t *desc = g->chunk->desc, *first = g, *end;
    while (first > desc && g - first < (ptrdiff_t)k - 1 && chunk_state(first - 1) == G_DIRTY) first--;
    if (first + k > desc + SMP_CHUNK_SLABS) continue;
    end = g + 1;
    while (end < first + k && chunk_state(end) == G_DIRTY) end++;
    if (end < first + k) continue;
    for (slab_t *x = first; x < end; x++) dirty_unlink(x);
    return first;
  }
  return NULL;
}

/* Bytes of cursor c's chunk not carved yet (pool lock). */
static uintptr_t carve_room(const carve_t *c) { return track_reveal(c->end) - track_reveal(c->next); }

static void chunk_install(carve_t *c, chunk_t *cm);

/* Carve k granules from cursor c's chunk, or its spare, or NULL (pool
 * lock). */
static slab_t *carve(carve_t *c, unsigned k) {
  if (carve_room(c) < (uintptr_t)k * SMP_SLAB_SIZE) {
    chunk_t *spare = c->spare;
    if (spare == NULL) return NULL;
    c->spare = NULL;
    chunk_install(c, spare);
  }
  uintptr_t next = track_reveal(c->next);
  slab_t *g = &c->chunk->desc[(next - (track_reveal(c->end) - SMP_CHUNK_SIZE)) / SMP_SLAB_SIZE];
  c->next = track_conceal(next + (uintptr_t)k * SMP_SLAB_SIZE);
  return g;
}

bool chunk_dear(void) {
  unsigned ns = options.fault_ns ? options.fault_ns : os_touch_ns();
  return ns >= SMP_DEAR_TOUCH_NS;
}

bool chunk_huge_pays(void) {
  if (options.hugepages == 2) return true;
  unsigned huge = options.huge_fault_ns ? options.huge_fault_ns : os_huge_touch_ns(NULL);
  unsigned small = options.fault_ns ? options.fault_ns : os_touch_ns();
  return huge == 0 || small == 0 || huge <= small;
}

/* Is there a dense chunk to carve from, or could there be one? */
static bool dense_usable(void) { return options.hugepages && os_huge_size() != 0 && chunk_huge_pays(); }

slab_t *chunk_take(unsigned k, bool dense, bool *zero) {
  slab_t *g = NULL;
  lock_take(&pool_lock);
  if (k == 1) {
    /* Resident first (a dirty single, then a granule split off a dirty
     * run: no page faults); for a dense slab, the dense chunk (or NULL, to
     * map one); then clean, fresh, and last a granule of a clean run
     * (longer runs are kept for large blocks). */
    if ((g = dirty_head) != NULL) {
      dirty_unlink(g);
      *zero = false;
    } else if ((g = run_take(1, true, zero)) != NULL) {
    } else if (dense && dense_usable()) {
      if ((g = carve(&carves[CARVE_DENSE], 1)) != NULL) *zero = true;
    } else if ((g = clean_head) != NULL) {
      clean_head = g->next;
      *zero = true;
    } else if ((g = carve(&carves[CARVE_SPARSE], 1)) != NULL) {
      *zero = true;
    } else {
      g = run_take(1, false, zero);
    }
  } else if ((g = run_take(k, true, zero)) != NULL) {
  } else if ((g = dirty_group(k)) != NULL) {
    *zero = false;
  } else if ((g = run_take(k, false, zero)) == NULL &&
             (g = carve(&carves[dense && dense_usable() ? CARVE_DENSE : CARVE_SPARSE], k)) != NULL) {
    *zero = true;
  }
  if (g != NULL) {
    for (unsigned i = 1; i < k; i++) {
      chunk_set_state(&g[i], RUN_TAIL);
      g[i].prev = g;
    }
    chunk_set_state(g, G_FRESH);
    g->next = g->prev = NULL;
    add(&chunk_n_active, k);
  }
  lock_drop(&pool_lock);
  return g;
}

void chunk_put(slab_t *g, unsigned k) {
  uint32_t now = os_now_ms();
  lock_take(&pool_lock);
  sub(&chunk_n_active, k);
  if (k >= 2) {
    /* A run merges with the free dirty runs right before and after it in
     * its chunk, so that large blocks freed side by side serve a larger
     * one later instead of being purged unused.  Dirty singles are left
     * alone: they are what new slabs take first (absorbing them made
     * mstress's peak RSS 5 % larger). */
    chunk_t *cm = g->chunk;
    unsigned i = (unsigned)(g - cm->desc);
    if (i + k < SMP_CHUNK_SLABS) {
      slab_t *r = g + k;
      if (chunk_state(r) == RUN_DIRTY) {
        run_unlink(r);
        k += r->cls;
      }
    }
    if (i > 0) {
      /* A tail's prev (its head) is the pool lock's; a slab's is its
       * slot's, so it is read only once l is known to be a tail. */
      slab_t *l = g - 1, *h;
      if (chunk_state(l) == RUN_TAIL && (h = l->prev) != NULL && h >= cm->desc && h < l &&
                 chunk_state(h) == RUN_DIRTY && h + h->cls == g) {
        run_unlink(h);
        k += h->cls;
        g = h;
      }
    }
  }
  free_push(g, k, true, now);
  lock_drop(&pool_lock);
}

bool chunk_extend(slab_t *g, unsigned k, unsigned want) {
  chunk_t *cm = g->chunk;
  unsigned i = (unsigned)(g - cm->desc);
  if (want <= k || i + want > SMP_CHUNK_SLABS) return false;
  lock_take(&pool_lock);
  /* First see whether the granules after the run are free (dirty singles,
   * free runs, or the uncarved space of a chunk being carved), then take
   * them: nothing changes unless all of them are there. */
  unsigned have = k;
  carve_t *c = NULL;
  while (have < want) {
    slab_t *r = g + have;
    unsigned s = chunk_state(r);
    if (s == G_DIRTY) {
      have += 1;
    } else if (s == RUN_DIRTY || s == RUN_CLEAN) {
      have += r->cls;
    } else if (s == G_FRESH) {
      for (unsigned j = 0; j < 2 && c == NULL; j++)
        if (carves[j].chunk == cm && track_reveal(carves[j].next) == chunk_base(r)) c = &carves[j];
      if (c == NULL) break;
      have += (unsigned)(carve_room(c) / SMP_SLAB_SIZE);
      break; /* the rest of the chunk is uncarved */
    } else {
      break;
    }
  }
  bool ok = have >= want;
  for (unsigned at = k; ok && at < want;) {
    slab_t *r = g + at;
    unsigned s = chunk_state(r), n = 1;
    if (s == G_DIRTY) {
      dirty_unlink(r);
    } else if (s == RUN_DIRTY || s == RUN_CLEAN) {
      n = r->cls;
      run_unlink(r);
      if (at + n > want) free_push(r + (want - at), at + n - want, s == RUN_DIRTY, r->stamp);
    } else { /* the carve cursor */
      n = want - at;
      carve(c, n);
    }
    at += n;
  }
  if (ok) {
    for (unsigned j = k; j < want; j++) {
      chunk_set_state(&g[j], RUN_TAIL);
      g[j].prev = g;
    }
    add(&chunk_n_active, want - k);
  }
  lock_drop(&pool_lock);
  return ok;
}

/* ---- growing ------------------------------------------------------------ */

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
 * lock held, no other. */
typedef struct {
  uintptr_t next, end; /* what is left to carve */
  size_t size;         /* of the last reservation, 0 before the first */
  bool huge;           /* the last reservation is advised for huge pages */
  bool off;            /* reservations refused: chunks are mapped alone */
} region_t;
static region_t regions[2]; /* CARVE_SPARSE, CARVE_DENSE */

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

static void *region_take(bool dense, bool *huge) {
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

size_t chunk_unreserve(void) {
  size_t n = 0;
  lock_take(&grow_lock);
  for (int k = 0; k < 2; k++) {
    region_t *r = &regions[k];
    if (r->next < r->end) os_unreserve((void *)r->next, r->end - r->next);
    n += r->end - r->next;
    r->next = r->end;
    r->off = true;
  }
  lock_drop(&grow_lock);
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
static void *chunk_map_alone(bool dense, bool *huge) {
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

/* A chunk and its metadata (the grow lock held, no other): dense, one
 * whose granules fault in as huge pages where the kernel gives them. */
static chunk_t *chunk_map(bool dense) {
  dense = dense && os_huge_size() != 0;
  bool huge = false;
  void *c = region_take(dense, &huge);
  if (c == NULL) c = chunk_map_alone(dense, &huge);
  if (c == NULL) return NULL;
  chunk_t *cm = chunk_meta_alloc(sizeof *cm, os_page_size());
  if (cm == NULL || !pagemap_reserve((uintptr_t)c, SMP_CHUNK_SIZE)) {
    os_unmap(c, SMP_CHUNK_SIZE);
    return NULL; /* cm is metadata: not reusable, lost (out of memory anyway) */
  }
  cm->huge = huge;
  track_noaccess(c, SMP_CHUNK_SIZE); /* valgrind: no block is handed out yet */
  for (unsigned i = 0; i < SMP_CHUNK_SLABS; i++) {
    cm->desc[i].base = track_conceal((uintptr_t)c + i * SMP_SLAB_SIZE);
    cm->desc[i].chunk = cm;
  }
  return cm;
}

/* Make cm the chunk cursor c carves from (pool lock).  What is left of its
 * previous chunk (less than a request of several granules took) joins the
 * pool as clean singles. */
static void chunk_install(carve_t *c, chunk_t *cm) {
  slab_t *g;
  while ((g = carve(c, 1)) != NULL) clean_push(g);
  cm->next = chunks;
  chunks = cm;
  c->chunk = cm;
  c->next = track_conceal(chunk_base(&cm->desc[0]));
  c->end = track_conceal(chunk_base(&cm->desc[0]) + SMP_CHUNK_SIZE);
}

/* Huge pages turned out dearer than small ones (chunk_huge_pays) while a
 * dense chunk was being carved: no dense slab or run will be carved any
 * more, so what is left of that chunk, and its spare, go to the pool as
 * clean free runs, advised for small pages, instead of lying idle (the
 * spare's first huge page is resident: it was timed).  The grow lock
 * held, no other.  Returns the longest run made, in granules. */
static unsigned dense_demote(void) {
  carve_t *c = &carves[CARVE_DENSE];
  lock_take(&pool_lock);
  uintptr_t from = track_reveal(c->next), to = track_reveal(c->end);
  chunk_t *cm = c->chunk, *spare = c->spare;
  c->next = c->end; /* out of the cursor: no other thread carves it now */
  c->spare = NULL;
  lock_drop(&pool_lock);
  unsigned k = (unsigned)((to - from) / SMP_SLAB_SIZE);
  if (k == 0 && spare == NULL) return 0;
  if (k != 0) os_smallpages((void *)from, to - from);
  if (spare != NULL) os_smallpages((void *)chunk_base(&spare->desc[0]), SMP_CHUNK_SIZE);
  lock_take(&pool_lock);
  if (k != 0) free_push(&cm->desc[SMP_CHUNK_SLABS - k], k, false, 0);
  if (spare != NULL) {
    spare->next = chunks;
    chunks = spare;
    free_push(&spare->desc[0], SMP_CHUNK_SLABS, false, 0);
    k = SMP_CHUNK_SLABS;
  }
  lock_drop(&pool_lock);
  return k;
}

bool chunk_grow(unsigned k, bool dense) {
  dense = dense && dense_usable();
  carve_t *c = &carves[dense ? CARVE_DENSE : CARVE_SPARSE];
  /* One thread maps at a time: threads that ran out together would each
   * map a chunk, and all but the last would be left to the pool. */
  lock_take(&grow_lock);
  bool demote = !dense && options.hugepages == 1 && os_huge_size() != 0 && !chunk_huge_pays();
  unsigned demoted = demote ? dense_demote() : 0;
  lock_take(&pool_lock);
  bool room = carve_room(c) >= (uintptr_t)k * SMP_SLAB_SIZE || c->spare != NULL || demoted >= k ||
              (k == 1 && (dirty_head != NULL || (!dense && clean_head != NULL)));
  lock_drop(&pool_lock);
  chunk_t *cm = room ? NULL : chunk_map(dense); /* room: another thread grew it meanwhile */
  lock_drop(&grow_lock);
  if (cm != NULL) {
    /* The first dense chunks' first huge page, faulted in now and timed
     * (chunk_huge_pays; config.h, SMP_HUGE_TIMED): the program's first
     * write to the chunk would fault it in whole anyway, and a dense chunk
     * is carved up before the next (but a chunk that turns out to be the
     * spare holds its page until it is carved: two threads that run out
     * at once hold two huge pages; docs/design.md, "The last gaps on 2
     * CPUs").  With no lock held: no other thread
     * can reach the chunk yet, so the timing is the fault's alone, and a
     * thread that runs out meanwhile maps a chunk of its own instead of
     * waiting up to a huge page's first touch (config.h). */
    if (cm->huge && options.hugepages == 1) os_populate_huge((void *)chunk_base(&cm->desc[0]), os_huge_size());
    lock_take(&pool_lock);
    if (carve_room(c) != 0 && c->spare == NULL)
      c->spare = cm; /* another thread grew the cursor meanwhile: ours is next */
    else
      chunk_install(c, cm);
    lock_drop(&pool_lock);
  }
  return room || cm != NULL;
}

/* ---- returning pages ------------------------------------------------------ */

/* A run of neighbouring granules being purged: one system call. */
typedef struct {
  slab_t *first;
  unsigned n;
} range_t;

static bool pooled(const slab_t *g) {
  unsigned s = chunk_state(g);
  return s == G_CLEAN || s == G_PURGING || s == G_DIRTY;
}

/* The bitmap pages of granules [first, first + n) whose granules are all
 * pooled with their pages gone (clean or being purged) go back too: the
 * bitmaps of a purged heap cost no memory.  No lock held: a racing reuse
 * rewrites its bitmap after taking the granule, and a page given back
 * reads as zero, so at worst a page stays. */
static size_t bitmap_purge(slab_t *first, unsigned n) {
  chunk_t *cm = first->chunk;
  size_t page = os_page_size(), per = page / sizeof cm->bitmap[0], returned = 0;
  if (per == 0) return 0;
  unsigned i0 = (unsigned)(first - cm->desc);
  for (unsigned g = i0 / per * per; g < i0 + n; g += per) {
    bool all = true;
    for (unsigned j = g; j < g + per && j < SMP_CHUNK_SLABS && all; j++) {
      unsigned s = chunk_state(&cm->desc[j]);
      all = s == G_CLEAN || s == G_PURGING || s == G_GONE;
    }
    if (all) {
      os_decommit(cm->bitmap[g], page);
      returned += page;
    }
  }
  return returned;
}

/* Pick dirty singles to purge, chunk by chunk in address order, so that
 * neighbours merge into one range (one madvise, one TLB shootdown, however
 * the granules were freed), until `floor` dirty singles are left; with
 * aged, only those that waited delay ms.  Pool lock held; returns the
 * number of ranges filled. */
static unsigned purge_pick(size_t floor, bool aged, uint32_t now, uint32_t delay, range_t *r) {
  size_t count = chunk_dirty_singles();
  unsigned nr = 0;
  for (chunk_t *cm = chunks; cm != NULL && count > floor; cm = cm->next) {
    for (unsigned i = 0; i < SMP_CHUNK_SLABS && count > floor; i++) {
      slab_t *g = &cm->desc[i];
      if (chunk_state(g) != G_DIRTY) continue;
      if (aged && (uint32_t)(now - g->stamp) < delay) continue;
      if (nr > 0 && r[nr - 1].first + r[nr - 1].n == g) {
        r[nr - 1].n++;
      } else {
        if (nr == SMP_PURGE_RANGES) return nr;
        r[nr].first = g;
        r[nr].n = 1;
        nr++;
      }
      dirty_unlink(g);
      chunk_set_state(g, G_PURGING);
      count--;
    }
  }
  return nr;
}

size_t chunk_purge(size_t floor, bool aged, uint32_t now, uint32_t delay) {
  range_t r[SMP_PURGE_RANGES];
  size_t returned = 0;
  for (;;) {
    lock_take(&pool_lock);
    unsigned nr = purge_pick(floor, aged, now, delay, r);
    lock_drop(&pool_lock);
    if (nr == 0) break;
    for (unsigned i = 0; i < nr; i++) {
      os_decommit((void *)chunk_base(r[i].first), (size_t)r[i].n * SMP_SLAB_SIZE);
      returned += (size_t)r[i].n * SMP_SLAB_SIZE;
    }
    lock_take(&pool_lock);
    for (unsigned i = 0; i < nr; i++)
      for (unsigned j = 0; j < r[i].n; j++) clean_push(r[i].first + j);
    lock_drop(&pool_lock);
    for (unsigned i = 0; i < nr; i++) returned += bitmap_purge(r[i].first, r[i].n);
    if (nr < SMP_PURGE_RANGES) break;
  }
  return returned;
}

size_t chunk_purge_runs(bool all, uint32_t now, uint32_t delay) {
  if (chunk_dirty_runs() == 0) return 0;
  slab_t *batch = NULL;
  size_t returned = 0;
  lock_take(&pool_lock);
  for (unsigned k = 2; k < RUN_LISTS; k++)
    for (slab_t *g = run_dirty[k], *next; g != NULL; g = next) {
      next = g->next;
      if (all || (uint32_t)(now - g->stamp) >= delay) {
        run_unlink(g);
        chunk_set_state(g, RUN_PURGING);
        g->next = batch;
        batch = g;
      }
    }
  lock_drop(&pool_lock);
  for (slab_t *g = batch; g != NULL; g = g->next) {
    os_decommit((void *)chunk_base(g), (size_t)g->cls << SMP_SLAB_SHIFT);
    returned += (size_t)g->cls << SMP_SLAB_SHIFT;
  }
  lock_take(&pool_lock);
  while (batch != NULL) {
    slab_t *g = batch;
    batch = g->next;
    run_push(g, g->cls, false, g->stamp);
  }
  lock_drop(&pool_lock);
  return returned;
}

/* ---- giving address space back -------------------------------------------- */

size_t chunk_unmap_free(void) {
  uintptr_t gone[16];
  unsigned n = 0;
  lock_take(&pool_lock);
  for (chunk_t *cm = chunks; cm != NULL && n < 16; cm = cm->next) {
    if (cm == carves[CARVE_SPARSE].chunk || cm == carves[CARVE_DENSE].chunk) continue; /* being carved */
    bool all = true;
    for (unsigned i = 0; i < SMP_CHUNK_SLABS && all; i++) all = pooled(&cm->desc[i]);
    if (!all) continue;
    for (unsigned i = 0; i < SMP_CHUNK_SLABS; i++) {
      if (chunk_state(&cm->desc[i]) == G_DIRTY) dirty_unlink(&cm->desc[i]);
      chunk_set_state(&cm->desc[i], G_GONE);
    }
    gone[n++] = chunk_base(&cm->desc[0]);
  }
  if (n > 0) { /* drop the gone granules from the clean list */
    slab_t **link = &clean_head;
    while (*link != NULL) {
      if (chunk_state(*link) == G_GONE) *link = (*link)->next;
      else link = &(*link)->next;
    }
  }
  lock_drop(&pool_lock);
  /* The metadata stays (G_GONE, never reused): 72 KiB of address space per
   * chunk, its pages mostly returned with the bitmaps. */
  for (unsigned i = 0; i < n; i++) os_unmap((void *)gone[i], SMP_CHUNK_SIZE);
  return (size_t)n * SMP_CHUNK_SIZE;
}

/* ---- walking, fork --------------------------------------------------------- */

void chunk_walk(void (*fn)(const slab_t *g, void *arg), void *arg) {
  lock_take(&pool_lock);
  for (chunk_t *cm = chunks; cm != NULL; cm = cm->next)
    for (unsigned i = 0; i < SMP_CHUNK_SLABS; i++) fn(&cm->desc[i], arg);
  lock_drop(&pool_lock);
}

void chunk_pool_counts(size_t *dirty, size_t *clean) {
  lock_take(&pool_lock);
  size_t c = 0;
  for (slab_t *g = clean_head; g != NULL; g = g->next) c++;
  *dirty = chunk_dirty_singles();
  *clean = c;
  lock_drop(&pool_lock);
}

void chunk_fork_prepare(void) {
  lock_take(&grow_lock);
  lock_take(&pool_lock);
  lock_take(&meta_lock);
}
void chunk_fork_parent(void) {
  lock_drop(&meta_lock);
  lock_drop(&pool_lock);
  lock_drop(&grow_lock);
}
void chunk_fork_child(void) {
  lock_reset(&meta_lock);
  lock_reset(&pool_lock);
  lock_reset(&grow_lock);
}
