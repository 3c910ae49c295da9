/*
 * prof.c - the sampled heap profiler: the countdown, the decision at each
 * firing, the pool of small profiled blocks, the records of live samples
 * and the table of stacks (prof.h).  prof_out.c writes what they hold.
 *
 * One reservation, made at the first sample, read-only (no memory, no
 * commit charge) but for what is made writable, each section a step ahead
 * of its use (sec_grow, outside the lock): mlockall faults in only that
 * (t_mem_mlock), not the whole 300 MiB.  Its sections:
 *   head      the free slots' bitmap and the two hash tables' chains,
 *             interleaved (writable from the start): a process that takes
 *             a few samples writes its first page only
 *   records   a live sample each, found by address (rec_bucket chains);
 *             dense, reused last-freed first, so they touch few pages
 *   stacks    an arena of deduplicated stacks (stack_bucket chains by
 *             hash), each with its estimated totals; never freed
 *   pool      POOL_SLOTS slots of SMP_SMALL_MAX bytes, a profiled small
 *             block at the start of one (its pages given back at free,
 *             but for the last POOL_KEEP slots freed: pool_kept)
 * Invariants, under prof_lock: sum over records of weight = sum over
 * stacks of live_n; a pool slot is free (its bit set in pool_free, or on
 * pool_kept, or past pool_next) or holds the block of exactly one record;
 * a slot whose bit is set has no page written.
 */
#include <string.h>

#include "guard.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "prof.h"
#include "prof_math.h"
#include "reentry.h"
#include "sizeclass.h"
#include "tcache.h"
#include "stack.h"

#define SLOT SMP_SMALL_MAX
#define POOL_SLOTS 8192u
#define REC_MAX (1u << 18)
/* Each hash table starts at BUCKETS_MIN chains and doubles while it holds
 * more than 2 entries a chain on average, up to BUCKETS_MAX.  The two
 * tables' chain i lie side by side (chain[i].rec, chain[i].stack), after
 * the 1 KiB bitmap of free slots: a process that takes a few samples
 * writes one page of the head (256 chains each: 3 KiB), not three (two
 * arrays of chains and a list of free slots, a page each). */
#define BUCKETS_MIN 256u
#define BUCKETS_MAX 65536u
#define ARENA_BYTES ((size_t)32 << 20)

typedef struct {
  uintptr_t at;
  size_t size;
  double weight;        /* 1/P: the blocks this sample stands for */
  uint32_t stack, next; /* next: the bucket's chain, or the free list */
} prof_rec_t;

typedef struct {
  uint32_t next, depth; /* next: the bucket's chain (a stack id) */
  uint64_t hash;
  double live_n, live_b, alloc_n, alloc_b, peak_n, peak_b;
  uintptr_t pc[];
} prof_stack_t;

#define SEC_ALIGN 65536 /* sections start on a page (at most 64 KiB: init.c) */
typedef struct {
  uint64_t pool_free[POOL_SLOTS / 64]; /* bit i: slot i free, its pages given back */
  struct {
    uint32_t rec, stack; /* the first record / stack of each table's chain i */
  } chain[BUCKETS_MAX];
  _Alignas(SEC_ALIGN) prof_rec_t rec[REC_MAX];
  _Alignas(SEC_ALIGN) char arena[ARENA_BYTES];
  _Alignas(SEC_ALIGN) char pool[(size_t)POOL_SLOTS * SLOT];
} prof_region_t;

/* The sections made writable a step at a time: sec_cap[s] bytes of each
 * are, a multiple of its step (only sec_grow raises it). */
enum { SEC_REC, SEC_ARENA, SEC_POOL, NSEC };
static const struct {
  size_t off, bytes, step;
} sec[NSEC] = {
    {offsetof(prof_region_t, rec), sizeof(prof_rec_t) * REC_MAX, 64 << 10},
    {offsetof(prof_region_t, arena), ARENA_BYTES, 64 << 10},
    {offsetof(prof_region_t, pool), (size_t)POOL_SLOTS * SLOT, 4 * SLOT},
};
static _Atomic size_t sec_cap[NSEC];
static _Atomic bool grow_due, growing;

static lock_t prof_lock;
static _Atomic int region_state; /* 0 none, 1 being made, 2 made, 3 failed */
static prof_region_t *region;
static uint32_t pool_next, pool_nfree, rec_next = 1, rec_free, rec_live;
static uint32_t rec_nb = BUCKETS_MIN, stack_nb = BUCKETS_MIN; /* chains in use: powers of 2 */
/* Freed slots whose pages are kept (the last POOL_KEEP, reused first): a
 * program that frees its samples does not fault and decommit a page per
 * sample (glibc-simple: 764 faults against 407 with sampling off). */
#define POOL_KEEP 8u
static uint32_t pool_kept[POOL_KEEP], pool_nkept;
static size_t arena_used = 64, nstacks; /* a stack's id is its offset / 8: never 0 */
static double live_total, peak_total;
static _Atomic size_t n_dropped, pool_bytes; /* pool_bytes: its live blocks' usable sizes */
_Atomic size_t prof_large_live;

/* The options, as prof_init read them. */
static _Atomic bool ready;
static _Atomic bool stacks_ok; /* prof_allow_stacks was called */
static size_t prof_mean, guard_every;
static double countdown_mean; /* of the countdown: min(prof_mean, 16 * guard_every) */
static bool fire_always;      /* every allocation fires (a mean of 1) */

typedef struct {
  uint64_t rng;
  bool started, busy; /* busy: taking a sample or freeing one (no sampling, no lock) */
} prof_tls_t;
static __thread prof_tls_t me;

/* ---- the thread's random numbers --------------------------------------- */

/* Uniform in (0, 1] (xorshift64*). */
static double uniform(void) {
  me.rng ^= me.rng >> 12;
  me.rng ^= me.rng << 25;
  me.rng ^= me.rng >> 27;
  return (double)(((me.rng * 0x2545F4914F6CDD1Dull) >> 11) + 1) * 0x1p-53;
}

/* ---- the countdown ------------------------------------------------------- */

void prof_init(void) {
  size_t m = options.prof_sample, g = options.guard_sample;
#ifdef SMP_VALGRIND
  m = g = 0; /* memcheck would see the pools' blocks as unknown memory */
#endif
  prof_mean = m;
  guard_every = g;
  fire_always = m == 1 || g == 1;
  double gm = 16.0 * (double)g;
  countdown_mean = m == 0 ? gm : g == 0 || (double)m < gm ? (double)m : gm;
  tcache_set_sampling(m != 0 || g != 0); /* every malloc counts down, in its slow path */
  atomic_store_explicit(&ready, true, memory_order_release);
}

void prof_allow_stacks(void) {
  unwind_init();
  atomic_store_explicit(&stacks_ok, true, memory_order_release);
}

static void restart(void) {
  int64_t left = INT64_MAX;
  if (fire_always) left = 0;
  else if (countdown_mean > 0) {
    double d = countdown_mean * neg_log(uniform());
    left = d < 0x1p62 ? (int64_t)d : (int64_t)1 << 62;
  }
  tcache_tls.sample_left = (uint64_t)left;
}

/* ---- the region, the pool, the tables ----------------------------------- */

/* Bytes of section s in use.  prof_lock held. */
static size_t sec_used(int s) {
  return s == SEC_REC ? rec_next * sizeof(prof_rec_t) : s == SEC_ARENA ? arena_used : pool_next * (size_t)SLOT;
}
static size_t sec_room(int s) { return atomic_load_explicit(&sec_cap[s], memory_order_acquire); }
/* Less than half a step of section s left writable: sec_grow is due.
 * prof_lock held. */
static void sec_note(void) {
  for (int s = 0; s < NSEC; s++)
    if (sec_room(s) < sec[s].bytes && sec_room(s) < sec_used(s) + sec[s].step / 2)
      atomic_store_explicit(&grow_due, true, memory_order_relaxed);
}

/* Make each section writable to a step past its use (one thread at a
 * time; mprotect outside prof_lock).  region made, prof_lock not held. */
static void sec_grow(void) {
  if (atomic_exchange_explicit(&growing, true, memory_order_acquire)) return;
  atomic_store_explicit(&grow_due, false, memory_order_relaxed);
  size_t used[NSEC];
  lock_take(&prof_lock);
  for (int s = 0; s < NSEC; s++) used[s] = sec_used(s);
  lock_drop(&prof_lock);
  for (int s = 0; s < NSEC; s++) {
    /* used + a step, rounded up to a step: rounded down, a section whose
     * use cannot reach its end exactly (the stacks' arena) never grew */
    size_t cap = sec_room(s), want = (used[s] + 2 * sec[s].step - 1) / sec[s].step * sec[s].step;
    if (want > sec[s].bytes) want = sec[s].bytes;
    if (want > cap && cap < used[s] + sec[s].step / 2 &&
        os_protect((char *)region + sec[s].off + cap, want - cap, true))
      atomic_store_explicit(&sec_cap[s], want, memory_order_release);
  }
  atomic_store_explicit(&growing, false, memory_order_release);
}

static void sec_grow_if_due(void) {
  if (unlikely(atomic_load_explicit(&grow_due, memory_order_relaxed))) sec_grow();
}

static bool region_make(void) {
  int s = atomic_load_explicit(&region_state, memory_order_acquire);
  if (likely(s == 2)) return true;
  if (s != 0 || !atomic_compare_exchange_strong(&region_state, &s, 1)) return false;
  size_t bytes = sizeof(prof_region_t);
  char *raw = os_reserve_readonly(bytes + SEC_ALIGN); /* pool slots aligned to SLOT */
  prof_region_t *r = raw ? (prof_region_t *)(((uintptr_t)raw + SEC_ALIGN - 1) & ~(uintptr_t)(SEC_ALIGN - 1)) : NULL;
  if (r != NULL && !os_protect(r, sec[0].off, true)) r = NULL; /* the head (the reservation stays) */
  if (r != NULL) os_nohugepage(r, bytes);
  region = r;
  if (r != NULL) sec_grow();
  atomic_store_explicit(&region_state, r ? 2 : 3, memory_order_release);
  return r != NULL;
}

/* The region, or NULL before it is made: read through region_state
 * (acquire), which region_make stores after it (release), wherever
 * prof_fired may be making it in another thread. */
static prof_region_t *region_made(void) {
  return atomic_load_explicit(&region_state, memory_order_acquire) == 2 ? region : NULL;
}

static bool in_pool(const void *p) {
  prof_region_t *r = region_made();
  return r != NULL && (uintptr_t)p - (uintptr_t)r->pool < sizeof r->pool;
}

static uint32_t rec_hash(uintptr_t at) { return (uint32_t)((at >> 4) * 0x9E3779B97F4A7C15ull >> 32) & (rec_nb - 1); }

static prof_stack_t *stack_at(uint32_t id) { return (prof_stack_t *)(region->arena + (size_t)id * 8); }

/* Double the stacks' chains and deal every stack out again (the arena in
 * order).  prof_lock held. */
static void stack_rehash(void) {
  stack_nb *= 2;
  for (uint32_t i = 0; i < stack_nb; i++) region->chain[i].stack = 0;
  for (size_t off = 64; off < arena_used;) {
    prof_stack_t *s = (prof_stack_t *)(region->arena + off);
    uint32_t *b = &region->chain[s->hash & (stack_nb - 1)].stack;
    s->next = *b;
    *b = (uint32_t)(off / 8);
    off += sizeof *s + s->depth * sizeof(uintptr_t);
  }
}

/* Double the records' chains and deal the live records out again.
 * prof_lock held. */
static void rec_rehash(void) {
  uint32_t old = rec_nb;
  rec_nb *= 2;
  for (uint32_t i = old; i < rec_nb; i++) region->chain[i].rec = 0;
  for (uint32_t i = 0; i < old; i++) {
    uint32_t r = region->chain[i].rec;
    region->chain[i].rec = 0;
    while (r != 0) {
      uint32_t next = region->rec[r].next, *b = &region->chain[rec_hash(region->rec[r].at)].rec;
      region->rec[r].next = *b;
      *b = r;
      r = next;
    }
  }
}

/* The id of the stack pc[0..depth), added if new; 0 if the arena is full.
 * prof_lock held. */
static uint32_t stack_intern(const uintptr_t *pc, unsigned depth) {
  uint64_t h = 0xcbf29ce484222325ull ^ depth;
  for (unsigned i = 0; i < depth; i++) h = (h ^ pc[i]) * 0x100000001b3ull;
  uint32_t *b = &region->chain[h & (stack_nb - 1)].stack;
  for (uint32_t id = *b; id != 0; id = stack_at(id)->next) {
    prof_stack_t *s = stack_at(id);
    if (s->hash == h && s->depth == depth && memcmp(s->pc, pc, depth * sizeof *pc) == 0) return id;
  }
  size_t need = sizeof(prof_stack_t) + depth * sizeof *pc;
  if (arena_used + need > sec_room(SEC_ARENA)) return 0;
  uint32_t id = (uint32_t)(arena_used / 8);
  prof_stack_t *s = stack_at(id);
  arena_used += need;
  nstacks++;
  s->depth = depth;
  s->hash = h;
  memcpy(s->pc, pc, depth * sizeof *pc);
  s->next = *b;
  *b = id;
  if (nstacks > 2 * (size_t)stack_nb && stack_nb < BUCKETS_MAX) stack_rehash();
  return id;
}

/* Count a sample's weight w of n bytes into its stack, live (sign 1) or
 * freed (-1); a new one counts as allocated too.  prof_lock held. */
static void stack_count(uint32_t id, size_t n, double w, int sign) {
  prof_stack_t *s = stack_at(id);
  s->live_n += sign * w;
  s->live_b += sign * w * (double)n;
  live_total += sign * w * (double)n;
  if (sign < 0) return;
  s->alloc_n += w;
  s->alloc_b += w * (double)n;
  if (!options.prof_peak || live_total <= peak_total + peak_total / 64) return;
  /* A new peak, by more than a 64th: the totals of every stack are copied
   * as the peak profile. */
  peak_total = live_total;
  for (size_t off = 64; off < arena_used;) {
    prof_stack_t *t = (prof_stack_t *)(region->arena + off);
    t->peak_n = t->live_n;
    t->peak_b = t->live_b;
    off += sizeof *t + t->depth * sizeof(uintptr_t);
  }
}

/* Record the block p of n bytes; false if the table is full.  prof_lock
 * held. */
static bool rec_add(void *p, size_t n, double w, uint32_t stack) {
  uint32_t r = rec_free;
  if (r != 0) rec_free = region->rec[r].next;
  else if ((rec_next + 1) * sizeof(prof_rec_t) <= sec_room(SEC_REC)) r = rec_next++;
  else return false;
  prof_rec_t *rec = &region->rec[r];
  uint32_t *b = &region->chain[rec_hash((uintptr_t)p)].rec;
  *rec = (prof_rec_t){.at = (uintptr_t)p, .size = n, .weight = w, .stack = stack, .next = *b};
  *b = r;
  stack_count(stack, n, w, 1);
  if (++rec_live > 2 * rec_nb && rec_nb < BUCKETS_MAX) rec_rehash();
  return true;
}

/* Take p's record off (its size into *size); false if it has none.
 * prof_lock held. */
static bool rec_remove(const void *p, size_t *size) {
  for (uint32_t *link = &region->chain[rec_hash((uintptr_t)p)].rec; *link != 0;
       link = &region->rec[*link].next) {
    prof_rec_t *rec = &region->rec[*link];
    if (rec->at != (uintptr_t)p) continue;
    uint32_t r = *link;
    *link = rec->next;
    stack_count(rec->stack, rec->size, rec->weight, -1);
    *size = rec->size;
    rec->next = rec_free;
    rec_free = r;
    rec_live--;
    return true;
  }
  return false;
}

/* The lowest free slot of the bitmap, taken off it (lowest first: the
 * slots in use stay dense).  pool_nfree > 0, prof_lock held. */
static uint32_t pool_free_take(void) {
  uint32_t w = 0;
  while (region->pool_free[w] == 0) w++;
  uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(region->pool_free[w]);
  region->pool_free[w] &= region->pool_free[w] - 1;
  pool_nfree--;
  return i;
}

/* A free slot: a kept one (its pages still written: *fresh false), else
 * a clean one.  prof_lock held. */
static void *pool_take(bool *fresh) {
  uint32_t i;
  *fresh = pool_nkept == 0;
  if (pool_nkept > 0) i = pool_kept[--pool_nkept];
  else if (pool_nfree > 0) i = pool_free_take();
  else if ((pool_next + 1) * (size_t)SLOT <= sec_room(SEC_POOL)) i = pool_next++;
  else return NULL;
  return region->pool + (size_t)i * SLOT;
}

/* Slot i back on its list (fresh: its pages given back).  prof_lock held. */
static void pool_put(uint32_t i, bool fresh) {
  if (fresh) region->pool_free[i / 64] |= (uint64_t)1 << (i % 64), pool_nfree++;
  else pool_kept[pool_nkept++] = i;
}
static uint32_t pool_index(const void *p) { return (uint32_t)(((const char *)p - region->pool) / SLOT); }

/* A pool block's usable size: its size class's, as if it were in a slab
 * (a program sees the same size for the same request). */
static size_t pool_usable(size_t n) { return class_table[class_of(n)].size; }

/* ---- the firing ---------------------------------------------------------- */

static void dropped(void) { atomic_fetch_add_explicit(&n_dropped, 1, memory_order_relaxed); }

void *prof_fired(size_t n, size_t align, uintptr_t cfa, prof_ticket_t *t) {
  t->stack = 0;
  t->fresh = true;
  if (unlikely(!atomic_load_explicit(&ready, memory_order_acquire))) {
    tcache_tls.sample_left = 0; /* until the options are read */
    return NULL;
  }
  bool first = !me.started;
  if (first) {
    me.rng = os_random() ^ ((uintptr_t)&me * 0x9E3779B97F4A7C15ull) ^ (uint64_t)os_gettid() << 32;
    if (me.rng == 0) me.rng = 1;
    me.started = true;
  }
  restart();
  if ((first && !fire_always) || me.busy || tcache_reentered() ||
      !atomic_load_explicit(&stacks_ok, memory_order_acquire))
    return NULL;
  /* P(this allocation fired) = 1 - exp(-n/countdown_mean); each feature
   * takes it with the ratio of its own probability to that one. */
  double fired = fire_always ? 1 : one_minus_exp_neg((double)n / countdown_mean);
  double want = prof_mean == 0 ? 0 : prof_mean == 1 ? 1 : one_minus_exp_neg((double)n / (double)prof_mean);
  bool profile = want > 0 && (want >= fired || uniform() * fired < want);
  bool guard = guard_every != 0 && n <= os_page_size() && align <= os_page_size() &&
               (guard_every == 1 || uniform() * fired * (double)guard_every < 1);
  if (!profile && !guard) return NULL;
  me.busy = true;
  uintptr_t pc[UNWIND_MAX];
  unsigned depth = unwind_stack(pc, UNWIND_MAX, cfa);
  void *p = guard ? guard_alloc(n, align, pc, depth) : NULL;
  if (profile && (depth == 0 || !region_make())) profile = false, dropped();
  if (profile) {
    lock_take(&prof_lock);
    uint32_t id = stack_intern(pc, depth);
    bool small = n <= SMP_SMALL_MAX && align <= SLOT, fresh = true;
    void *q = p == NULL && small ? pool_take(&fresh) : p;
    if (id == 0 || (small && q == NULL)) {
      if (q != NULL && q != p) pool_put(pool_index(q), fresh); /* the slot back */
      dropped();
    } else if (q == NULL) { /* large: the caller allocates it */
      t->stack = id;
      t->weight = 1 / want;
    } else if (rec_add(q, n, 1 / want, id)) {
      if (p == NULL) atomic_fetch_add_explicit(&pool_bytes, pool_usable(n), memory_order_relaxed);
      p = q;
      t->fresh = fresh;
    } else {
      if (q != p) pool_put(pool_index(q), fresh);
      dropped();
    }
    sec_note();
    lock_drop(&prof_lock);
    sec_grow_if_due();
  }
  me.busy = false;
  return p;
}

void prof_keep(void *p, size_t n, const prof_ticket_t *t) {
  me.busy = true;
  lock_take(&prof_lock);
  bool ok = rec_add(p, n, t->weight, t->stack);
  sec_note();
  lock_drop(&prof_lock);
  sec_grow_if_due();
  me.busy = false;
  if (ok) atomic_fetch_add_explicit(&prof_large_live, 1, memory_order_relaxed);
  else dropped();
}

void prof_forget(void *p) {
  if (region_made() == NULL || me.busy) return;
  size_t size;
  me.busy = true;
  lock_take(&prof_lock);
  bool had = rec_remove(p, &size);
  lock_drop(&prof_lock);
  me.busy = false;
  if (had && size > SMP_SMALL_MAX && !guard_owns(p)) atomic_fetch_sub_explicit(&prof_large_live, 1, memory_order_relaxed);
}

bool prof_free(void *p, uintptr_t cfa) {
  bool guarded = guard_owns(p);
  if (!guarded && !in_pool(p)) return false;
  if (me.busy) { /* a signal handler's free while this thread samples: later */
    reentry_defer(p);
    return true;
  }
  me.busy = true;
  size_t size = 0;
  lock_take(&prof_lock);
  bool had = region_made() != NULL && rec_remove(p, &size);
  lock_drop(&prof_lock);
  if (guarded) {
    uintptr_t pc[UNWIND_MAX / 2];
    unsigned depth = unwind_stack(pc, UNWIND_MAX / 2, cfa);
    me.busy = false;
    guard_free(p, pc, depth);
    return true;
  }
  me.busy = false;
  uintptr_t off = (uintptr_t)((char *)p - region->pool);
  SMP_CHECK(off % SLOT == 0, "free", "invalid pointer (inside a sampled block, not its start)", p);
  SMP_CHECK(had, "free", "double free (the sampled block is free already) of", p);
  atomic_fetch_sub_explicit(&pool_bytes, pool_usable(size), memory_order_relaxed);
  me.busy = true;
  lock_take(&prof_lock);
  bool keep = pool_nkept < POOL_KEEP;
  if (keep) pool_put((uint32_t)(off / SLOT), false);
  lock_drop(&prof_lock);
  if (!keep) { /* the whole slot: a kept slot may have held a bigger block */
    os_decommit(p, SLOT);
    lock_take(&prof_lock);
    pool_put((uint32_t)(off / SLOT), true);
    lock_drop(&prof_lock);
  }
  me.busy = false;
  return true;
}

size_t prof_size(const void *p) {
  if (guard_owns(p)) return guard_size(p);
  if (!in_pool(p)) return 0;
  size_t size = 0;
  me.busy = true;
  lock_take(&prof_lock);
  for (uint32_t r = region->chain[rec_hash((uintptr_t)p)].rec; r != 0; r = region->rec[r].next)
    if (region->rec[r].at == (uintptr_t)p) size = pool_usable(region->rec[r].size);
  lock_drop(&prof_lock);
  me.busy = false;
  return size;
}

/* ---- for prof_out.c ------------------------------------------------------ */

void prof_each(void (*fn)(const prof_site_t *, void *), void *arg, bool peak) {
  if (region_made() == NULL) return;
  me.busy = true;
  lock_take(&prof_lock);
  for (size_t off = 64; off < arena_used;) {
    const prof_stack_t *s = (const prof_stack_t *)(region->arena + off);
    prof_site_t site = {.live_n = peak ? s->peak_n : s->live_n, .live_b = peak ? s->peak_b : s->live_b,
                        .alloc_n = s->alloc_n, .alloc_b = s->alloc_b, .pc = s->pc, .depth = s->depth};
    fn(&site, arg);
    off += sizeof *s + s->depth * sizeof(uintptr_t);
  }
  lock_drop(&prof_lock);
  me.busy = false;
}

size_t prof_nstacks(void) { return nstacks; }
size_t prof_pool_bytes(void) { return atomic_load_explicit(&pool_bytes, memory_order_relaxed); }
size_t prof_dropped(void) { return atomic_load_explicit(&n_dropped, memory_order_relaxed); }

void prof_fork_prepare(void) {
  lock_take(&prof_lock);
  guard_fork_prepare();
}
void prof_fork_parent(void) {
  guard_fork_parent();
  lock_drop(&prof_lock);
}
void prof_fork_child(void) {
  guard_fork_child();
  atomic_store(&growing, false); /* a grower in another thread is gone */
  lock_reset(&prof_lock);
}
