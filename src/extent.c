/*
 * extent.c - big blocks carved from arenas (see extent.h).
 */
#include "chunk.h"
#include "extent.h"
#include "lock.h"
#include "os.h"
#include "pagemap.h"
#include "region.h"

#define GRANULE SMP_SLAB_SIZE
#define NG ((unsigned)(SMP_EXTENT_ARENA / SMP_SLAB_SIZE)) /* granules an arena */
#define NW (NG / 64)                                         /* mask words */

_Static_assert(SMP_EXTENT_ARENA % (64 * SMP_SLAB_SIZE) == 0, "an arena is whole mask words");
_Static_assert(SMP_EXTENT_MAX <= SMP_EXTENT_ARENA, "a block fits an arena");

/* An arena, under the extent lock:
 *     free & purging == 0,   dirty is a subset of free,
 *     extent_n_dirty == sum of |dirty| over every arena,
 *     no bit at or past `top` is set in any mask (never carved: top is
 *     the highest granule ever handed out, plus one; limit bounds it);
 * a granule is in a block exactly when its bit is clear in free and
 * purging and it lies below top. */
typedef struct arena_s {
  uintptr_t base;               /* constant */
  struct arena_s *next;         /* constant once published */
  unsigned top, limit;          /* granules carved so far; that may be */
  uint64_t free[NW], dirty[NW], purging[NW];
  uint32_t stamp[NG];           /* ms clock when a free granule was freed */
} arena_t;

static lock_t ext_lock;
static arena_t *_Atomic arenas; /* newest first; never unlinked */
static bool ext_off;            /* no more arenas (ext_lock) */
_Atomic size_t extent_n_dirty;

static void ext_add(size_t k) {
  atomic_store_explicit(&extent_n_dirty, atomic_load_explicit(&extent_n_dirty, memory_order_relaxed) + k,
                        memory_order_relaxed);
}
static void ext_sub(size_t k) {
  atomic_store_explicit(&extent_n_dirty, atomic_load_explicit(&extent_n_dirty, memory_order_relaxed) - k,
                        memory_order_relaxed);
}

/* ---- masks of NG bits ------------------------------------------------------ */

/* Set (on) or clear bits [i, i + k) of m; returns how many of them were set
 * before. */
static unsigned bits_put(uint64_t *m, unsigned i, unsigned k, bool on) {
  unsigned was = 0;
  while (k > 0) {
    unsigned w = i / 64, o = i % 64, n = 64 - o < k ? 64 - o : k;
    uint64_t x = (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << o;
    was += (unsigned)__builtin_popcountll(m[w] & x);
    m[w] = on ? m[w] | x : m[w] & ~x;
    i += n;
    k -= n;
  }
  return was;
}

/* Are bits [i, i + k) of m all set? */
static bool bits_all(const uint64_t *m, unsigned i, unsigned k) {
  while (k > 0) {
    unsigned w = i / 64, o = i % 64, n = 64 - o < k ? 64 - o : k;
    uint64_t x = (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << o;
    if ((m[w] & x) != x) return false;
    i += n;
    k -= n;
  }
  return true;
}

/* The first range of set bits of m at or after *at: its start in *at and
 * its length, 0 if none. */
static unsigned bits_range(const uint64_t *m, unsigned *at) {
  unsigned i = *at;
  if (i >= NG) return 0;
  unsigned w = i / 64;
  uint64_t x = m[w] & (~(uint64_t)0 << (i % 64));
  while (x == 0) {
    if (++w == NW) return 0;
    x = m[w];
  }
  unsigned s = w * 64 + (unsigned)__builtin_ctzll(x);
  uint64_t y = ~m[w] & (~(uint64_t)0 << (s % 64));
  while (y == 0) {
    if (++w == NW) break;
    y = ~m[w];
  }
  unsigned e = w == NW ? NG : w * 64 + (unsigned)__builtin_ctzll(y);
  *at = s;
  return e - s;
}

/* ---- arenas ------------------------------------------------------------------ */

static arena_t *ext_arena_of(uintptr_t a) {
  for (arena_t *ar = atomic_load_explicit(&arenas, memory_order_acquire); ar != NULL; ar = ar->next)
    if (a - ar->base < SMP_EXTENT_ARENA) return ar;
  return NULL;
}

bool extent_owns(const void *p) { return ext_arena_of((uintptr_t)p) != NULL; }

/* A new arena, published; false if none can be made (none from then on
 * when the kernel refuses the reservation).  No lock held. */
static bool ext_arena_new(void) {
  lock_take(&ext_lock);
  bool off = ext_off;
  lock_drop(&ext_lock);
  if (off || track_running()) return false;
  void *p = os_reserve(SMP_EXTENT_ARENA, GRANULE);
  arena_t *ar = p != NULL ? meta_alloc(sizeof *ar, 64) : NULL;
  if (ar == NULL || !pagemap_reserve((uintptr_t)p, SMP_EXTENT_ARENA)) {
    if (p != NULL) os_unreserve(p, SMP_EXTENT_ARENA);
    if (p == NULL) {
      lock_take(&ext_lock);
      ext_off = true;
      lock_drop(&ext_lock);
    }
    return false;
  }
  os_smallpages_unless_asked(p, SMP_EXTENT_ARENA); /* never huge pages (config.h, SMP_HUGEPAGES) */
  track_noaccess(p, SMP_EXTENT_ARENA);
  ar->base = (uintptr_t)p;
  ar->limit = NG;
  lock_take(&ext_lock);
  if (ext_off) ar->limit = 0; /* unreserved meanwhile: never used */
  ar->next = atomic_load_explicit(&arenas, memory_order_relaxed);
  atomic_store_explicit(&arenas, ar, memory_order_release);
  lock_drop(&ext_lock);
  if (ar->limit == 0) os_unreserve(p, SMP_EXTENT_ARENA);
  return ar->limit != 0;
}

/* The place for k granules (extent lock): the lowest free range of at
 * least k, in the arena of the lowest address, else the lowest uncarved
 * space; false if none.  First fit by address, not best fit: blocks
 * pack at the bottom of the arenas, so a new block mostly starts and ends
 * on pages that earlier blocks wrote (the sweep's big/T1/W100, 1-32 MiB
 * replaced at random, first and last byte written: 100 K faults without
 * purging against best fit's 125 K, 0.34 s against 0.50) and the scan
 * stops at the first fit. */
static bool ext_fit(unsigned k, arena_t **where, unsigned *at) {
  *where = NULL;
  for (arena_t *ar = atomic_load_explicit(&arenas, memory_order_relaxed); ar != NULL; ar = ar->next) {
    if (*where != NULL && ar->base > (*where)->base) continue;
    unsigned i = 0, len;
    while ((len = bits_range(ar->free, &i)) != 0) {
      unsigned room = i + len == ar->top ? len + ar->limit - ar->top : len; /* ends at the uncarved part */
      if (room >= k) {
        *where = ar, *at = i;
        break;
      }
      i += len;
    }
  }
  if (*where != NULL) return true;
  for (arena_t *ar = atomic_load_explicit(&arenas, memory_order_relaxed); ar != NULL; ar = ar->next)
    if (ar->limit - ar->top >= k && (*where == NULL || ar->base < (*where)->base)) *where = ar, *at = ar->top;
  return *where != NULL;
}

void *extent_alloc(size_t size, bool *zero) {
  unsigned k = (unsigned)(size / GRANULE);
  for (;;) {
    lock_take(&ext_lock);
    arena_t *ar;
    unsigned at;
    if (ext_fit(k, &ar, &at)) {
      unsigned fresh = 0;
      if (at + k > ar->top) { /* carved now: counted as mapped */
        fresh = at + k - ar->top;
        ar->top = at + k;
      }
      unsigned d = bits_put(ar->dirty, at, k, false);
      bits_put(ar->free, at, k, false);
      ext_sub(d);
      lock_drop(&ext_lock);
      if (fresh != 0 && !os_use((size_t)fresh * GRANULE)) { /* a test build failing maps */
        extent_free((void *)(ar->base + (uintptr_t)at * GRANULE), size);
        return NULL;
      }
      *zero = d == 0;
      return (void *)(ar->base + (uintptr_t)at * GRANULE);
    }
    lock_drop(&ext_lock);
    if (!ext_arena_new()) return NULL;
  }
}

void extent_free(void *p, size_t size) {
  arena_t *ar = ext_arena_of((uintptr_t)p);
  unsigned at = (unsigned)(((uintptr_t)p - ar->base) / GRANULE), k = (unsigned)(size / GRANULE);
  uint32_t now = os_now_ms();
  lock_take(&ext_lock);
  for (unsigned j = at; j < at + k; j++) ar->stamp[j] = now;
  bits_put(ar->free, at, k, true);
  ext_add(k - bits_put(ar->dirty, at, k, true));
  lock_drop(&ext_lock);
}

bool extent_grow(void *p, size_t old, size_t size) {
  arena_t *ar = ext_arena_of((uintptr_t)p);
  unsigned at = (unsigned)(((uintptr_t)p - ar->base + old) / GRANULE), k = (unsigned)((size - old) / GRANULE);
  if (at + k > NG) return false;
  lock_take(&ext_lock);
  bool ok = bits_all(ar->free, at, k);
  if (ok) ext_sub(bits_put(ar->dirty, at, k, false)), bits_put(ar->free, at, k, false);
  lock_drop(&ext_lock);
  return ok;
}

/* ---- returning pages -------------------------------------------------------- */

/* The arena of the highest address below `below` (UINTPTR_MAX: the
 * highest of all), NULL if none. */
static arena_t *ext_arena_below(uintptr_t below) {
  arena_t *best = NULL;
  for (arena_t *ar = atomic_load_explicit(&arenas, memory_order_acquire); ar != NULL; ar = ar->next)
    if (ar->base < below && (best == NULL || ar->base > best->base)) best = ar;
  return best;
}

/* From the top down: first fit packs the blocks at the bottom of the
 * arenas (ext_fit), where the next block mostly lands on pages that
 * earlier blocks wrote; the free room at the top is what the program
 * reuses last.  (Bottom up, the sweep's big/T1/W100 faulted 142 K pages
 * in again against 100 K with no purge at all.) */
size_t extent_purge(size_t floor, uint32_t now, uint32_t delay) {
  size_t returned = 0;
  for (arena_t *ar = ext_arena_below(UINTPTR_MAX); ar != NULL; ar = ext_arena_below(ar->base)) {
    for (unsigned w = NW; w-- > 0;) {
      if (extent_dirty() <= floor) return returned;
      lock_take(&ext_lock);
      uint64_t pick = 0, x = ar->dirty[w];
      size_t left = extent_dirty() - floor;
      for (; x != 0 && left > 0; x &= ~((uint64_t)1 << (63 - __builtin_clzll(x)))) {
        unsigned b = 63u - (unsigned)__builtin_clzll(x);
        if ((uint32_t)(now - ar->stamp[w * 64 + b]) < delay) continue;
        pick |= (uint64_t)1 << b;
        left--;
      }
      ar->dirty[w] &= ~pick;
      ar->free[w] &= ~pick;
      ar->purging[w] |= pick;
      ext_sub((size_t)__builtin_popcountll(pick));
      lock_drop(&ext_lock);
      if (pick == 0) continue;
      for (uint64_t y = pick; y != 0;) { /* neighbours with one system call */
        unsigned s0 = (unsigned)__builtin_ctzll(y);
        uint64_t rest = ~(y >> s0);
        unsigned n = rest == 0 ? 64 - s0 : (unsigned)__builtin_ctzll(rest);
        os_decommit((void *)(ar->base + ((uintptr_t)w * 64 + s0) * GRANULE), (size_t)n * GRANULE);
        returned += (size_t)n * GRANULE;
        y &= ~((n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << s0);
      }
      lock_take(&ext_lock);
      ar->purging[w] &= ~pick;
      ar->free[w] |= pick; /* clean */
      lock_drop(&ext_lock);
    }
  }
  return returned;
}

void extent_unreserve(void) {
  lock_take(&ext_lock);
  ext_off = true;
  lock_drop(&ext_lock);
  for (arena_t *ar = atomic_load_explicit(&arenas, memory_order_acquire); ar != NULL; ar = ar->next) {
    lock_take(&ext_lock);
    unsigned top = ar->top, limit = ar->limit;
    ar->limit = top;
    lock_drop(&ext_lock);
    if (limit > top) os_unreserve((void *)(ar->base + (uintptr_t)top * GRANULE), (size_t)(limit - top) * GRANULE);
  }
}

void extent_fork_prepare(void) { lock_take(&ext_lock); }
void extent_fork_parent(void) { lock_drop(&ext_lock); }
void extent_fork_child(void) { lock_reset(&ext_lock); }
