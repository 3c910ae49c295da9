/*
 * chunk.c - chunks, descriptors and the pool of free granules (see
 * chunk.h); the address space they are carved from is region.c's.
 *
 * Lock order: a slot lock, then pool_lock; grow_lock (held while a chunk is
 * mapped: a system call under it, but it guards nothing else) before
 * pool_lock and region.c's meta lock.
 */
#include "chunk.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "region.h"

/* ---- the pool ----------------------------------------------------------- */

static lock_t pool_lock;
static lock_t grow_lock; /* taken alone or before pool_lock: one chunk_grow at a time */

/* Free granules are kept per chunk, as bit masks (chunk_t: free, dirty,
 * purging), so that neighbours coalesce by themselves, whatever freed them
 * and whether their pages are resident.  Each chunk serves one of two
 * pools: sparse chunks, whose pages fault in as they are first written,
 * and dense chunks, advised for transparent huge pages, faulted in 2 MiB at
 * a time (one fault instead of 512; chunk_take's dense).  A pool lists its
 * chunks by their longest free range (fit[L]: longest == L), so a request
 * of k granules takes the chunk whose longest range is the shortest that
 * fits (best fit), and in it the shortest range that fits, from its start:
 * holes are filled first, a freed block's room is reused with its pages,
 * and a whole free chunk is cut into only when nothing smaller fits. */
enum { CARVE_SPARSE, CARVE_DENSE };
typedef struct {
  chunk_t *fit[SMP_CHUNK_SLABS + 1]; /* [1 .. 64]: chunks by longest free range */
  uint64_t lists;                    /* bit L-1 set while fit[L] is not empty */
} pool_t;
static pool_t pools[2];
static chunk_t *chunks; /* every chunk, newest first; never unlinked */

_Static_assert(SMP_CHUNK_SLABS == 64, "a chunk's granules are one 64-bit mask");

_Atomic size_t chunk_n_dirty;  /* free granules with resident pages (chunk.h) */
_Atomic size_t chunk_n_active; /* granules in use (chunk.h) */
density_t chunk_density = {0, 0, 1024, 4};

/* Which ranges are looked at, and where the window falls: a Weyl sequence. */
static _Atomic uint32_t draw;

size_t chunk_resident_guess(void *p, size_t size) {
  uint32_t r = atomic_fetch_add_explicit(&draw, 0x9e3779b9u, memory_order_relaxed);
  size_t page = os_page_size(), pages = size / page, w = pages < 64 ? pages : 64;
  if (w == 0) return SIZE_MAX;
  size_t at = (size_t)(r >> 8) % (pages - w + 1);
  size_t got = os_resident((char *)p + at * page, w * page);
  return got == SIZE_MAX ? SIZE_MAX : got * pages / w;
}

void density_note(density_t *d, void *p, size_t size) {
  size_t pages = size / os_page_size();
  uint32_t r = atomic_fetch_add_explicit(&draw, 0x9e3779b9u, memory_order_relaxed);
  /* One range in four once 4096 pages were seen: a system call each. */
  if (atomic_load_explicit(&d->seen, memory_order_relaxed) >= 4096 && r % 4 != 0) return;
  size_t got = chunk_resident_guess(p, size);
  if (got == SIZE_MAX) return;
  /* A hint, updated racily: a lost sample is noise. */
  uint32_t seen = atomic_load_explicit(&d->seen, memory_order_relaxed) + (uint32_t)pages;
  uint32_t res = atomic_load_explicit(&d->res, memory_order_relaxed) + (uint32_t)got;
  if (seen > (1u << 20)) seen /= 2, res /= 2;
  atomic_store_explicit(&d->seen, seen, memory_order_relaxed);
  atomic_store_explicit(&d->res, res, memory_order_relaxed);
  uint32_t least = res > seen >> d->floor ? res : seen >> d->floor;
  atomic_store_explicit(&d->scale, seen == 0 ? 1024 : (uint32_t)(((uint64_t)least << 10) / seen), memory_order_relaxed);
}

static void add(_Atomic size_t *c, size_t k) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + k,
                        memory_order_relaxed);
}
static void sub(_Atomic size_t *c, size_t k) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) - k,
                        memory_order_relaxed);
}

/* The mask of granules [i, i + k). */
static uint64_t span(unsigned i, unsigned k) {
  return (k >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1) << i;
}

/* The ranges of set bits of x, one a call: *at and the return value
 * (0 when none is left) give the next one, lowest first; x is consumed. */
static unsigned range_next(uint64_t *x, unsigned *at) {
  if (*x == 0) return 0;
  unsigned s = (unsigned)__builtin_ctzll(*x);
  uint64_t rest = ~(*x >> s);
  unsigned len = rest == 0 ? 64 - s : (unsigned)__builtin_ctzll(rest);
  *x &= ~span(s, len);
  *at = s;
  return len;
}

static unsigned longest(uint64_t x) {
  unsigned best = 0, at, len;
  while ((len = range_next(&x, &at)) != 0)
    if (len > best) best = len;
  return best;
}

/* The start of the shortest free range of cm of at least k granules (the
 * lowest of equals; its length in *len); cm has one. */
static unsigned best_fit(const chunk_t *cm, unsigned k, unsigned *best_len) {
  uint64_t x = cm->free;
  unsigned best = 0, at, len;
  *best_len = 65;
  while ((len = range_next(&x, &at)) != 0)
    if (len >= k && len < *best_len) {
      best = at, *best_len = len;
      if (len == k) break; /* none fits better */
    }
  return best;
}

/* The length of the free range of x that holds bit i (set). */
static unsigned range_at(uint64_t x, unsigned i) {
  uint64_t below = ~x & span(0, i), above = i == 63 ? 0 : ~x & ~span(0, i + 1);
  unsigned lo = below ? 64 - (unsigned)__builtin_clzll(below) : 0;
  unsigned hi = above ? (unsigned)__builtin_ctzll(above) : 64;
  return hi - lo;
}

/* Put cm on the list of its pool for a longest free range of L granules
 * (pool lock). */
static void relist_as(chunk_t *cm, unsigned L) {
  pool_t *p = &pools[cm->kind];
  if (L == cm->longest) return;
  if (cm->longest != 0) {
    if (cm->fprev) cm->fprev->fnext = cm->fnext;
    else if ((p->fit[cm->longest] = cm->fnext) == NULL) p->lists &= ~((uint64_t)1 << (cm->longest - 1));
    if (cm->fnext) cm->fnext->fprev = cm->fprev;
  }
  cm->longest = (uint8_t)L;
  cm->fprev = NULL;
  if (L != 0) {
    if ((cm->fnext = p->fit[L]) != NULL) cm->fnext->fprev = cm;
    p->fit[L] = cm;
    p->lists |= (uint64_t)1 << (L - 1);
  }
}

/* Put cm on the list of its pool that its longest free range says (pool
 * lock): after every change of its free mask. */
static void relist(chunk_t *cm) { relist_as(cm, cm->gone ? 0 : longest(cm->free)); }

/* The chunk of pool p with the shortest longest free range of at least k
 * granules, or NULL (pool lock). */
static chunk_t *pool_fit(const pool_t *p, unsigned k) {
  uint64_t l = p->lists >> (k - 1);
  return l == 0 ? NULL : p->fit[k + (unsigned)__builtin_ctzll(l)];
}

/* Take the free granules m of cm out of the pool (pool lock), without
 * relisting it; returns how many of them were dirty. */
static unsigned pool_cut(chunk_t *cm, uint64_t m) {
  unsigned d = (unsigned)__builtin_popcountll(cm->dirty & m);
  cm->free &= ~m;
  cm->dirty &= ~m;
  sub(&chunk_n_dirty, d);
  return d;
}

/* The same, relisting it. */
static unsigned pool_remove(chunk_t *cm, uint64_t m) {
  unsigned d = pool_cut(cm, m);
  relist(cm);
  return d;
}

/* Can a chunk be dense (advised for huge pages)? */
static bool dense_usable(void) { return options.hugepages && os_huge_size() != 0; }

/* For a dense slab: the sparse pool's best-fitting granule, if its pages
 * are resident (a slab emptied there: no fault, and no huge page to fill),
 * else NULL (pool lock). */
static chunk_t *dirty_single(unsigned *at, unsigned *len) {
  chunk_t *cm = pool_fit(&pools[CARVE_SPARSE], 1);
  if (cm == NULL) return NULL;
  *at = best_fit(cm, 1, len);
  return cm->dirty >> *at & 1 ? cm : NULL;
}

/* Where the last SMP_RUN_RECENT runs of each length were freed (pool
 * lock): a run (or, at one granule, a slab) is taken where one of its
 * length was freed, newest first, if that room is free again, before the
 * best fit: its pages are the ones resident, as a per-length span cache's
 * would be.  A room taken since and freed again counts again, so a long
 * history keeps blocks on the positions they used before: the sweep's
 * run/T1/W100 (32 KiB-1 MiB, first and last byte written) started blocks
 * at 859 distinct places in 130 K operations and faulted 13.2 K pages with
 * 8 runs of 2 granules or more remembered, at 296 places and 5.4 K faults
 * with 128 of every length (rpmalloc: 343 places, 4.4 K faults).  Entries
 * are a chunk and a granule, so that the scan reads no descriptor. */
#define RECENT_MASK (SMP_RUN_RECENT - 1)
_Static_assert((SMP_RUN_RECENT & RECENT_MASK) == 0 && SMP_RUN_RECENT <= 65536, "a power of two");
/* Per length, a ring: the newest of its recent_n[k] entries just before
 * recent_next[k]; an entry taken is closed up (the newer ones move back
 * one), so a scan reads only entries (NULL: of a chunk whose metadata
 * went since, chunk_strip). */
static chunk_t *recent_cm[SMP_RUN_KMAX + 1][SMP_RUN_RECENT];
static uint8_t recent_at[SMP_RUN_KMAX + 1][SMP_RUN_RECENT];
static unsigned recent_next[SMP_RUN_KMAX + 1], recent_n[SMP_RUN_KMAX + 1];

static void recent_push(unsigned k, chunk_t *cm, unsigned i) {
  unsigned r = recent_next[k];
  recent_cm[k][r] = cm;
  recent_at[k][r] = (uint8_t)i;
  recent_next[k] = (r + 1) & RECENT_MASK;
  if (recent_n[k] < SMP_RUN_RECENT) recent_n[k]++; /* else over the oldest */
}

static chunk_t *recent_take(unsigned k, unsigned kind, unsigned *at, unsigned *len) {
  uint64_t m = span(0, k);
  for (unsigned d = 0; d < recent_n[k]; d++) { /* newest first */
    unsigned r = (recent_next[k] - 1 - d) & RECENT_MASK;
    chunk_t *cm = recent_cm[k][r];
    if (cm == NULL) continue;
    unsigned i = recent_at[k][r];
    if (cm->kind != kind || (cm->free >> i & m) != m) continue;
    for (unsigned j = r, newer = d; newer > 0; newer--, j = (j + 1) & RECENT_MASK) { /* close up */
      recent_cm[k][j] = recent_cm[k][(j + 1) & RECENT_MASK];
      recent_at[k][j] = recent_at[k][(j + 1) & RECENT_MASK];
    }
    recent_next[k] = (recent_next[k] - 1) & RECENT_MASK;
    recent_n[k]--;
    *at = i;
    *len = range_at(cm->free, i);
    return cm;
  }
  return NULL;
}

/* Write cm's descriptors: their granules' addresses, free (chunk_map; and
 * a bare chunk's, whose pages were returned, when it is used again: pool
 * lock). */
static void desc_init(chunk_t *cm) {
  for (unsigned i = 0; i < SMP_CHUNK_SLABS; i++) {
    cm->desc[i].base = track_conceal(cm->base + i * SMP_SLAB_SIZE);
    cm->desc[i].chunk = cm;
    chunk_set_state(&cm->desc[i], G_FREE);
  }
  cm->bare = false;
}

slab_t *chunk_take(unsigned k, bool dense, bool *zero) {
  dense = dense && dense_usable();
  lock_take(&pool_lock);
  unsigned len, i = 0;
  chunk_t *cm = dense && k == 1 ? dirty_single(&i, &len)
                : k <= SMP_RUN_KMAX ? recent_take(k, dense, &i, &len) : NULL;
  if (cm == NULL && (cm = pool_fit(&pools[dense], k)) != NULL) i = best_fit(cm, k, &len);
  slab_t *g = NULL;
  if (cm != NULL) {
    if (cm->bare) desc_init(cm);
    *zero = pool_cut(cm, span(i, k)) == 0;
    /* Only cutting a longest range can shorten the longest. */
    if (len == cm->longest) relist(cm);
    g = &cm->desc[i];
    for (unsigned j = 1; j < k; j++) {
      chunk_set_state(&g[j], RUN_TAIL);
      g[j].prev = g;
    }
    chunk_set_state(g, G_FRESH);
    g->next = g->prev = NULL;
    add(&chunk_n_active, k);
  }
  lock_drop(&pool_lock);
  return g;
}

slab_t *chunk_take_clean(bool *zero) {
  lock_take(&pool_lock);
  chunk_t *cm = chunks;
  while (cm != NULL && (cm->gone || cm->kind != CARVE_SPARSE || (cm->free & ~cm->dirty) == 0)) cm = cm->next;
  slab_t *g = NULL;
  if (cm != NULL) {
    unsigned i = (unsigned)__builtin_ctzll(cm->free & ~cm->dirty), len = range_at(cm->free, i);
    if (cm->bare) desc_init(cm);
    *zero = pool_cut(cm, span(i, 1)) == 0;
    if (len == cm->longest) relist(cm);
    g = &cm->desc[i];
    chunk_set_state(g, G_FRESH);
    g->next = g->prev = NULL;
    add(&chunk_n_active, 1);
  }
  lock_drop(&pool_lock);
  return g;
}

void chunk_put(slab_t *g, unsigned k, uint32_t now) {
  chunk_t *cm = g->chunk;
  unsigned i = (unsigned)(g - cm->desc);
  bool run = chunk_state(g) >= RUN_USED;
  lock_take(&pool_lock);
  for (unsigned j = 0; j < k; j++) {
    g[j].stamp = now;
    chunk_set_state(&g[j], G_FREE);
  }
  cm->free |= span(i, k);
  cm->dirty |= span(i, k);
  add(&chunk_n_dirty, k);
  sub(&chunk_n_active, k);
  if (run && k <= SMP_RUN_KMAX) recent_push(k, cm, i);
  unsigned len = range_at(cm->free, i); /* the freed granules' range, merged */
  if (len > cm->longest && !cm->gone) relist_as(cm, len);
  lock_drop(&pool_lock);
}

bool chunk_extend(slab_t *g, unsigned k, unsigned want) {
  chunk_t *cm = g->chunk;
  unsigned i = (unsigned)(g - cm->desc);
  if (want <= k || i + want > SMP_CHUNK_SLABS) return false;
  uint64_t m = span(i + k, want - k);
  lock_take(&pool_lock);
  bool ok = (cm->free & m) == m;
  if (ok) {
    pool_remove(cm, m);
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

size_t chunk_unreserve(void) {
  lock_take(&grow_lock);
  size_t n = region_unreserve();
  lock_drop(&grow_lock);
  return n;
}

/* A chunk's descriptors, then its bitmaps (page-aligned: their pages go
 * back alone), in one block: 72 KiB. */
#define CHUNK_META (SMP_CHUNK_SLABS * (sizeof(slab_t) + SMP_BITMAP_WORDS * sizeof(uint64_t)))
_Static_assert(SMP_CHUNK_SLABS * sizeof(slab_t) % SMP_MIN_PAGE == 0, "bitmaps start a page");

/* A chunk header, from a page of them (the grow lock held): the headers
 * of a purged heap share their pages (chunk.h), and no other metadata
 * lands in the rest of a page (a thread cache's last one: t_internal). */
static chunk_t *chunk_header(void) {
  static chunk_t *batch;
  static unsigned left;
  if (left == 0) {
    size_t page = os_page_size();
    if ((batch = meta_alloc(page, page)) == NULL) return NULL;
    left = (unsigned)(page / sizeof *batch);
  }
  left--;
  return batch++;
}

/* A chunk and its metadata (the grow lock held, no other): dense, one
 * whose granules fault in as huge pages where the kernel gives them. */
static chunk_t *chunk_map(bool dense) {
  dense = dense && os_huge_size() != 0;
  bool huge = false;
  void *c = region_take(dense, &huge);
  if (c == NULL) c = region_map_alone(dense, &huge);
  if (c == NULL) return NULL;
  chunk_t *cm = chunk_header();
  char *meta = cm == NULL ? NULL : meta_alloc(CHUNK_META, os_page_size());
  if (meta == NULL || !pagemap_reserve((uintptr_t)c, SMP_CHUNK_SIZE)) {
    os_unmap(c, SMP_CHUNK_SIZE);
    return NULL; /* metadata: not reusable, lost (out of memory anyway) */
  }
  cm->desc = (slab_t *)meta;
  cm->bitmap = (uint64_t(*)[SMP_BITMAP_WORDS])(meta + SMP_CHUNK_SLABS * sizeof(slab_t));
  cm->base = (uintptr_t)c;
  cm->huge = huge;
  track_noaccess(c, SMP_CHUNK_SIZE); /* valgrind: no block is handed out yet */
  desc_init(cm);
  return cm;
}

bool chunk_grow(unsigned k, bool dense) {
  dense = dense && dense_usable();
  /* One thread maps at a time: threads that ran out together would each
   * map a chunk, and all but the last would sit in the pool. */
  lock_take(&grow_lock);
  lock_take(&pool_lock);
  bool room = pool_fit(&pools[dense], k) != NULL; /* another thread grew it meanwhile */
  lock_drop(&pool_lock);
  chunk_t *cm = room ? NULL : chunk_map(dense);
  if (cm != NULL) {
    lock_take(&pool_lock);
    cm->kind = dense ? CARVE_DENSE : CARVE_SPARSE;
    cm->free = ~(uint64_t)0; /* clean: fresh pages read as zero */
    cm->next = chunks;
    __atomic_store_n(&chunks, cm, __ATOMIC_RELEASE);
    relist(cm);
    lock_drop(&pool_lock);
  }
  lock_drop(&grow_lock);
  return room || cm != NULL;
}

/* ---- returning pages ------------------------------------------------------ */

/* The bitmap pages of cm whose granules are all free and clean go back
 * too, if a slab wrote them: the bitmaps of a purged heap cost no memory,
 * and a heap of runs makes no system call for bitmaps it never used.  The
 * page's granules are out of the pool meanwhile (purging), so that no slab
 * writes a bitmap the kernel is about to zero.  No lock held. */
static size_t bitmap_purge(chunk_t *cm) {
  size_t page = os_page_size(), per = page / sizeof cm->bitmap[0], returned = 0;
  if (per == 0 || per > 64 || 64 % per != 0) return 0;
  uint64_t take = 0;
  lock_take(&pool_lock);
  uint64_t idle = cm->free & ~cm->dirty, used = atomic_load_explicit(&cm->bitmapped, memory_order_relaxed);
  for (unsigned g = 0; g < 64; g += (unsigned)per) {
    uint64_t m = span(g, (unsigned)per);
    if ((idle & m) == m && (used & m) != 0) take |= m;
  }
  if (take != 0) {
    pool_remove(cm, take);
    cm->purging |= take;
  }
  lock_drop(&pool_lock);
  if (take == 0) return 0;
  for (unsigned g = 0; g < 64; g += (unsigned)per)
    if (take >> g & 1) {
      os_decommit(cm->bitmap[g], page);
      returned += page;
    }
  atomic_fetch_and_explicit(&cm->bitmapped, ~take, memory_order_relaxed);
  lock_take(&pool_lock);
  cm->purging &= ~take;
  cm->free |= take; /* clean */
  relist(cm);
  lock_drop(&pool_lock);
  return returned;
}

/* Dirty granules of cm at least delay ms old, at most budget of them, in
 * address order (pool lock). */
static uint64_t purge_pick(const chunk_t *cm, uint32_t now, uint32_t delay, size_t budget) {
  uint64_t pick = 0, x = cm->dirty;
  while (x != 0 && budget > 0) {
    unsigned i = (unsigned)__builtin_ctzll(x);
    x &= x - 1;
    if ((uint32_t)(now - cm->desc[i].stamp) < delay) continue;
    pick |= (uint64_t)1 << i;
    budget--;
  }
  return pick;
}

/* cm's granules are all free and clean: its descriptors and bitmaps go
 * back, out of the pool meanwhile (no lock held; chunk.h, bare).  Returns
 * the bytes. */
static size_t chunk_strip(chunk_t *cm) {
  lock_take(&pool_lock);
  bool all = !cm->bare && !cm->gone && cm->free == ~(uint64_t)0 && cm->dirty == 0;
  if (all) {
    pool_remove(cm, ~(uint64_t)0);
    cm->purging = ~(uint64_t)0;
    /* Forget the runs freed there: their pages went back, so their rooms
     * are worth no more than any other. */
    for (unsigned k = 1; k <= SMP_RUN_KMAX; k++)
      for (unsigned r = 0; r < SMP_RUN_RECENT; r++)
        if (recent_cm[k][r] == cm) recent_cm[k][r] = NULL;
  }
  lock_drop(&pool_lock);
  if (!all) return 0;
  os_decommit(cm->desc, CHUNK_META);
  atomic_store_explicit(&cm->bitmapped, 0, memory_order_relaxed); /* zero now */
  lock_take(&pool_lock);
  cm->purging = 0;
  cm->free = ~(uint64_t)0;
  cm->bare = true;
  relist(cm);
  lock_drop(&pool_lock);
  return CHUNK_META;
}

/* The free, clean granules of a huge-page chunk that share a huge page with
 * the granules of pick: the fault that made that huge page made them
 * resident, and the purge of pick splits it, so they would stay resident,
 * counted clean, until a trim (mem_frag kept 5-9 MiB after its last free
 * in about 1 run of 15).  They go back with pick: often in the same call. */
static uint64_t huge_neighbours(const chunk_t *cm, uint64_t pick) {
  size_t hp = os_huge_size();
  if (!cm->huge || hp <= SMP_SLAB_SIZE || hp > SMP_CHUNK_SIZE) return 0;
  unsigned per = (unsigned)(hp / SMP_SLAB_SIZE);
  uint64_t page = per >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << per) - 1, out = 0;
  for (unsigned at = 0; at < SMP_CHUNK_SLABS; at += per, page = per >= 64 ? page : page << per)
    if (pick & page) out |= page;
  return out & cm->free & ~cm->dirty;
}

size_t chunk_purge(size_t floor, uint32_t now, uint32_t delay) {
  size_t returned = 0;
  /* Everything (a trim): clean granules of dense chunks too, which
   * khugepaged may have faulted in again when it collapsed a huge page
   * that a dirty neighbour kept partly resident. */
  bool all = floor == 0 && delay == 0;
  for (chunk_t *cm = __atomic_load_n(&chunks, __ATOMIC_ACQUIRE); cm != NULL; cm = cm->next) {
    size_t n = chunk_dirty();
    if (n <= floor && !all) break;
    lock_take(&pool_lock);
    uint64_t pick = n > floor ? purge_pick(cm, now, delay, n - floor) : 0;
    uint64_t dirty = pick; /* measured for the density: the clean ones are not */
    if (all && cm->huge && !cm->bare) pick |= cm->free & ~cm->dirty;
    else if (pick != 0) pick |= huge_neighbours(cm, pick);
    if (pick != 0) {
      pool_remove(cm, pick);
      cm->purging |= pick;
    }
    bool strip = all && !cm->bare && !cm->gone && cm->free == ~(uint64_t)0 && cm->dirty == 0;
    lock_drop(&pool_lock);
    if (pick == 0) {
      if (strip) returned += chunk_strip(cm);
      continue;
    }
    /* Neighbours go back with one system call. */
    uint64_t x = dirty;
    unsigned at, len;
    while ((len = range_next(&x, &at)) != 0)
      density_note(&chunk_density, (void *)(cm->base + (uintptr_t)at * SMP_SLAB_SIZE), (size_t)len * SMP_SLAB_SIZE);
    x = pick;
    while ((len = range_next(&x, &at)) != 0) {
      void *range = (void *)(cm->base + (uintptr_t)at * SMP_SLAB_SIZE);
      os_decommit(range, (size_t)len * SMP_SLAB_SIZE);
      returned += (size_t)len * SMP_SLAB_SIZE;
    }
    lock_take(&pool_lock);
    cm->purging &= ~pick;
    cm->free |= pick; /* clean */
    relist(cm);
    bool idle = cm->free == ~(uint64_t)0 && cm->dirty == 0;
    lock_drop(&pool_lock);
    returned += idle ? chunk_strip(cm) /* the bitmaps go with it */ : bitmap_purge(cm);
  }
  return returned;
}

/* ---- giving address space back -------------------------------------------- */

size_t chunk_unmap_free(void) {
  uintptr_t gone[16];
  unsigned n = 0;
  lock_take(&pool_lock);
  for (chunk_t *cm = chunks; cm != NULL && n < 16; cm = cm->next) {
    if (cm->gone || cm->free != ~(uint64_t)0) continue;
    pool_remove(cm, ~(uint64_t)0);
    cm->gone = true;
    relist(cm);
    if (!cm->bare)
      for (unsigned i = 0; i < SMP_CHUNK_SLABS; i++) chunk_set_state(&cm->desc[i], G_GONE);
    gone[n++] = cm->base;
  }
  lock_drop(&pool_lock);
  /* The metadata stays (gone, never reused): 72 KiB of address space per
   * chunk, its pages mostly returned with the bitmaps. */
  for (unsigned i = 0; i < n; i++) os_unmap((void *)gone[i], SMP_CHUNK_SIZE);
  return (size_t)n * SMP_CHUNK_SIZE;
}

/* ---- walking, fork --------------------------------------------------------- */

void chunk_walk(void (*fn)(const slab_t *g, void *arg), void *arg) {
  lock_take(&pool_lock);
  for (chunk_t *cm = chunks; cm != NULL; cm = cm->next)
    for (unsigned i = 0; i < SMP_CHUNK_SLABS && !cm->bare; i++) fn(&cm->desc[i], arg);
  lock_drop(&pool_lock);
}

void chunk_pool_counts(size_t *dirty, size_t *clean) {
  size_t d = 0, c = 0;
  lock_take(&pool_lock);
  for (chunk_t *cm = chunks; cm != NULL; cm = cm->next) {
    d += (size_t)__builtin_popcountll(cm->dirty);
    c += (size_t)__builtin_popcountll(cm->free & ~cm->dirty);
  }
  lock_drop(&pool_lock);
  *dirty = d;
  *clean = c;
}

void chunk_fork_prepare(void) {
  lock_take(&grow_lock);
  lock_take(&pool_lock);
  meta_fork_prepare();
}
void chunk_fork_parent(void) {
  meta_fork_parent();
  lock_drop(&pool_lock);
  lock_drop(&grow_lock);
}
void chunk_fork_child(void) {
  meta_fork_child();
  lock_reset(&pool_lock);
  lock_reset(&grow_lock);
}
