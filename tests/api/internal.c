/*
 * internal.c - exhaustive checks of the allocator's internal
 * arithmetic, compiled together with the core sources (-Isrc):
 *   - class_of(n) and the table bin_of_size agree with the class
 *     definition for every n in 0..SMP_SMALL_MAX: the class is the smallest
 *     whose size is >= n; above 4 KiB its slab holds as many blocks as
 *     any 64-byte multiple >= n would allow (the classes fitted to slabs),
 *     and over 21824 bytes (two to a slab) it is less than 4 KiB over n;
 *   - the one-multiply block-start test (class_block_index, sizeclass.h) says
 *     "start" exactly for offsets that are whole multiples of the class
 *     size, with the right index, for every class and every offset of a
 *     slab; every class from 16 bytes on is a multiple of 16 (16-aligned
 *     blocks) and its bitmap fits the chunk's room for it.
 *   - block marks (class_mark), free's one-compare check: the marks of a
 *     slab's block starts rise strictly with the index, and every other
 *     offset's mark is at least that of the offset past the last block, so
 *     mark(off) < mark(k * size) says exactly "off starts one of the first
 *     k blocks".
 *   - class_aligned(n, a) gives a class whose size is a multiple of a.
 *   - a new thread's slot (slot_join) is the first of those that the
 *     fewest threads use, also after threads left some slots or moved.
 *   - free keeps a thread's own slot's blocks and sends another slot's
 *     home (the rows of tcache.h): with 4 slots (t_internal.sh runs it
 *     with SMPALLOC_SLOTS=4), a second thread (on
 *     another slot than main's) gets back the block it freed last of its
 *     own, but not a block of main's that it freed, which goes to the
 *     remote batch; every row but its own slot's is zero; a new thread's
 *     bin holds one block after one malloc and free of its class.
 *   - blocks of two neighbouring slabs given back in one call in rising
 *     order each set their own slab's bit (slab_give's runs stop at a
 *     slab's last block), for classes of 48 B to 32 KiB.
 *   - a new thread's mallocs of a fresh class come out in rising address
 *     order (150 of 400 B: at most one fall, where a new slab starts).
 *   - a bin grows to SMP_TCACHE_BYTES of blocks in a small heap, to
 *     SMP_TCACHE_BIG_BYTES in a big heap of few threads, and not past
 *     the first in a big heap of too many threads.
 *   - a fill that needs a slab of memory not resident (no dirty granule
 *     pooled) first gives the thread's other bins back in a small heap,
 *     and leaves them be in a big one (tcache_alloc_slow's defer).
 *   - a slab that empties goes back to the pool, the current one too once
 *     blocks were handed out from half of it (slot_settle): 336 blocks of
 *     512 B (three slabs, the last used for 40 KiB) freed newest first
 *     leave the class no slab; 20 of 768 B (15 KiB of one slab) leave it
 *     that slab.
 *   - blocks freed by a thread of another slot go home in parcels
 *     (slot_send): a remote batch waits in the owner's inbox until a
 *     thread of that slot takes blocks; a sender that finds the inbox
 *     full (SMP_INBOX_DEPTH parcels, or SMP_INBOX_BYTES) and its lock
 *     free gives every parcel back itself, and so does one whose blocks'
 *     slot has no threads left, and a slot's last thread drains its
 *     inbox as it exits;
 *     a batch of two slots' blocks goes home as two parcels;
 *     smp_collect drains every inbox.
 *   - four threads that run out of granules together (chunk_grow, dense
 *     chunks) are each
 *     handed their own granules, none twice, and all counted in use;
 *   - where the kernel's huge page mode is "always" (forced), a sparse
 *     chunk and a block mapped alone are advised for small pages (their
 *     mapping's VmFlags say nh), and where it is not, nothing is.
 *   - a purge of a granule in a huge page takes the page's clean
 *     granules along: its clean neighbour, resident since the huge page's
 *     fault, has no page resident after (where the kernel gives one).
 *   - chunks are carved from reservations (chunk.c, region_take), in
 *     address order, each reservation twice the last (granules taken one
 *     by one come in runs of consecutive addresses: a reservation's rest,
 *     then whole ones of twice the size each time, up to SMP_REGION_MAX); a
 *     small block's chunk lies in an area of SMP_REGION_MIN bytes or more
 *     (where the overcommit accounting is not strict and no
 *     address-space limit is set), and an area as big advised for huge
 *     pages is there already, in a small heap (the dense reservation is
 *     made with the first sparse one).
 *   - a slot's first slab of a class takes a clean granule, a later one
 *     the best fit (a lone dirty granule below the clean one).
 *   - the arenas' purge goes from the top down: of two freed blocks of
 *     8 MiB, a purge of one block's granules returns the higher one's.
 *   - samples off, malloc counts no bytes off and pops the thread's own
 *     row; on (tcache_sampling), its row is the empty one, and alloc_slow
 *     counts each malloc and still hands out the thread's cached blocks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk.h"
#include "extent.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "purge.h"
#include "sizeclass.h"
#include "slab.h"
#include "slot.h"
#include "smpalloc.h"
#include "tcache.h"

static unsigned long failures;
#define CHECK(c, ...) \
  do { if (!(c) && failures++ < 20) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

/* The rows: run by a second thread; main's block is arg. */
static unsigned long row_checks;
static void *rows_thread(void *arg) {
  void *mine = smp_malloc(48);
  smp_free(mine);
  tcache_t *tc = tcache_tls.self;
  /* A new thread's bin starts small (SMP_TCACHE_START): after one malloc
   * and one free of a class it holds that block, none fetched with it. */
  const tcache_bin_t *b48 = tcache_bin(tc->bins, class_of(48));
  CHECK(b48->top - b48->base == 1 && b48->end - b48->base <= 2,
        "a new thread's bin holds %td blocks (room %td) after one malloc and free", b48->top - b48->base,
        b48->end - b48->base);
  void *again = smp_malloc(48);
  unsigned owner = pagemap_desc(pagemap_get(arg))->owner;
  row_checks += 5;
  CHECK(tc->slot != owner, "the second thread shares main's slot %u", owner);
  CHECK(again == mine, "a thread's own freed block %p did not come back (%p)", mine, again);
  smp_free(arg); /* main's: another slot's slab */
  void *other = smp_malloc(48);
  CHECK(other != arg, "a block of slot %u freed by a thread of slot %u came back to it", owner, tc->slot);
  unsigned nonzero = 0;
  for (unsigned r = 0; r < slab_rows; r++) {
    if (tc->rows + slab_row(r) == tc->bins) continue;
    for (unsigned c = 0; c < SMP_NCLASS; c++) {
      const tcache_bin_t *b = tcache_bin(tc->rows + slab_row(r), c);
      nonzero += b->top != NULL || b->end != NULL || b->base != NULL;
    }
  }
  CHECK(nonzero == 0 && tc->bins == tc->rows + slab_row(tc->slot % slab_rows),
        "%u bins of other slots' rows are not zero, or the live row is not the slot's", nonzero);
  smp_free(again == mine ? other : NULL);
  smp_free(again);
  return NULL;
}

/* A new thread that uses the classes to 512 bytes, a few blocks each,
 * touches only the pages of its live row's bins of those classes and of
 * its header and arrays (the remote batch lies past them); where its row
 * is in the last pair, next to the header, that is one page (config.h,
 * SMP_TCACHE_HEAD_AT).  It sets page_pages to the resident pages of its
 * cache, from its rows to its remote batch, page_want to those expected,
 * and page_last when its row is in the last pair. */
static size_t page_pages, page_want;
static bool page_last;
static void *page_thread(void *arg) {
  (void)arg;
  void *v[6];
  for (size_t n = 16; n <= 512; n += 16) {
    for (int i = 0; i < 6; i++) v[i] = smp_malloc(n);
    for (int i = 0; i < 6; i++) smp_free(v[i]);
  }
  tcache_t *tc = tcache_tls.self;
  uintptr_t page = os_page_size(), lo = (uintptr_t)tc->rows & ~(page - 1);
  uintptr_t hi = ((uintptr_t)(tc->remote + 1) + page - 1) & ~(page - 1);
  uintptr_t bins_lo = (uintptr_t)tcache_bin(tc->bins, class_of(512)) / page,
            bins_hi = ((uintptr_t)(tcache_bin(tc->bins, class_of(16)) + 1) - 1) / page,
            own_lo = (uintptr_t)tc / page, own_hi = ((uintptr_t)tc->room - 1) / page;
  page_want = bins_hi - bins_lo + 1 + own_hi - own_lo + 1;
  if (own_lo <= bins_hi) page_want -= bins_hi - own_lo + 1; /* shared */
  page_last = tc->slot % slab_rows / 2 == (slab_rows - 1) / 2;
  page_pages = os_resident((void *)lo, hi - lo);
  return NULL;
}
static pthread_barrier_t hold_ready, hold_go;
static void *hold_thread(void *arg) {
  (void)arg;
  smp_free(smp_malloc(16)); /* a cache of its own, on a slot of its own */
  pthread_barrier_wait(&hold_ready);
  pthread_barrier_wait(&hold_go);
  return NULL;
}

/* A new thread's mallocs of a class no one used yet come out in rising
 * address order (tcache.c, reverse): 150 blocks of 400 B, one slab's
 * worth, each above the one before but where a new slab starts. */
static void *order_thread(void *arg) {
  (void)arg;
  enum { N = 150 };
  char *v[N];
  long falls = 0;
  for (int i = 0; i < N; i++) {
    v[i] = smp_malloc(400);
    falls += i > 0 && v[i] < v[i - 1];
  }
  for (int i = 0; i < N; i++) smp_free(v[i]);
  return (void *)falls;
}

/* A cache an exited thread left goes to the next new thread with its
 * arrays: grow_thread grows its bin of 48-byte blocks to the class's
 * limit and exits; reuse_thread, started next, takes that cache, and its
 * first malloc of the class finds the grown array (a fresh cache's first
 * fill takes one block, into an array of one). */
static void *grow_thread(void *arg) {
  (void)arg;
  void *v[400];
  for (int i = 0; i < 400; i++) v[i] = smp_malloc(48);
  for (int i = 0; i < 400; i++) smp_free(v[i]);
  return NULL;
}
static long reused_limit = -1, reused_count = -1;
static void *reuse_thread(void *arg) {
  (void)arg;
  void *p = smp_malloc(48);
  const tcache_bin_t *b = tcache_bin(tcache_tls.self->bins, class_of(48));
  reused_limit = b->end - b->base, reused_count = b->top - b->base;
  smp_free(p);
  return NULL;
}

/* How far a new thread's bin of arg bytes grows (its room, in blocks)
 * when 64 blocks of the class are allocated and freed, four times; idle
 * threads wait with a cache of their own until main lets them go. */
static void *limit_thread(void *arg) {
  size_t n = (size_t)arg;
  void *v[64];
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 64; i++) v[i] = smp_malloc(n);
    for (int i = 0; i < 64; i++) smp_free(v[i]);
  }
  const tcache_bin_t *b = tcache_bin(tcache_tls.self->bins, class_of(n));
  return (void *)(b->end - b->base);
}
static long grown_limit(size_t n) {
  pthread_t t;
  void *r = NULL;
  if (pthread_create(&t, NULL, limit_thread, (void *)n) != 0) return -1;
  pthread_join(t, &r);
  return (long)(intptr_t)r;
}
static pthread_barrier_t idle_ready, idle_go;
/* A new thread frees 4 blocks of keep bytes into its cache, then mallocs
 * fresh bytes, a class with no slab anywhere, while no freed granule is
 * resident (purge_all): the blocks its bin of keep holds before and after
 * (tcache_alloc_slow's defer), and the dirty granules pooled before. */
struct defer_case { size_t keep, fresh, dirty; long before, after; };
static void *defer_thread(void *arg) {
  struct defer_case *d = arg;
  void *v[4];
  purge_all();
  for (int i = 0; i < 4; i++) v[i] = smp_malloc(d->keep);
  for (int i = 0; i < 4; i++) smp_free(v[i]);
  tcache_bin_t *b = tcache_bin(tcache_tls.bins, class_of(d->keep));
  d->before = b->top - b->base;
  d->dirty = chunk_dirty();
  void *p = smp_malloc(d->fresh);
  b = tcache_bin(tcache_tls.bins, class_of(d->keep)); /* the live row, should the slot have moved */
  d->after = b->top - b->base;
  smp_free(p);
  return NULL;
}
static void defer_case(struct defer_case *d) {
  pthread_t t;
  d->before = d->after = -1;
  if (pthread_create(&t, NULL, defer_thread, d) == 0) pthread_join(t, NULL);
}

static void *idle_thread(void *arg) {
  (void)arg;
  smp_free(smp_malloc(16)); /* a cache of its own */
  pthread_barrier_wait(&idle_ready); /* main counts it only once it has one */
  pthread_barrier_wait(&idle_go);
  return NULL;
}
static long limit_want(size_t n, size_t bytes, unsigned lo) {
  size_t m = bytes / class_table[class_of(n)].size;
  return m < lo ? lo : m > SMP_TCACHE_COUNT ? SMP_TCACHE_COUNT : (long)m;
}

/* The inbox (slot_send): run by a thread of another slot than main's,
 * which allocated the n blocks of arg. */
struct post { void **v; unsigned n; unsigned slot; };
static void *post_thread(void *arg) {
  struct post *p = arg;
  for (unsigned i = 0; i < p->n; i++) smp_free(p->v[i]);
  p->slot = tcache_tls.self->slot;
  return NULL;
}

/* Blocks of the class of n bytes out of their slabs (the statistics). */
static size_t class_in_use(size_t n) {
  smp_stats_t st;
  if (smp_stats_get(&st) != 0) return (size_t)-1;
  return st.classes[class_of(n)].in_use;
}

/* Another slot's thread frees k blocks of n bytes that main allocated:
 * how many of them are back in their slabs when it has exited. */
static size_t posted_back(unsigned k, size_t n, unsigned *slot) {
  static void *v[(SMP_INBOX_DEPTH + 1) * SMP_REMOTE_BATCH];
  for (unsigned i = 0; i < k; i++) v[i] = smp_malloc(n);
  size_t before = class_in_use(n);
  struct post p = {v, k, 0};
  pthread_t t;
  if (pthread_create(&t, NULL, post_thread, &p) != 0) return (size_t)-1;
  pthread_join(t, NULL);
  *slot = p.slot;
  return before - class_in_use(n);
}

/* A slot with no threads left: its last thread gives back what was
 * posted to it as it exits, and blocks of its slabs freed afterwards are
 * given back by their sender.  Thread a (on a slot of its own) allocates
 * two batches; b joins another slot while a lives, frees the first batch
 * (posted: a lives), and the second once a has exited. */
static pthread_barrier_t bar_joined, bar_posted, bar_exited;
static void *orphan_a(void *arg) {
  struct post *p = arg;
  for (unsigned i = 0; i < p->n; i++) p->v[i] = smp_malloc(96);
  p->slot = tcache_tls.self->slot;
  tcache_flush(); /* blocks it fetched but did not hand out: not counted below */
  pthread_barrier_wait(&bar_joined);
  pthread_barrier_wait(&bar_posted);
  return NULL;
}
static void *orphan_b(void *arg) {
  struct post *p = arg, first = {p->v, SMP_REMOTE_BATCH, 0}, second = {p->v + SMP_REMOTE_BATCH, SMP_REMOTE_BATCH, 0};
  smp_free(smp_malloc(8)); /* joins a slot */
  pthread_barrier_wait(&bar_joined);
  post_thread(&first);
  pthread_barrier_wait(&bar_posted);
  pthread_barrier_wait(&bar_exited);
  post_thread(&second);
  p->slot = second.slot;
  return NULL;
}
static size_t orphans_back(unsigned *a_slot, unsigned *b_slot, size_t *at_exit) {
  static void *v[2 * SMP_REMOTE_BATCH];
  struct post pa = {v, 2 * SMP_REMOTE_BATCH, 0}, pb = {v, 2 * SMP_REMOTE_BATCH, 0};
  pthread_t a, b;
  pthread_barrier_init(&bar_joined, NULL, 3);
  pthread_barrier_init(&bar_posted, NULL, 3);
  pthread_barrier_init(&bar_exited, NULL, 2);
  if (pthread_create(&a, NULL, orphan_a, &pa) != 0 || pthread_create(&b, NULL, orphan_b, &pb) != 0)
    return (size_t)-1;
  pthread_barrier_wait(&bar_joined);
  size_t start = class_in_use(96);
  pthread_barrier_wait(&bar_posted);
  pthread_join(a, NULL);
  *at_exit = start - class_in_use(96);
  pthread_barrier_wait(&bar_exited);
  pthread_join(b, NULL);
  *a_slot = pa.slot, *b_slot = pb.slot;
  return start - class_in_use(96);
}

/* A remote batch of two slots' blocks: main's and x's (x lives on
 * another slot until released), freed by a thread of a third slot. */
static void *mixed_x(void *arg) {
  struct post *p = arg;
  for (unsigned i = 0; i < p->n; i++) p->v[i] = smp_malloc(96);
  p->slot = tcache_tls.self->slot;
  pthread_barrier_wait(&bar_joined);
  pthread_barrier_wait(&bar_exited);
  return NULL;
}
static size_t mixed_back(unsigned *slots3, size_t *left) {
  enum { HALF = SMP_REMOTE_BATCH / 2 };
  static void *v[SMP_REMOTE_BATCH];
  for (unsigned i = 0; i < HALF; i++) v[i] = smp_malloc(96);
  struct post px = {v + HALF, HALF, 0}, py = {v, SMP_REMOTE_BATCH, 0};
  pthread_t x, y;
  pthread_barrier_init(&bar_joined, NULL, 2);
  pthread_barrier_init(&bar_exited, NULL, 2);
  if (pthread_create(&x, NULL, mixed_x, &px) != 0) return (size_t)-1;
  pthread_barrier_wait(&bar_joined);
  size_t before = class_in_use(96);
  if (pthread_create(&y, NULL, post_thread, &py) != 0) return (size_t)-1;
  pthread_join(y, NULL);
  size_t back = before - class_in_use(96);
  pthread_barrier_wait(&bar_exited);
  pthread_join(x, NULL);
  slots3[0] = tcache_tls.self->slot, slots3[1] = px.slot, slots3[2] = py.slot;
  smp_collect(); /* drains every inbox */
  *left = class_in_use(96); /* none is live, cached or posted now */
  return back;
}

/* Slabs held by the class of n bytes (the statistics). */
static size_t class_slabs_of(size_t n) {
  smp_stats_t st;
  if (smp_stats_get(&st) != 0) return (size_t)-1;
  return st.classes[class_of(n)].slabs;
}

/* Allocate k blocks of n bytes, free them newest first, give the thread's
 * cache back: the slabs the class still holds. */
static size_t slabs_after_round(size_t n, unsigned k) {
  static void *v[1024];
  for (unsigned i = 0; i < k; i++) v[i] = smp_malloc(n);
  for (unsigned i = k; i-- > 0;) smp_free(v[i]);
  tcache_flush();
  return class_slabs_of(n);
}

/* slab_give takes a run of neighbours' bits at once (slab.h): a run that
 * reaches a slab's last block stops there, though the next granule's first
 * block follows it (a class that divides the granule).  All the blocks of
 * two neighbouring slabs of the class but the first and the last go back
 * in one call, in rising order: each slab gets exactly its own bits back.
 * Returns the checks made. */
static int addr_cmp(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
  return x < y ? -1 : x > y;
}
static unsigned long give_runs(size_t size) {
  static void *v[6 * 1365];
  unsigned c = class_of(size);
  uint32_t count = class_table[c].count, sz = class_table[c].size;
  size_t n = 6 * (size_t)count, at = n;
  if (n > sizeof v / sizeof v[0]) n = sizeof v / sizeof v[0];
  for (size_t i = 0; i < n; i++) v[i] = smp_malloc(size);
  qsort(v, n, sizeof *v, addr_cmp);
  for (size_t i = 0; i + 2 * count <= n && at == n; i++) {
    uintptr_t x = (uintptr_t)v[i];
    if (x % SMP_SLAB_SIZE != 0) continue;
    bool whole = true;
    for (uint32_t k = 0; k < 2 * count && whole; k++)
      whole = (uintptr_t)v[i + k] == x + (k < count ? 0 : SMP_SLAB_SIZE) + (k % count) * (uintptr_t)sz;
    if (whole) at = i;
  }
  CHECK(at < n, "no two neighbouring slabs of %u-byte blocks, all ours", sz);
  if (at == n) {
    for (size_t i = 0; i < n; i++) smp_free(v[i]);
    return 1;
  }
  slab_t *x = pagemap_desc(pagemap_get(v[at])), *y = pagemap_desc(pagemap_get(v[at + count]));
  uint32_t xu = x->used, yu = y->used;
  slot_give(v + at + 1, 2 * count - 2, "free");
  CHECK(xu == count && x->used == 1 && yu == count && y->used == 1,
        "%u-byte blocks: used %u -> %u and %u -> %u, want %u -> 1", sz, xu, x->used, yu, y->used, count);
  unsigned long bad = 0;
  for (uint32_t k = 0; k < (count + 63) / 64 * 64; k++) {
    bool xs = x->bits[k / 64] >> (k % 64) & 1, ys = y->bits[k / 64] >> (k % 64) & 1;
    bad += xs != (k > 0 && k < count);
    bad += ys != (k < count - 1);
  }
  CHECK(bad == 0, "%u-byte blocks: %lu bits wrong in the two slabs after one give-back", sz, bad);
  for (size_t i = 0; i < n; i++)
    if (i <= at || i >= at + 2 * count - 1) smp_free(v[i]);
  return 3;
}

/* Threads that run out of granules together (chunk_grow): each takes
 * GROW_EACH dense granules, one at a time, growing when none is at hand,
 * and writes its mark at the start of each.  Growers map with no lock
 * held, so they overlap there, and a chunk mapped meanwhile serves the
 * next growth. */
#define GROW_THREADS 4
#define GROW_EACH 96
static slab_t *grown[GROW_THREADS][GROW_EACH];
static _Atomic unsigned grow_fails;

static void *grow_race_thread(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  for (unsigned i = 0; i < GROW_EACH;) {
    bool zero;
    slab_t *g = chunk_take(1, true, &zero);
    if (g == NULL) {
      if (!chunk_grow(1, true)) {
        atomic_fetch_add(&grow_fails, 1);
        return NULL;
      }
      continue;
    }
    *(uintptr_t *)chunk_base(g) = id << 16 | i;
    grown[id][i++] = g;
  }
  return NULL;
}

/* Every free granule out of the pool and the chunks being carved (their
 * spares too), never growing: how many. */
static size_t grow_drain(void) {
  size_t n = 0;
  bool zero;
  for (int dense = 1; dense >= 0; dense--)
    while (chunk_take(1, dense, &zero) != NULL) n++;
  return n;
}

/* Bytes of address space mapped for chunks (and large blocks: none in the
 * child meanwhile), not metadata. */
static size_t grow_chunk_bytes(void) {
  size_t mapped, returned, calls, meta;
  os_counters(&mapped, &returned, &calls, &meta);
  return mapped - meta;
}

/* In a child: a fresh process's first dense chunks.  The pool is drained
 * before and after, so every granule of the chunks mapped meanwhile is
 * either one the threads took or one the second drain found: a chunk
 * mapped and neither carved nor kept as the spare would show. */
static void grow_race(void) {
  grow_drain();
  size_t active = chunk_active(), bytes = grow_chunk_bytes();
  pthread_t t[GROW_THREADS];
  for (uintptr_t i = 0; i < GROW_THREADS; i++)
    if (pthread_create(&t[i], NULL, grow_race_thread, (void *)i) != 0) _exit(2);
  for (unsigned i = 0; i < GROW_THREADS; i++) pthread_join(t[i], NULL);
  CHECK(grow_fails == 0, "%u threads could not grow", grow_fails);
  unsigned wrong = 0, twice = 0;
  for (uintptr_t i = 0; i < GROW_THREADS; i++)
    for (unsigned j = 0; j < GROW_EACH; j++) {
      if (grown[i][j] == NULL) continue;
      wrong += *(uintptr_t *)chunk_base(grown[i][j]) != (i << 16 | j);
      for (uintptr_t k = 0; k < GROW_THREADS; k++)
        for (unsigned l = 0; l < GROW_EACH; l++)
          twice += (k != i || l != j) && grown[k][l] == grown[i][j];
    }
  CHECK(wrong == 0 && twice == 0, "growing together: %u granules lost their mark, %u handed out twice", wrong, twice);
  CHECK(chunk_active() - active == GROW_THREADS * GROW_EACH, "growing together: %zu granules in use more, not %u",
        chunk_active() - active, GROW_THREADS * GROW_EACH);
  size_t left = grow_drain(), mapped = (grow_chunk_bytes() - bytes) / SMP_SLAB_SIZE;
  CHECK(mapped == GROW_THREADS * GROW_EACH + left,
        "growing together: %zu granules mapped, %u taken and %zu left in the pool: %zd lost", mapped,
        GROW_THREADS * GROW_EACH, left, (ssize_t)(mapped - GROW_THREADS * GROW_EACH - left));
}

/* 1 if the mapping that holds p has the two-letter flag in its VmFlags
 * (/proc/self/smaps), 0 if not, -1 if no mapping holds it. */
static int vma_has(const void *p, const char *flag) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in = 0, r = -1;
  while (f != NULL && r < 0 && fgets(line, sizeof line, f) != NULL) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
    else if (in && strncmp(line, "VmFlags:", 8) == 0) {
      r = 0;
      for (char *t = strtok(line + 8, " \n"); t != NULL && r == 0; t = strtok(NULL, " \n")) r = strcmp(t, flag) == 0;
    }
  }
  if (f != NULL) fclose(f);
  return r;
}

/* Bytes of the area (mapping) of the address space that holds p; 0 if
 * none does. */
static size_t area_bytes(const void *p) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  size_t r = 0;
  while (f != NULL && r == 0 && fgets(line, sizeof line, f) != NULL) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && (uintptr_t)p >= lo && (uintptr_t)p < hi) r = hi - lo;
  }
  if (f != NULL) fclose(f);
  return r;
}

/* Chunks are carved from reservations (chunk.c, region_take) where the
 * kernel's accounting is not strict and the process has no address-space
 * limit (os.h, os_reserve): a small block's chunk lies in an area of
 * SMP_REGION_MIN bytes or more, however small the heap (a chunk mapped
 * alone: 4 MiB, or a few side by side). */
static unsigned long region_checks(void) {
  char mode[8] = "";
  FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
  if (f != NULL) {
    if (fgets(mode, sizeof mode, f) == NULL) mode[0] = 0;
    fclose(f);
  }
  struct rlimit as, data;
  if (mode[0] == 0 || mode[0] == '2' || getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY ||
      getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY) {
    printf("note: strict overcommit, or an address-space or data limit here: no reservation, not checked\n");
    return 0;
  }
  /* In a child, granules taken one by one, growing when none is at hand,
   * come in address order from one reservation, then from the next: the
   * rest of the current one, then one of twice its size (each new
   * reservation twice the last; here the second, 2 * SMP_REGION_MIN, or
   * a later one). */
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    grow_drain();
    /* Runs of consecutive granules: the rest of the current reservation,
     * then whole ones, until two of SMP_REGION_MAX (3 GiB of address
     * space in all, its granules never written). */
    enum { RUNS = 8 };
    size_t runs[RUNS] = {0};
    uintptr_t prev = 0;
    unsigned run = 0;
    bool zero;
    while (run < RUNS && !(run >= 3 && runs[run - 1] * SMP_SLAB_SIZE == SMP_REGION_MAX &&
                           runs[run - 2] * SMP_SLAB_SIZE == SMP_REGION_MAX)) {
      slab_t *g = chunk_take(1, false, &zero);
      if (g == NULL) {
        if (!chunk_grow(1, false)) break;
        continue;
      }
      uintptr_t at = chunk_base(g);
      if (prev != 0 && at != prev + SMP_SLAB_SIZE) run++;
      if (run < RUNS) runs[run]++;
      prev = at;
    }
    /* runs[run] is the one being taken when the loop stopped: whole runs
     * are runs[1] .. runs[run - 1]. */
    bool ok = run >= 3 && runs[1] * SMP_SLAB_SIZE >= 2 * (size_t)SMP_REGION_MIN;
    for (unsigned i = 2; i < run && ok; i++) {
      size_t want = runs[i - 1] * SMP_SLAB_SIZE * 2;
      ok = runs[i] * SMP_SLAB_SIZE == (want < SMP_REGION_MAX ? want : SMP_REGION_MAX);
    }
    CHECK(ok, "granules in address order: runs of %zu, %zu, %zu, %zu, %zu, %zu, %zu granules (%u whole), not a "
              "reservation's rest, then each twice the last, up to %zu bytes",
          runs[0], runs[1], runs[2], runs[3], runs[4], runs[5], runs[6], run > 0 ? run - 1 : 0,
          (size_t)SMP_REGION_MAX);
    fflush(stdout);
    _exit(failures != 0);
  }
  int status = -1;
  CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the reservations' sizes are wrong (above), or their child did not run");
  void *p = smp_malloc(64);
  size_t a = area_bytes(p);
  CHECK(a >= SMP_REGION_MIN, "a 64-byte block's chunk lies in an area of %zu bytes, not a reservation of %zu or more",
        a, (size_t)SMP_REGION_MIN);
  smp_free(p);
  if (options.hugepages == 0 || os_huge_size() == 0) {
    printf("note: no huge pages here: the dense reservation not checked\n");
    return 2;
  }
  /* The dense reservation is made with the sparse one: an area advised
   * for huge pages of SMP_REGION_MIN bytes or more, in a small heap. */
  f = fopen("/proc/self/smaps", "r");
  char line[512];
  unsigned long lo = 0, hi = 0;
  int found = 0;
  while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
    unsigned long l, h;
    if (sscanf(line, "%lx-%lx ", &l, &h) == 2) lo = l, hi = h;
    else if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg") != NULL) found = hi - lo >= SMP_REGION_MIN;
  }
  if (f != NULL) fclose(f);
  CHECK(found, "no area of %zu bytes or more advised for huge pages: the dense reservation was not made with the first",
        (size_t)SMP_REGION_MIN);
  return 3;
}

/* Run body in a forked child (a heap of its own; body may _exit(0) to
 * skip): did it exit 0, its checks passed? */
static bool in_child(void (*body)(void)) {
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    body();
    fflush(stdout);
    _exit(failures != 0);
  }
  int status = -1;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A purge in a huge-page chunk takes the free clean granules of the same
 * huge page along (chunk.c, huge_neighbours): the fault that made the huge
 * page made them resident, and the purge of its dirty granule splits it.
 * In a child (a heap of its own): the first granule of a fresh huge page,
 * written once; where its clean neighbour is then resident (the kernel gave
 * a huge page), a purge of the granule alone, aged, must leave no page of
 * the neighbour resident (without huge_neighbours all 16 stayed). */
static void huge_left_child(void) {
  size_t hp = os_huge_size(), page = os_page_size();
  unsigned per = (unsigned)(hp / SMP_SLAB_SIZE);
  slab_t *g = NULL;
  for (int i = 0; i < 4 * SMP_CHUNK_SLABS && g == NULL; i++) {
    bool zero;
    slab_t *t = chunk_take(1, true, &zero);
    if (t == NULL && (!chunk_grow(1, true) || (t = chunk_take(1, true, &zero)) == NULL)) break;
    chunk_t *cm = t->chunk;
    unsigned at = (unsigned)(t - cm->desc);
    if (cm->huge && zero && at % per == 0 && at + 1 < SMP_CHUNK_SLABS && (cm->free >> (at + 1) & 1) &&
        !(cm->dirty >> (at + 1) & 1))
      g = t;
  }
  if (g == NULL) {
    printf("note: no fresh huge page found: the purge of a huge page's clean granules not checked\n");
    _exit(0);
  }
  char *base = (char *)chunk_base(g), *next = base + SMP_SLAB_SIZE;
  base[0] = 1;
  size_t before = os_resident(next, SMP_SLAB_SIZE);
  if (before != SMP_SLAB_SIZE / page) {
    printf("note: no huge page given (%zu pages of the neighbour resident): not checked\n", before);
    _exit(0);
  }
  chunk_put(g, 1, os_now_ms());
  chunk_purge(0, os_now_ms() + 60000, 1); /* aged: not a trim, which takes every clean granule */
  size_t after = os_resident(next, SMP_SLAB_SIZE);
  CHECK(after == 0, "a purge in a huge page left its clean neighbour granule resident: %zu of %zu pages", after,
        before);
}
static unsigned long huge_left_checks(void) {
  size_t hp = os_huge_size();
  if (options.hugepages == 0 || hp <= SMP_SLAB_SIZE || hp > SMP_CHUNK_SIZE) {
    printf("note: no huge pages here: the purge of a huge page's clean granules not checked\n");
    return 0;
  }
  CHECK(in_child(huge_left_child), "the check of a huge page's clean granules failed (above), or its child did not run");
  return 1;
}

/* The threads' run caches (large.h).  Through free and malloc: a freed
 * run stays out of the pool (its head still a run's, its page-map entry
 * gone, so a second free is caught) and the thread's next request of its
 * length takes it back; smp_collect (malloc_trim) gives it to the pool.  Then one cache
 * directly: its limit (the longest runs give room), a miss with more than
 * half the limit cached (the longest goes), a miss longer than every
 * cached run (those next to free room go) and a flush (all go). */
static unsigned long run_cache_checks(void) {
  size_t g = SMP_SLAB_SIZE;
  char *p = smp_malloc(3 * g - 100);
  slab_t *run = pagemap_desc(pagemap_get(p));
  smp_free(p);
  CHECK(chunk_state(run) == RUN_CACHED && pagemap_get(p) == 0,
        "a freed run of 3 granules went to the pool (state %u), or kept its page-map entry", chunk_state(run));
  char *q = smp_malloc(3 * g - 200);
  CHECK(q == p, "the thread's next run of 3 granules is %p, not the one it freed (%p)", (void *)q, (void *)p);
  smp_free(q);
  smp_collect();
  CHECK(chunk_state(run) != RUN_CACHED, "smp_collect left a cached run out of the pool");

  large_runs_t rc = {.limit = 8};
  char *a = smp_malloc(3 * g), *b = smp_malloc(2 * g), *c = smp_malloc(4 * g), *big = smp_malloc(9 * g);
  slab_t *ra = pagemap_desc(pagemap_get(a)), *rb = pagemap_desc(pagemap_get(b)), *rcd = pagemap_desc(pagemap_get(c));
  bool put = large_runs_put(&rc, pagemap_get(a)) && large_runs_put(&rc, pagemap_get(b));
  CHECK(put && rc.granules == 5, "two runs of 3 and 2 granules: kept %d, %u granules cached", put, rc.granules);
  put = large_runs_put(&rc, pagemap_get(c)); /* 9 > 8: the 3 go */
  CHECK(put && rc.granules == 6 && chunk_state(ra) == G_FREE && chunk_state(rb) == RUN_CACHED,
        "past the limit: %u granules cached, the longest run's state %u", rc.granules, chunk_state(ra));
  CHECK(!large_runs_put(&rc, pagemap_get(big)) && pagemap_get(big) != 0, "a run longer than the limit was kept");
  char *b2 = large_runs_take(&rc, 2 * g - 1);
  CHECK(b2 == b && pagemap_get(b) != 0 && rc.granules == 4, "take: %p (freed %p), %u granules left", (void *)b2,
        (void *)b, rc.granules);
  CHECK(large_runs_take(&rc, 3 * g) == NULL && rc.granules == 4 && chunk_state(rcd) == RUN_CACHED,
        "a miss at half the limit gave a run back (%u granules left)", rc.granules);
  large_runs_put(&rc, pagemap_get(b));
  CHECK(large_runs_take(&rc, 3 * g) == NULL && rc.granules == 2 && chunk_state(rcd) == G_FREE,
        "a miss past half the limit: %u granules left, the longest run's state %u", rc.granules, chunk_state(rcd));
  rb->stamp = 12345; /* as if freed then: it goes to the pool aged from its free */
  CHECK(large_runs_take(&rc, 5 * g) == NULL && rc.granules == 0 && chunk_state(rb) == G_FREE &&
            rb[0].stamp == 12345 && rb[1].stamp == 12345,
        "a miss longer than every cached run left %u granules (the run after a free one), or gave it back "
        "stamped %u, not aged from its free", rc.granules, rb->stamp);
  c = smp_malloc(4 * g);
  rcd = pagemap_desc(pagemap_get(c));
  large_runs_put(&rc, pagemap_get(c));
  large_runs_flush(&rc);
  CHECK(rc.granules == 0 && chunk_state(rcd) == G_FREE, "a flush left %u granules", rc.granules);
  smp_free(big);
  smp_collect(); /* the checks after these want no run cached */
  return 12;
}

/* A slot's first slab of a class takes a clean granule (slab_new's first:
 * chunk_take_clean), a later one the best fit.  In a child, with the
 * sparse pool emptied and then holding two lone granules of one fresh
 * chunk: a dirty one (written and given back) below a clean one, so that
 * best fit (the lowest of equals) takes the dirty one. */
static void clean_first_child(void) {
  bool zero;
  while (chunk_take(1, false, &zero) != NULL) {
  }
  if (!chunk_grow(1, false)) {
    printf("note: no chunk could be mapped: the first slab's granule not checked\n");
    _exit(0);
  }
  slab_t *g[SMP_CHUNK_SLABS], *t;
  unsigned n = 0;
  while (n < SMP_CHUNK_SLABS && (t = chunk_take(1, false, &zero)) != NULL) g[n++] = t;
  CHECK(n == SMP_CHUNK_SLABS && g[0]->chunk == g[n - 1]->chunk, "a fresh chunk gave %u granules, not %u", n,
        (unsigned)SMP_CHUNK_SLABS);
  if (n != SMP_CHUNK_SLABS) return;
  slab_t *dirty = g[10], *clean = g[40];
  memset((void *)chunk_base(dirty), 1, SMP_SLAB_SIZE);
  chunk_put(dirty, 1, os_now_ms());
  chunk_put(clean, 1, os_now_ms());
  clean->chunk->dirty &= ~((uint64_t)1 << 40); /* never written: clean, as a purged granule */
  atomic_fetch_sub(&chunk_n_dirty, 1);
  slab_t *first = slab_new(1, 0, false, true), *later = slab_new(1, 0, false, false);
  CHECK(first == clean && first->untouched, "a slot's first slab took granule %d (untouched %d), not the clean one",
        first ? (int)(first - first->chunk->desc) : -1, first ? first->untouched : -1);
  CHECK(later == dirty, "a later slab did not take the lone dirty granule (best fit): %d",
        later ? (int)(later - later->chunk->desc) : -1);
}
static unsigned long clean_first_checks(void) {
  CHECK(in_child(clean_first_child), "the check of a first slab's granule failed (above), or its child did not run");
  return 3;
}

/* The arenas' purge goes from the top down (extent_purge): first fit packs
 * blocks at the bottom, where the next ones land.  In a child (an arena of
 * its own): blocks A, S and B of 8 MiB in a row, A and B written and
 * freed; a purge down to 128 dirty granules (one block's) returns B's
 * pages and keeps A's. */
static size_t resident_pages(void *p, size_t size) {
  static unsigned char vec[4096];
  size_t pages = size / os_page_size(), n = 0;
  if (pages > sizeof vec || mincore(p, size, vec) != 0) return SIZE_MAX;
  for (size_t i = 0; i < pages; i++) n += vec[i] & 1;
  return n;
}
static void extent_order_child(void) {
  size_t mib8 = (size_t)8 << 20;
  bool zero;
  extent_purge(0, os_now_ms(), 0); /* no other dirty granule (above B, it would go first) */
  unsigned char *a = extent_alloc(mib8, &zero), *sp = extent_alloc(mib8, &zero), *b = extent_alloc(mib8, &zero);
  if (a == NULL || sp == NULL || b == NULL) {
    printf("note: no arena could be made: the purge's order not checked\n");
    _exit(0);
  }
  CHECK(sp == a + mib8 && b == sp + mib8, "three blocks of 8 MiB are not neighbours, lowest first: %p %p %p",
        (void *)a, (void *)sp, (void *)b);
  memset(a, 1, mib8);
  memset(b, 1, mib8);
  extent_free(a, mib8);
  extent_free(b, mib8);
  size_t dirty = extent_dirty(), k = mib8 / SMP_SLAB_SIZE;
  extent_purge(dirty - k, os_now_ms(), 0);
  size_t pages = mib8 / os_page_size(), ra = resident_pages(a, mib8), rb = resident_pages(b, mib8);
  CHECK(ra == pages && rb == 0, "a purge of one block's granules: the low block keeps %zu of %zu pages, the high one %zu",
        ra, pages, rb);
  extent_free(sp, mib8);
}
static unsigned long extent_order_checks(void) {
  CHECK(in_child(extent_order_child), "the check of the arenas' purge order failed (above), or its child did not run");
  return 3;
}

/* Samples off (t_internal's default): malloc counts nothing, from the
 * thread's own row; on (tcache_sampling): malloc's row is the empty one,
 * and every malloc counts its bytes off in alloc_slow and still takes the
 * thread's own cached blocks. */
static unsigned long sampling_checks(void) {
  void *p = smp_malloc(100);
  smp_free(p);
  uint64_t left = tcache_tls.sample_left;
  for (int i = 0; i < 100; i++) smp_free(smp_malloc(100));
  CHECK(tcache_tls.sample_left == left && tcache_tls.bins == tcache_tls.self->bins,
        "samples off: malloc counted %lld bytes off, or its row is not the thread's",
        (long long)(left - tcache_tls.sample_left));
  tcache_set_sampling(true);
  CHECK(tcache_tls.bins == tcache_none_rows, "samples on: malloc's row is not the empty one");
  smp_free(smp_malloc(100)); /* the first counted malloc may start the count */
  left = tcache_tls.sample_left;
  p = smp_malloc(100);
  smp_free(p);
  void *q = smp_malloc(100);
  CHECK(q == p && left - tcache_tls.sample_left == 200,
        "samples on: %lld bytes counted off for two mallocs of 100, or the freed block %p did not come back (%p)",
        (long long)(left - tcache_tls.sample_left), p, q);
  smp_free(q);
  tcache_set_sampling(false);
  CHECK(tcache_tls.bins == tcache_tls.self->bins, "samples off again: malloc's row is not the thread's");
  return 4;
}

/* Where the kernel's mode is "always" (forced here: os_huge_always_set),
 * a sparse chunk and a block mapped alone are advised for small pages
 * ("nh"); where it is not, nothing is.  In a child: a heap of its own,
 * no dense chunk in a heap this small. */
static void thp_always_child(void) {
  os_huge_always_set(true);
  void *big = smp_malloc(SMP_EXTENT_MAX + (1u << 20)), *run[80]; /* past the arenas: mapped alone */
  for (int i = 0; i < 80; i++) run[i] = smp_malloc(60u << 10); /* a granule each: 5 MiB, a new chunk */
  int big_nh = vma_has(big, "nh"), run_nh = vma_has(run[79], "nh");
  os_huge_always_set(false);
  void *plain = smp_malloc(SMP_EXTENT_MAX + (1u << 20));
  int plain_nh = vma_has(plain, "nh");
  CHECK(big_nh == 1, "mode always: a block of 33 MiB mapped alone not advised for small pages (%d)", big_nh);
  CHECK(run_nh == 1, "mode always: a sparse chunk not advised for small pages (%d)", run_nh);
  CHECK(plain_nh == 0, "mode madvise: a block of 33 MiB advised for small pages, or not found (%d)", plain_nh);
}
static unsigned long thp_always_checks(void) {
  CHECK(in_child(thp_always_child), "the checks of the kernel's huge page mode failed (above), or their child did not run");
  return 4;
}

int main(void) {
  unsigned long checks = 0;
  /* In a child, while every cache is new (and the parent's classes stay
   * unused for the checks below): a thread of slot 0 (the first pair),
   * then, with two threads holding slots 0 and 1, one of slot 2 (the last
   * pair of four slots). */
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    pthread_t t, h[2];
    for (int round = 0; round < 2; round++) {
      if (round == 1) {
        pthread_barrier_init(&hold_ready, NULL, 3);
        pthread_barrier_init(&hold_go, NULL, 3);
        for (int i = 0; i < 2; i++)
          if (pthread_create(&h[i], NULL, hold_thread, NULL) != 0) _exit(2); /* would wait forever */
        pthread_barrier_wait(&hold_ready);
      }
      page_pages = SIZE_MAX;
      if (pthread_create(&t, NULL, page_thread, NULL) == 0) pthread_join(t, NULL);
      checks += 2;
      CHECK(page_pages == page_want, "a thread using the classes to 512 bytes touched %zu pages of its cache, "
            "not the %zu of its bins and header", page_pages, page_want);
      CHECK(page_last == (round == 1) && (!page_last || page_want == 1),
            "the thread of round %d: last pair %d, %zu pages", round, page_last, page_want);
      if (round == 1) {
        pthread_barrier_wait(&hold_go);
        for (int i = 0; i < 2; i++) pthread_join(h[i], NULL);
      }
    }
    grow_race();
    fflush(stdout);
    _exit(failures != 0);
  }
  int status = -1;
  checks++;
  CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the check of the caches' pages or of growing together failed (above), or its child did not run");
  checks += thp_always_checks();
  checks += huge_left_checks();
  checks += run_cache_checks();
  checks += sampling_checks();
  checks += clean_first_checks();
  checks += extent_order_checks();
  checks += region_checks();
  for (size_t n = 0; n <= SMP_SMALL_MAX; n++) {
    unsigned c = class_of(n);
    checks++;
    CHECK(c < SMP_NCLASS, "class_of(%zu) = %u out of range", n, c);
    if (c >= SMP_NCLASS) continue;
    CHECK(class_table[c].size >= n, "class_of(%zu): size %u too small", n, class_table[c].size);
    CHECK(c == 0 || class_table[c - 1].size < (n ? n : 1), "class_of(%zu) = %u not the smallest", n, c);
    if (n <= 1024) CHECK(bin_of_size[n] == bin_offset(c), "bin_of_size disagrees at %zu", n);
    /* Above 4 KiB a block's share of its slab is the least any class of
     * 64-byte multiples could give n: as many blocks as fit n rounded up. */
    if (n > 4096)
      CHECK(class_table[c].count == SMP_SLAB_SIZE / ((n + 63) & ~(size_t)63),
            "class_of(%zu): %u blocks a slab, room for %zu", n, class_table[c].count,
            SMP_SLAB_SIZE / ((n + 63) & ~(size_t)63));
    /* Two to a slab (over 21824 bytes), the classes are 4 KiB apart: a
     * block's last bytes lie on one of at most two pages. */
    if (n > SMP_SLAB_SIZE / 3)
      CHECK(class_table[c].size - n < 4096, "class_of(%zu): %u bytes, 4 KiB or more over", n,
            class_table[c].size);
  }
  for (unsigned c = 0; c < SMP_NCLASS; c++) {
    const class_info_t *ci = &class_table[c];
    uint32_t all = SMP_SLAB_SIZE / ci->size;
    CHECK(ci->count == all && ci->last == (all - 1) * ci->size, "blocks of class %u", c);
    CHECK(ci->size == 8 || ci->size % 16 == 0, "class %u (size %u) is not 16-aligned", c, ci->size);
    CHECK(ci->size <= 4096 || ci->size % 64 == 0, "class %u (size %u): a fitted class not 64-aligned", c,
          ci->size);
    CHECK((all + 63) / 64 <= SMP_BITMAP_WORDS, "bitmap room of class %u", c);
    const uint32_t past = class_mark(all * ci->size, ci->recip);
    for (uint32_t off = 0; off < SMP_SLAB_SIZE; off++) {
      uint32_t idx, mark = class_mark(off, ci->recip);
      if (off % ci->size == 0 && off / ci->size < all) {
        checks++;
        CHECK(off == 0 ? mark == 0 : mark > class_mark(off - ci->size, ci->recip),
              "class %u (size %u): the mark of block %u does not rise", c, ci->size, off / ci->size);
        CHECK(mark < past, "class %u: block %u's mark is not below the end's", c, off / ci->size);
      } else {
        checks++;
        CHECK(mark >= past, "class %u (size %u): offset %u's mark %u is below the end's %u", c,
              ci->size, off, mark, past);
      }
      bool want = off % ci->size == 0;
      bool got = class_block_index(off, ci, &idx);
      checks++;
      CHECK(want == got, "class %u (size %u): offset %u start=%d, test says %d", c, ci->size, off,
            want, got);
      CHECK(!want || idx == off / ci->size, "class %u: index of offset %u", c, off);
    }
  }
  for (size_t a = 16; a <= SMP_SMALL_MAX; a *= 2)
    for (size_t n = 0; n <= SMP_SMALL_MAX; n += 7) {
      unsigned c = class_aligned(n, a);
      checks++;
      CHECK(c < SMP_NCLASS && class_table[c].size % a == 0 && class_table[c].size >= n,
            "class_aligned(%zu, %zu) = %u", n, a, c);
    }
  /* slot_join picks a least-used slot.  (This thread may be counted in a
   * slot already: the checks compare with the counts as they are.) */
  slot_set_count(4);
  unsigned joined[4] = {0, 0, 0, 0};
  for (int step = 0; step < 40; step++) {
    unsigned least = ~0u, first = 0;
    for (unsigned i = 0; i < 4; i++)
      if (slot_threads_in(i) < least) least = slot_threads_in(i), first = i;
    if (step == 12) { /* two threads leave a slot, a third moves to the next */
      unsigned k = 0;
      for (unsigned i = 1; i < 4; i++)
        if (joined[i] > joined[k]) k = i; /* 12 joins: at least 3 here */
      slot_leave(k), slot_leave(k), slot_moved(k, (k + 1) % 4);
      joined[k] -= 3, joined[(k + 1) % 4]++;
      continue;
    }
    unsigned s = slot_join();
    checks += 2;
    CHECK(s < 4 && slot_threads_in(s) == least + 1, "step %d: slot_join gave slot %u (%u threads), not one of the least used (%u)",
          step, s, s < 4 ? slot_threads_in(s) - 1 : 0, least);
    CHECK(s == first, "step %d: slot_join gave slot %u, not the first of the least used (%u)", step, s, first);
    if (s < 4) joined[s]++;
  }
  for (unsigned i = 0; i < 4; i++)
    while (joined[i]-- > 0) slot_leave(i);
  /* The rows (this thread allocates first: slot_join then puts the
   * second thread on another slot). */
  void *main_block = smp_malloc(48);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, rows_thread, main_block) == 0, "pthread_create");
  pthread_join(t, NULL);
  CHECK(slab_rows == 4, "slab_rows %u, want 4 (SMPALLOC_SLOTS=4)", slab_rows);
  checks += row_checks + 1;
  static const size_t run_sizes[] = {48, 512, 1024, 4096, 16384, 32768};
  for (size_t i = 0; i < sizeof run_sizes / sizeof run_sizes[0]; i++) checks += give_runs(run_sizes[i]);
  void *falls = NULL;
  CHECK(pthread_create(&t, NULL, order_thread, NULL) == 0, "pthread_create");
  pthread_join(t, &falls);
  checks++;
  CHECK((long)(intptr_t)falls <= 1, "%ld of 150 mallocs of 400 B gave a lower address than the one before",
        (long)(intptr_t)falls);
  CHECK(pthread_create(&t, NULL, grow_thread, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  CHECK(pthread_create(&t, NULL, reuse_thread, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  checks += 2;
  CHECK(reused_limit >= 64, "the next thread's bin of 48 B has room for %ld blocks, not the exited thread's array",
        reused_limit);
  CHECK(reused_count == reused_limit / 2 - 1, "the next thread's first fill left %ld blocks in an array of %ld",
        reused_count, reused_limit);
  /* Bins grow to SMP_TCACHE_BYTES of blocks in a small heap, to
   * SMP_TCACHE_BIG_BYTES once it holds SMP_HUGE_HEAP granules and
   * SMP_TCACHE_BIG_PER_THREAD for each thread with a cache, and no more
   * while more threads share it.  (A class each time: a new thread takes
   * the exited one's arrays.) */
  long small = grown_limit(4096);
  CHECK(small == limit_want(4096, SMP_TCACHE_BYTES, 2), "small heap (%zu granules): a bin of 4 KiB grew to %ld blocks",
        chunk_active(), small);
  /* A fill that needs memory not resident: in a small heap the other bins
   * go back first, in a big one they stay. */
  struct defer_case flushed = {.keep = 2560, .fresh = 13056}, kept = {.keep = 2816, .fresh = 10880};
  CHECK(class_slabs_of(13056) == 0 && class_slabs_of(10880) == 0, "classes of 13056 B and 10880 B in use already");
  defer_case(&flushed);
  CHECK(flushed.dirty == 0 && flushed.before >= 2 && flushed.after == 0,
        "small heap (%zu granules, %zu dirty): a fresh slab left %ld of %ld cached blocks of 2560 B in their bin",
        chunk_active(), flushed.dirty, flushed.after, flushed.before);
  checks += 2;
  void *held[600];
  unsigned nheld = 0;
  while (nheld < 600 && chunk_active() < SMP_HUGE_HEAP + 3 * SMP_TCACHE_BIG_PER_THREAD / 2)
    held[nheld++] = smp_malloc(60 << 10); /* a granule each */
  long roomy = grown_limit(5120);
  CHECK(roomy == limit_want(5120, SMP_TCACHE_BIG_BYTES, SMP_TCACHE_BIG_MIN),
        "big heap (%zu granules): a bin of 5 KiB grew to %ld blocks", chunk_active(), roomy);
  defer_case(&kept);
  CHECK(kept.dirty == 0 && kept.before >= 2 && kept.after == kept.before,
        "big heap (%zu granules, %zu dirty): a fresh slab left %ld of %ld cached blocks of 2816 B in their bin",
        chunk_active(), kept.dirty, kept.after, kept.before);
  checks++;
  pthread_t idle[4];
  pthread_barrier_init(&idle_ready, NULL, 5);
  pthread_barrier_init(&idle_go, NULL, 5);
  for (int i = 0; i < 4; i++)
    if (pthread_create(&idle[i], NULL, idle_thread, NULL) != 0) {
      printf("FAIL %s:%d: pthread_create\n", __FILE__, __LINE__); /* main would wait at the barrier */
      return 1;
    }
  pthread_barrier_wait(&idle_ready);
  long crowded = grown_limit(6144); /* 6 threads: 6 x 128 granules > the heap */
  pthread_barrier_wait(&idle_go);
  for (int i = 0; i < 4; i++) pthread_join(idle[i], NULL);
  pthread_barrier_destroy(&idle_go);
  pthread_barrier_destroy(&idle_ready);
  CHECK(crowded == limit_want(6144, SMP_TCACHE_BYTES, 2),
        "big heap (%zu granules) over 6 threads: a bin of 6 KiB grew to %ld blocks", chunk_active(), crowded);
  while (nheld > 0) smp_free(held[--nheld]);
  checks += 3;
  /* Empty slabs back to the pool (slot_settle). */
  unsigned per = class_table[class_of(512)].count;
  CHECK(class_slabs_of(512) == 0 && class_slabs_of(768) == 0, "classes of 512 B and 768 B in use already");
  size_t left = slabs_after_round(512, 2 * per + per * 5 / 8);
  CHECK(left == 0, "512 B: %zu slabs left after a round freed newest first (the emptied current slab stayed)", left);
  left = slabs_after_round(768, 20);
  CHECK(left == 1, "768 B: %zu slabs left after 20 blocks came back (want the current slab, used for 15 KiB)",
        left);
  checks += 3;
  /* Blocks freed by a thread of another slot go home in parcels: a full
   * remote batch waits in the owner's inbox, not given back (the sender
   * took no lock), until a thread of that slot takes blocks; a sender
   * that finds SMP_INBOX_DEPTH parcels (or SMP_INBOX_BYTES) waiting and
   * the lock free gives them all back itself. */
  unsigned main_slot = tcache_tls.self->slot, other;
  size_t back = posted_back(SMP_REMOTE_BATCH, 96, &other);
  CHECK(other != main_slot, "the posting thread shares main's slot %u", main_slot);
  CHECK(back == 0, "%zu of %u blocks sent home to slot %u were given back by their sender", back,
        SMP_REMOTE_BATCH, main_slot);
  size_t waiting = class_in_use(96);
  smp_free(smp_malloc(3000)); /* a slot_take on main's slot: it drains its inbox */
  CHECK(waiting - class_in_use(96) == SMP_REMOTE_BATCH, "main's slot_take gave back %zu of the %u posted blocks",
        waiting - class_in_use(96), SMP_REMOTE_BATCH);
  back = posted_back((SMP_INBOX_DEPTH + 1) * SMP_REMOTE_BATCH, 96, &other);
  CHECK(back == (SMP_INBOX_DEPTH + 1) * SMP_REMOTE_BATCH,
        "a sender that found %u parcels waiting gave back %zu of %u blocks", SMP_INBOX_DEPTH, back,
        (SMP_INBOX_DEPTH + 1) * SMP_REMOTE_BATCH);
  size_t big = 2 * SMP_INBOX_BYTES / SMP_REMOTE_BATCH; /* a batch of twice the bytes an inbox holds */
  back = posted_back(SMP_REMOTE_BATCH, big, &other);
  CHECK(back == SMP_REMOTE_BATCH, "a batch of %zu-byte blocks (over %u bytes) waited in the inbox (%zu of %u back)",
        big, SMP_INBOX_BYTES, back, SMP_REMOTE_BATCH);
  unsigned a_slot = 0, b_slot = 0;
  size_t at_exit = 0;
  back = orphans_back(&a_slot, &b_slot, &at_exit);
  CHECK(at_exit == SMP_REMOTE_BATCH, "slot %u's last thread exited, %zu of the %u blocks posted to it came back",
        a_slot, at_exit, SMP_REMOTE_BATCH);
  CHECK(a_slot != b_slot && slot_threads_in(a_slot) == 0, "the orphans' threads shared slot %u (%u threads now)",
        a_slot, slot_threads_in(a_slot));
  CHECK(back == 2 * SMP_REMOTE_BATCH,
        "blocks sent to slot %u, which has no threads, or posted there before, were left waiting (%zu of %u back)",
        a_slot, back, 2 * SMP_REMOTE_BATCH);
  unsigned s3[3] = {0, 0, 0};
  size_t collected = 0;
  back = mixed_back(s3, &collected);
  CHECK(s3[0] != s3[1] && s3[1] != s3[2] && s3[0] != s3[2], "the mixed batch's threads share slots (%u %u %u)", s3[0],
        s3[1], s3[2]);
  CHECK(back == 0, "a batch of slots %u's and %u's blocks: %zu of %u given back by their sender, not posted", s3[0],
        s3[1], back, SMP_REMOTE_BATCH);
  CHECK(collected == 0, "%zu blocks of 96 B still out of their slabs after smp_collect (the inboxes not drained?)",
        collected);
  checks += 11;
  printf("internal: %lu checks, %lu failed\n", checks, failures);
  return failures != 0;
}
