/*
 * slot.c - slots: SmpAllocator's unit of sharing.
 *
 * There are min(CPUs, SMP_MAX_SLOTS) slots.  Each holds a lock and, per size
 * class, the slab it is allocating from and the slabs it owns that have free
 * blocks.  A thread remembers a slot index (thread-local; a new thread's
 * first call gives it the next slot round-robin, see tcache.c); when that
 * slot's lock is taken it moves on with try-lock to the next one and
 * remembers where it succeeded, so threads spread over the slots by
 * themselves.  After SMP_SPIN_ROUNDS full rounds of failed try-locks a
 * thread sleeps on a slot's lock (futex): more threads than slots cost
 * waiting, not CPU.
 *
 * Unlike SmpAllocator, a freed block goes back to its own slab, under the
 * lock of the slot that owns the slab.  That is what lets an empty slab be
 * seen at once (its used count reaches 0) and returned to the kernel, and
 * what keeps a producer/consumer pair bounded: the consumer's frees land
 * where the producer allocates.  Thread caches (tcache.c) batch both ways,
 * so a slot lock is taken once per batch, not once per call; blocks of
 * another slot's slabs travel in the thread's remote batch.
 */
#include <pthread.h>

#include "internal.h"
#include "options.h"

slot_t smp_slots[SMP_MAX_SLOTS];
_Atomic unsigned smp_nslots = 1;  /* 1 until slot_init(): early calls all use slot 0 */
_Atomic unsigned smp_slots_hi = 1;
__thread unsigned smp_tl_slot;

/* Polls before a contended lock sleeps: SMP_LOCK_SPIN when the process may
 * run on more than one CPU, else 0 (set with the slot count). */
static _Atomic unsigned lock_spin;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

void mutex_lock_wait(smp_mutex_t *l) {
  for (unsigned i = atomic_load_explicit(&lock_spin, memory_order_relaxed); i > 0; i--) {
    cpu_relax();
    if (atomic_load_explicit(l, memory_order_relaxed) == 0 && mutex_trylock(l)) return;
  }
  while (atomic_exchange_explicit(l, 2, memory_order_acquire) != 0) os_futex_wait(l, 2);
}

static bool slot_trylock(slot_t *s) { return mutex_trylock(&s->lock); }
/* Sleep until the lock is ours. */
static void slot_lock_blocking(slot_t *s) { mutex_lock(&s->lock); }

void slot_wake(slot_t *s) { os_futex_wake(&s->lock, 1); }

slot_t *slot_lock_slow(unsigned i) {
  unsigned n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  atomic_fetch_add_explicit(&smp_slots[i].contended, 1, memory_order_relaxed);
  for (unsigned tries = 0; tries < SMP_SPIN_ROUNDS * n; tries++) {
    i = i + 1 < n ? i + 1 : 0;
    if (slot_trylock(&smp_slots[i])) {
      smp_tl_slot = i;
      return &smp_slots[i];
    }
  }
  /* Every slot is busy: more threads want one than there are slots, or the
   * count is stale. */
  slot_recount();
  n = atomic_load_explicit(&smp_nslots, memory_order_relaxed);
  if (i >= n) i = 0;
  stats_lock_wait();
  slot_lock_blocking(&smp_slots[i]);
  smp_tl_slot = i;
  return &smp_slots[i];
}

static _Atomic int slot_count_known;

/* Set the slot count from the option or the CPU count.  The count may
 * change while threads run: a thread holding an index past it keeps using
 * that slot (all SMP_MAX_SLOTS exist) until contention moves it. */
static void slot_set_count(void) {
  unsigned cpus = os_cpu_count(), n = smp_opt.slots ? smp_opt.slots : cpus;
  if (n > SMP_MAX_SLOTS) n = SMP_MAX_SLOTS;
  if (n < 1) n = 1;
  /* Raise the high mark before the count, so no slot in use is ever above
   * it (a fork handler that reads it locks every slot a thread may hold). */
  unsigned hi = atomic_load_explicit(&smp_slots_hi, memory_order_relaxed);
  while (hi < n && !atomic_compare_exchange_weak_explicit(&smp_slots_hi, &hi, n,
                                                          memory_order_release,
                                                          memory_order_relaxed)) {
  }
  atomic_store_explicit(&smp_nslots, n, memory_order_release);
  atomic_store_explicit(&lock_spin, cpus > 1 ? SMP_LOCK_SPIN : 0, memory_order_relaxed);
  atomic_store_explicit(&slot_count_known, 1, memory_order_release);
}

void slot_init(void) {
  if (!atomic_load_explicit(&slot_count_known, memory_order_acquire)) slot_set_count();
}

/* The CPU count can change under a running process (taskset, a cgroup
 * limit): look again at most once a second, from slow paths only, with no
 * lock held. */
void slot_recount(void) {
  static _Atomic uint32_t last;
  uint32_t now = os_now_ms(), then = atomic_load_explicit(&last, memory_order_relaxed);
  if (smp_opt.slots || (uint32_t)(now - then) < 1000u) return;
  if (atomic_compare_exchange_strong_explicit(&last, &then, now, memory_order_relaxed,
                                              memory_order_relaxed))
    slot_set_count();
}

/* ---- checked mode: canaries in free blocks ------------------------------ */

SMP_COLD static void slot_corrupt(const void *p) {
  os_fatal("malloc", "a freed block was written after its free (use after free) at", p);
}
static inline void canary_set(void *p) { *(uintptr_t *)p = smp_canary ^ (uintptr_t)p; }
static inline void canary_check(const void *p) {
  if (unlikely(*(const uintptr_t *)p != (smp_canary ^ (uintptr_t)p))) slot_corrupt(p);
}

/* ---- taking blocks ------------------------------------------------------ */

static void partial_push(bin_t *b, slab_t *sl) {
  sl->state = SLAB_PARTIAL;
  sl->prev = NULL;
  sl->next = b->partial;
  if (b->partial) b->partial->prev = sl;
  b->partial = sl;
}

static void partial_unlink(bin_t *b, slab_t *sl) {
  if (sl->prev) sl->prev->next = sl->next; else b->partial = sl->next;
  if (sl->next) sl->next->prev = sl->prev;
  sl->next = sl->prev = NULL;
}

/* Up to want blocks from the held slot s, into out[].  Sets *populate
 * to a slab worth faulting in at once (a busy bin's fresh slab).  Returns
 * the count; fewer than want means no slab is at hand without mapping. */
static unsigned slot_take_locked(slot_t *s, unsigned cls, unsigned want, void **out,
                                 slab_t **populate) {
  bin_t *b = &s->bins[cls];
  uint32_t size = smp_class[cls].size, count = smp_class[cls].count, first = smp_class[cls].first;
  bool checked = smp_opt.checked;
  unsigned n = 0;
  while (n < want) {
    slab_t *sl = b->cur;
    if (sl == NULL) {
      if ((sl = b->partial) != NULL) {
        partial_unlink(b, sl);
        sl->state = SLAB_CUR;
      } else {
        sl = slab_get(cls, (unsigned)(s - smp_slots));
        if (sl == NULL) break;
        /* A bin's first slab is faulted page by page (a class used once
         * costs a page); a bin that used up a slab is busy, and its next
         * fresh slab is faulted in with one system call. */
        uint64_t bit = (uint64_t)1 << (cls % 64);
        if (sl->zero && (s->taken[cls / 64] & bit)) *populate = sl;
        s->taken[cls / 64] |= bit;
      }
      b->cur = sl;
    }
    /* The lowest free blocks first: address order, like a fresh slab. */
    unsigned got = 0, need = want - n, w = sl->hint, nw = (first + count + 63) / 64, last = 0;
    uint64_t *bits = sl->bits;
    for (; w < nw; w++) {
      uint64_t x = bits[w];
      if (x == 0) continue;
      do {
        last = w * 64 + (unsigned)__builtin_ctzll(x);
        x &= x - 1;
        void *p = (void *)(sl->base + (uintptr_t)last * size);
        if (checked && last < sl->high) canary_check(p);
        out[n + got] = p;
      } while (++got < need && x != 0);
      bits[w] = x;
      if (got == need) break;
    }
    sl->hint = (uint16_t)w;
    if (checked && got > 0 && last >= sl->high) sl->high = (uint16_t)(last + 1);
    sl->used += got;
    n += got;
    if (sl->used == count) { /* exhausted */
      sl->state = SLAB_FULL;
      b->cur = NULL;
    }
  }
  return n;
}

unsigned slot_take(unsigned cls, unsigned want, void **out) {
  unsigned n = 0;
  slab_t *populate = NULL;
  for (;;) {
    slot_t *s = slot_lock();
    n += slot_take_locked(s, cls, want - n, out + n, &populate);
    slot_unlock(s);
    if (n > 0 || !slab_grow()) break; /* grow maps memory with no lock held */
  }
  if (populate != NULL) os_populate((void *)populate->base, SMP_SLAB_SIZE);
  slab_maintain(); /* a program that only allocates still returns memory */
  return n;
}

/* ---- giving blocks back ------------------------------------------------- */

SMP_COLD static void slot_bad_free(const void *p, const char *who) {
  os_fatal(who, "double free (or corrupted heap) of", p);
}

/* `freed` blocks of slab sl (owned by the held slot s) came back: their bits
 * are set, and no word below `low` gained one... */
static void slab_settle(slot_t *s, slab_t *sl, uint32_t freed, uint32_t low) {
  if (low < sl->hint) sl->hint = (uint16_t)low;
  sl->used -= freed;
  if (sl->state == SLAB_FULL) partial_push(&s->bins[sl->cls], sl);
  if (sl->used == 0 && sl->state == SLAB_PARTIAL) { /* ...and it emptied: to the pool */
    partial_unlink(&s->bins[sl->cls], sl);
    slab_release(sl);
  }
}

/* Blocks come back a run of the same slab at a time (a thread cache's list
 * mostly is one): the slab is looked up, and its count and state settled,
 * once per run; per block, one bit is tested and set.  A bit set already
 * means the block was freed twice (or never handed out). */
void slot_give(void *list, const char *who) {
  slot_t *held = NULL;
  slab_t *sl = NULL;
  uintptr_t granule = 0, base = 0; /* of sl; granule 0: none */
  uint64_t *bits = NULL;
  uint32_t recip = 0, freed = 0, low = 0;
  bool checked = smp_opt.checked;
  while (list != NULL) {
    void *p = list;
    list = *(void **)p;
    if (((uintptr_t)p >> SMP_SLAB_SHIFT) != granule) {
      if (freed) slab_settle(held, sl, freed, low);
      uint64_t e = pagemap_get(p);
      /* Checked when it was freed; gone since: its slab emptied, so p was
       * in the list twice. */
      if (unlikely((e >> 48) == 0)) slot_bad_free(p, who);
      sl = pm_slab(e);
      recip = smp_class[pm_class(e)].recip;
      granule = (uintptr_t)p >> SMP_SLAB_SHIFT;
      /* The owner cannot change while one of its blocks is out (used > 0). */
      slot_t *o = &smp_slots[pm_owner(e)];
      if (o != held) {
        if (held) slot_unlock(held);
        slot_lock_blocking(o);
        held = o;
      }
      base = sl->base;
      bits = sl->bits;
      freed = 0;
      low = UINT32_MAX;
    }
    uint32_t idx = (uint32_t)(((uint64_t)((uintptr_t)p - base) * recip) >> 32);
    uint64_t bit = (uint64_t)1 << (idx % 64), *w = &bits[idx / 64];
    if (unlikely(*w & bit)) slot_bad_free(p, who);
    *w |= bit;
    if (idx / 64 < low) low = idx / 64;
    if (checked) canary_set(p);
    freed++;
  }
  if (freed) slab_settle(held, sl, freed, low);
  if (held) slot_unlock(held);
  slab_maintain();
}

void slot_collect(void) {
  unsigned hi = atomic_load_explicit(&smp_slots_hi, memory_order_acquire);
  for (unsigned i = 0; i < hi; i++) {
    slot_t *s = &smp_slots[i];
    slot_lock_blocking(s);
    for (unsigned c = 0; c < SMP_NCLASS; c++) {
      slab_t *sl = s->bins[c].cur;
      if (sl != NULL && sl->used == 0) {
        s->bins[c].cur = NULL;
        slab_release(sl);
      }
    }
    slot_unlock(s);
  }
}

/* Lock every slot that may be in use, in index order.  The high mark can
 * only grow between the two calls, so unlock_all is given the count that
 * lock_all locked. */
unsigned slot_lock_all(void) {
  unsigned hi = atomic_load_explicit(&smp_slots_hi, memory_order_acquire);
  for (unsigned i = 0; i < hi; i++) slot_lock_blocking(&smp_slots[i]);
  return hi;
}
void slot_unlock_all(unsigned hi) {
  for (unsigned i = 0; i < hi; i++) slot_unlock(&smp_slots[i]);
}

/* ---- fork ---------------------------------------------------------------- */
/* Take every lock in a fixed order (slots, thread caches, slab, metadata) so
 * the child starts with consistent lists, and can allocate at once. */
static unsigned fork_locked; /* slots locked by the prepare handler */

static void slot_fork_prepare(void) {
  fork_locked = slot_lock_all();
  tcache_fork_prepare();
  slab_fork_prepare();
  large_fork_prepare();
}
static void slot_fork_parent(void) {
  large_fork_parent();
  slab_fork_parent();
  tcache_fork_parent();
  slot_unlock_all(fork_locked);
}
static void slot_fork_child(void) {
  large_fork_child();
  slab_fork_child();
  tcache_fork_child();
  for (unsigned i = 0; i < fork_locked; i++)
    atomic_store_explicit(&smp_slots[i].lock, 0, memory_order_relaxed);
}

/* Runs after libc is initialised, before main: the place for set-up that
 * may allocate (pthread_atfork does) or read the environment. */
__attribute__((constructor)) static void slot_constructor(void) {
  options_init();
  slot_set_count();
  stats_init();
  pthread_atfork(slot_fork_prepare, slot_fork_parent, slot_fork_child);
}
