/*
 * slot.c - slots, their rotation, their partial lists (see slot.h).
 */
#include <string.h>

#include "chunk.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "pagemap.h"
#include "region.h"
#include "slab.h"
#include "slot.h"

/* Per class, per slot: the slab being allocated from and the slabs of the
 * class this slot owns that have free blocks (a doubly linked list).
 * Invariants (slot lock held): cur is SLAB_CUR; every slab on partial is
 * SLAB_PARTIAL with 0 < used < count. */
typedef struct {
  slab_t *cur;
  slab_t *partial;
} bin_t;

/* Blocks of one slot's slabs freed by a thread of another slot, on their
 * way home (slot_send).  Parcels are metadata, never unmapped: a drained
 * one waits on its slot's spare list for the next sender to that slot,
 * who takes the whole list and keeps the rest in its stash. */
typedef struct parcel_s {
  struct parcel_s *next;
  _Atomic uint32_t depth; /* parcels in the inbox from this one down (a hint) */
  _Atomic uint32_t bytes; /* their blocks' bytes (a hint, saturating) */
  uint32_t n;
  void *v[SMP_REMOTE_BATCH];
} parcel_t;

typedef struct {
  _Alignas(SMP_CACHE_LINE) lock_t lock;
  uint64_t taken[(SMP_NCLASS + 63) / 64];  /* classes that took a slab, never cleared (populate hint; a first slab is clean: slab_new) */
  _Atomic size_t contended;                /* try-locks that found it busy */
  bin_t bins[SMP_NCLASS];
  /* Parcels posted to this slot, newest first: pushed with a
   * compare-and-swap by any thread, taken all at once (an exchange) by a
   * holder of the lock, so no sender waits for the lock or makes its
   * threads wait (slot_send).  Its own cache line: senders write it. */
  _Alignas(SMP_CACHE_LINE) _Atomic(parcel_t *) inbox;
  _Atomic(parcel_t *) spare; /* drained parcels: pushed as a chain, taken whole */
  _Atomic bool sender;       /* the lock is held by a sender draining the
                                inbox (a hint: two senders may race on it) */
} slot_t;

/* All SMP_MAX_SLOTS exist; the first slot_count() are handed to threads. */
static slot_t slots[SMP_MAX_SLOTS];
static _Atomic unsigned nslots = 1; /* 1 until init: early calls all use slot 0 */
static _Atomic size_t waits;
/* Slabs each class holds, over all slots: a busy class that holds
 * SMP_HUGE_AFTER of them is dense enough for huge pages (chunk.h), as is
 * every busy class once the heap holds SMP_HUGE_SLAB_HEAP granules. */
static _Atomic uint32_t class_slabs[SMP_NCLASS];

unsigned slot_count(void) { return atomic_load_explicit(&nslots, memory_order_relaxed); }

/* Threads with a cache that use each slot (a hint: relaxed, and a thread
 * that moves is counted where it went). */
static _Atomic unsigned slot_threads[SMP_MAX_SLOTS];

/* The first of the least-used slots, so that the slots in use stay few
 * when threads come and go: a successor then mostly lands on a slot whose
 * slabs an exited thread left, where the blocks it frees live.  (Taking
 * them in turn spread a churning program over every slot: with 8 slots,
 * on 2 CPUs, larson 0.91x -> 0.76x glibc's time and 2.02x -> 1.30x its
 * peak RSS, mleak 0.54x -> 0.34x and 3.24x -> 1.29x, mstress 0.64x ->
 * 0.53x and 3.64x -> 2.12x; with 2 slots larson 0.72x -> 0.64x.)  The
 * count is taken with a compare-and-swap: two threads that join at once
 * do not both take a slot for the least used.  SMPALLOC_SLOT_SPREAD=1
 * takes them in turn instead, as threads that start together on as many
 * CPUs as slots would land (a test of many slots on few CPUs). */
unsigned slot_join(void) {
  if (options.slot_spread) { /* in turn, counted all the same */
    static _Atomic unsigned turn;
    unsigned i = atomic_fetch_add_explicit(&turn, 1, memory_order_relaxed) % slot_count();
    atomic_fetch_add_explicit(&slot_threads[i], 1, memory_order_relaxed);
    return i;
  }
  for (;;) {
    unsigned n = slot_count(), best = 0, least = UINT32_MAX;
    for (unsigned i = 0; i < n; i++) {
      unsigned t = atomic_load_explicit(&slot_threads[i], memory_order_relaxed);
      if (t < least) least = t, best = i;
    }
    if (atomic_compare_exchange_weak_explicit(&slot_threads[best], &least, least + 1, memory_order_relaxed,
                                              memory_order_relaxed))
      return best;
  }
}

unsigned slot_threads_in(unsigned i) {
  return i < SMP_MAX_SLOTS ? atomic_load_explicit(&slot_threads[i], memory_order_relaxed) : 0;
}

void slot_leave(unsigned i) {
  if (i < SMP_MAX_SLOTS) atomic_fetch_sub_explicit(&slot_threads[i], 1, memory_order_relaxed);
}

void slot_moved(unsigned from, unsigned to) {
  slot_leave(from);
  if (to < SMP_MAX_SLOTS) atomic_fetch_add_explicit(&slot_threads[to], 1, memory_order_relaxed);
}

/* The most slots there ever were: a thread may lock any of them (its
 * index may be past the count now), and only them, so slot_lock_all,
 * slot_collect and the counters visit these, not all SMP_MAX_SLOTS (whose
 * pages would all become resident: 36 pages, at every fork).  It rises
 * under slot 0's lock, which slot_lock_all takes first. */
static unsigned slots_ever = 1;

static unsigned slots_used(void) { return __atomic_load_n(&slots_ever, __ATOMIC_RELAXED); }

void slot_set_count(unsigned n) {
  if (n > SMP_MAX_SLOTS) n = SMP_MAX_SLOTS;
  if (n < 1) n = 1;
  lock_take(&slots[0].lock);
  if (n > slots_ever) __atomic_store_n(&slots_ever, n, __ATOMIC_RELAXED);
  atomic_store_explicit(&nslots, n, memory_order_relaxed);
  lock_drop(&slots[0].lock);
}

void slot_counters(size_t *contended, size_t *w) {
  size_t c = 0;
  for (unsigned i = 0, n = slots_used(); i < n; i++)
    c += atomic_load_explicit(&slots[i].contended, memory_order_relaxed);
  *contended = c;
  *w = atomic_load_explicit(&waits, memory_order_relaxed);
}

/* Lock the slot *idx, or another one if it is busy (updating *idx).  A
 * thread may hold an index past the current count (the count changed): it
 * keeps that slot, which still exists, until contention moves it. */
static slot_t *slot_lock(unsigned *idx) {
  unsigned i = *idx;
  if (likely(lock_try(&slots[i].lock))) return &slots[i];
  atomic_fetch_add_explicit(&slots[i].contended, 1, memory_order_relaxed);
  /* A busy slot is mostly held for a moment (a batch): wait for it a
   * little, so that a thread's blocks stay on one slot, except every
   * SMP_SLOT_PATIENCE-th time it is busy, when the thread moves at once
   * (threads that keep meeting, a producer and its consumer, then share
   * a slot). */
  static __thread unsigned busy_seen;
  if (++busy_seen % SMP_SLOT_PATIENCE != 0 && lock_try_spin(&slots[i].lock)) return &slots[i];
  /* Free again, or held by a sender giving back its inbox (slot_send):
   * the slot is this thread's still. */
  if (lock_try(&slots[i].lock)) return &slots[i];
  if (atomic_load_explicit(&slots[i].sender, memory_order_relaxed)) {
    lock_wait(&slots[i].lock);
    return &slots[i];
  }
  unsigned n = slot_count();
  for (unsigned tries = 0; tries < SMP_SPIN_ROUNDS * n; tries++) {
    i = i + 1 < n ? i + 1 : 0;
    if (lock_try(&slots[i].lock)) {
      *idx = i;
      return &slots[i];
    }
  }
  /* Every slot is busy: more threads want one than there are slots. */
  if (i >= n) i = 0;
  atomic_fetch_add_explicit(&waits, 1, memory_order_relaxed);
  lock_take(&slots[i].lock);
  *idx = i;
  return &slots[i];
}

void slot_lock_all(void) {
  lock_take(&slots[0].lock); /* first: slots_ever cannot rise now */
  for (unsigned i = 1, n = slots_used(); i < n; i++) lock_take(&slots[i].lock);
}
void slot_unlock_all(void) {
  for (unsigned i = 0, n = slots_used(); i < n; i++) lock_drop(&slots[i].lock);
}
void slot_reset_all(void) {
  for (unsigned i = 0, n = slots_used(); i < n; i++) {
    lock_reset(&slots[i].lock);
    /* The child has one thread: the others' counts go (tcache_fork_child
     * counts the forking thread again). */
    atomic_store_explicit(&slot_threads[i], 0, memory_order_relaxed);
  }
}

/* ---- parcels ------------------------------------------------------------ */

static slot_t *give_held(slot_t *held, void **v, unsigned n, const char *who);

/* Push the chain first .. last onto the list (no lock: a chain is pushed
 * with one compare-and-swap, and lists are taken whole, so no pointer is
 * ever read from a parcel that may have left the list meanwhile). */
static void parcel_push(_Atomic(parcel_t *) *list, parcel_t *first, parcel_t *last) {
  parcel_t *head = atomic_load_explicit(list, memory_order_relaxed);
  do last->next = head;
  while (!atomic_compare_exchange_weak_explicit(list, &head, first, memory_order_release, memory_order_relaxed));
}

/* Give the blocks posted to the held slot s back to their slabs (all are
 * s's: a slab's owner stays while its blocks are out), and the parcels to
 * its spare list. */
static void slot_drain(slot_t *s) {
  /* A load first: an empty inbox (the common case) costs no locked
   * instruction. */
  if (atomic_load_explicit(&s->inbox, memory_order_relaxed) == NULL) return;
  parcel_t *p = atomic_exchange_explicit(&s->inbox, NULL, memory_order_acquire);
  if (p == NULL) return;
  parcel_t *last = p;
  for (parcel_t *q = p; q != NULL; last = q, q = q->next) give_held(s, q->v, q->n, "free");
  parcel_push(&s->spare, p, last);
}

/* A parcel for a sender to slot s: from its stash, or s's whole spare list
 * (the rest stays in the stash), or new metadata; NULL without memory. */
static parcel_t *parcel_get(slot_t *s, parcel_t **stash) {
  parcel_t *p = *stash;
  if (p == NULL) p = atomic_exchange_explicit(&s->spare, NULL, memory_order_acquire);
  if (p == NULL) return meta_alloc(sizeof *p, SMP_CACHE_LINE);
  *stash = p->next;
  return p;
}

void slot_drain_idle(unsigned i) {
  if (i >= SMP_MAX_SLOTS || atomic_load_explicit(&slots[i].inbox, memory_order_relaxed) == NULL) return;
  lock_take(&slots[i].lock);
  slot_drain(&slots[i]);
  lock_drop(&slots[i].lock);
}

/* Blocks go home in a parcel, with no lock, unless the slot has no
 * threads to give them back (the sender does, under its lock, with any
 * parcel posted there after its last thread drained the inbox), or its
 * inbox is full (SMP_INBOX_DEPTH parcels or SMP_INBOX_BYTES) and its lock
 * is free (the sender gives them all back: a thread of the slot sleeps or
 * works elsewhere).  A sender never waits for the lock, so the slot's
 * threads never find it held by a sender for long, and do not move for
 * it. */
void slot_send(unsigned owner, void **v, unsigned n, size_t bytes, parcel_t **stash, const char *who) {
  slot_t *s = &slots[owner];
  parcel_t *p = NULL;
  if (slot_threads_in(owner) > 0 && (p = parcel_get(s, stash)) != NULL) {
    memcpy(p->v, v, n * sizeof *v);
    p->n = n;
    parcel_t *head = atomic_load_explicit(&s->inbox, memory_order_relaxed);
    for (;;) {
      uint32_t d = 1;
      size_t b = bytes;
      if (head != NULL) {
        d += atomic_load_explicit(&head->depth, memory_order_relaxed);
        b += atomic_load_explicit(&head->bytes, memory_order_relaxed);
      }
      if (d > SMP_INBOX_DEPTH || b > SMP_INBOX_BYTES) {
        /* Flagged before the try and cleared after the drop, so that a
         * thread of the slot that finds it held by a sender waits. */
        atomic_store_explicit(&s->sender, true, memory_order_relaxed);
        if (lock_try(&s->lock)) break;
        /* Four times too deep: the slot's threads keep the lock busy and
         * drain nothing (they do not allocate).  Waiting for it bounds the
         * parcels, which are metadata and never go back (four threads
         * freeing 1 GiB of another four's blocks made 4,000 of them:
         * 1.2 MiB that a trim kept). */
        if (d > 4 * SMP_INBOX_DEPTH || b > 4 * SMP_INBOX_BYTES) {
          lock_take(&s->lock);
          break;
        }
        atomic_store_explicit(&s->sender, false, memory_order_relaxed);
      }
      atomic_store_explicit(&p->depth, d, memory_order_relaxed);
      atomic_store_explicit(&p->bytes, (uint32_t)(b < UINT32_MAX ? b : UINT32_MAX), memory_order_relaxed);
      p->next = head;
      if (atomic_compare_exchange_weak_explicit(&s->inbox, &head, p, memory_order_release,
                                                memory_order_relaxed))
        return;
    }
    /* Deep, and the lock taken: the parcel goes in too, and the inbox is
     * drained (the sender's blocks with it). */
    p->next = atomic_exchange_explicit(&s->inbox, p, memory_order_acquire);
    slot_drain(s);
    lock_drop(&s->lock);
    atomic_store_explicit(&s->sender, false, memory_order_relaxed);
    return;
  }
  /* No threads (or no memory for a parcel): the blocks go back now, and
   * so do any parcels posted while the slot still had threads. */
  lock_take(&s->lock);
  slot_drain(s);
  slot_t *held = give_held(s, v, n, who);
  if (held) lock_drop(&held->lock);
}

/* ---- taking blocks ------------------------------------------------------ */

static void slot_partial_push(bin_t *b, slab_t *sl) {
  chunk_set_state(sl, SLAB_PARTIAL);
  sl->prev = NULL;
  sl->next = b->partial;
  if (b->partial) b->partial->prev = sl;
  b->partial = sl;
}

static void slot_partial_unlink(bin_t *b, slab_t *sl) {
  if (sl->prev) sl->prev->next = sl->next; else b->partial = sl->next;
  if (sl->next) sl->next->prev = sl->prev;
  sl->next = sl->prev = NULL;
}

SMP_COLD static void slot_corrupt(const slab_t *sl) {
  os_fatal("malloc", "corrupted slab metadata (count and bitmap disagree) at", (void *)chunk_base(sl));
}

/* Up to want blocks from the held slot s, into the room that ends at oend,
 * downwards (slab_take).  A bin's first slab is sparse:
 * the pages its blocks lie on are faulted in as they are first taken, so a
 * class used once costs a page (*fresh is set to the range of pages that
 * blocks past the slab's high-water mark lie on, once a call: the caller
 * faults them in with one system call, not a fault per page at the
 * program's first write).  A bin that used up a slab is busy, and its
 * fresh slabs are dense (chunk.h: huge pages) once its class holds
 * SMP_HUGE_AFTER slabs or the heap SMP_HUGE_SLAB_HEAP granules, and otherwise
 * (or with sparse_only, or without huge pages) faulted in whole with one
 * system call: *populate is set to such a slab.  Returns the count; fewer
 * than want means no slab is at hand without mapping, and *dense tells
 * which kind was wanted.  Each round of the loop takes at least one block
 * or ends it: it cannot spin. */
typedef struct { uintptr_t lo, hi; } range_t;

static unsigned slot_take_locked(slot_t *s, unsigned cls, unsigned want, void **oend,
                                 slab_t **populate, range_t *fresh, bool *dense, bool sparse_only,
                                 bool *defer, slab_t **probe) {
  bin_t *b = &s->bins[cls];
  uint32_t count = class_table[cls].count;
  bool checked = options.checked, whole = slab_class_whole(cls);
  unsigned n = 0;
  while (n < want) {
    slab_t *sl = b->cur;
    if (sl == NULL) {
      if ((sl = b->partial) != NULL) {
        slot_partial_unlink(b, sl);
        chunk_set_state(sl, SLAB_CUR);
      } else {
        if (defer != NULL && chunk_dirty() == 0) {
          *defer = true; /* the caller gives its cache back first */
          break;
        }
        uint64_t bit = (uint64_t)1 << (cls % 64);
        bool busy = (s->taken[cls / 64] & bit) && whole;
        uint32_t held = atomic_load_explicit(&class_slabs[cls], memory_order_relaxed);
        size_t heap = chunk_active();
        *dense = !sparse_only &&
                 (options.hugepages == 2 || (busy && (held >= SMP_HUGE_AFTER || heap >= SMP_HUGE_SLAB_HEAP)));
        sl = slab_new(cls, (unsigned)(s - slots), *dense, !(s->taken[cls / 64] & bit));
        if (sl == NULL) break;
        atomic_fetch_add_explicit(&class_slabs[cls], 1, memory_order_relaxed);
        if (sl->untouched && busy && !sl->chunk->huge) {
          *populate = sl;
          sl->untouched = 0; /* about to be faulted in whole */
        }
        s->taken[cls / 64] |= bit;
      }
      b->cur = sl;
    }
    uint32_t before = sl->high_off;
    unsigned got = slab_take(sl, want - n, oend - n, checked);
    if (unlikely(got == 0)) slot_corrupt(sl); /* not full, yet no free bit */
    n += got;
    uint32_t after = sl->high_off;
    if (after > before && sl->untouched && !sl->chunk->huge && fresh->hi == 0 && whole) {
      /* Blocks past the old high-water mark lie on pages never touched:
       * the caller faults in those up to the one the last block starts on
       * with one call (os.h); the rest of a block of more than a page is
       * left to the program (it may never write there). */
      uintptr_t page = os_page_size() - 1, base = chunk_base(sl);
      uintptr_t lo = (before + page) & ~page;
      uintptr_t hi = (after - class_table[cls].size + 1 + page) & ~page;
      if (hi > lo) fresh->lo = base + lo, fresh->hi = base + hi;
    }
    if (sl->used == count) { /* exhausted */
      chunk_set_state(sl, SLAB_FULL);
      b->cur = NULL;
      /* A full sparse slab of a class whose use is not known: it waits
       * to be measured; the one before it is measured now (slot_take). */
      if (!whole && sl->untouched && !sl->chunk->huge && *probe == NULL) *probe = slab_class_full(sl, cls);
    }
  }
  return n;
}

unsigned slot_take(unsigned cls, unsigned want, void **out, unsigned *slot, bool *defer) {
  unsigned n = 0;
  slab_t *populate = NULL, *probe = NULL;
  range_t fresh = {0, 0};
  bool dense = false, sparse_only = false;
  for (;;) {
    slot_t *s = slot_lock(slot);
    slot_drain(s);
    n += slot_take_locked(s, cls, want - n, out + want - n, &populate, &fresh, &dense, sparse_only, defer,
                          &probe);
    lock_drop(&s->lock);
    if (n > 0 || (defer != NULL && *defer)) break;
    if (chunk_grow(1, dense)) continue; /* grow maps memory with no lock held */
    if (!dense) break;
    sparse_only = true; /* no memory for a dense chunk: any granule will do */
  }
  if (populate != NULL) { /* its blocks' pages: a half's slab ends in 8 or 16 KiB no block uses */
    uintptr_t page = os_page_size() - 1, end = class_table[cls].count * (uintptr_t)class_table[cls].size;
    os_populate((void *)chunk_base(populate), (end + page) & ~page);
  }
  if (fresh.hi != 0) os_populate((void *)fresh.lo, fresh.hi - fresh.lo);
  if (probe != NULL) slab_class_measure(probe, cls);
  if (n < want) { /* taken downwards from out + want: down to out, leaving no stale copy */
    memmove(out, out + want - n, n * sizeof *out);
    track_forget(out + n, (want - n) * sizeof *out);
  }
  return n;
}

/* ---- giving blocks back ------------------------------------------------- */

SMP_COLD static void slot_bad_free(const void *p, const char *who) {
  os_fatal(who, "double free (block already free in its slab) of", p);
}

/* Blocks of slab sl (owned by the held slot s) came back (slab_give has
 * counted them off): settle its state.  A slab that empties goes to the
 * pool, where any class can take it: a partial one always, the current
 * one once blocks were handed out from at least half of it.  Such a slab
 * is resident and was busy: a program that works in rounds of one size
 * after another then keeps reusing the same memory (glibc-simple: 1.24x
 * -> 1.12x glibc's peak RSS).  A current slab used for a few blocks stays
 * with its class: its pages past them were never touched, and another
 * class would touch them (the seed, whose growing arrays empty a slab of
 * each of 13 classes at every job: 0.35x -> 0.42-0.46x glibc's peak RSS
 * and 0.30x -> 0.37-0.40x its wall, when every empty current slab went). */
static void slot_settle(slot_t *s, slab_t *sl, bool was_full, bool checked) {
  bin_t *b = &s->bins[sl->cls];
  if (was_full) slot_partial_push(b, sl);
  if (sl->used != 0) return;
  unsigned state = chunk_state(sl);
  if (state == SLAB_PARTIAL) slot_partial_unlink(b, sl);
  else if (state == SLAB_CUR && sl->high_off >= SMP_SLAB_SIZE / 2) b->cur = NULL;
  else return;
  atomic_fetch_sub_explicit(&class_slabs[sl->cls], 1, memory_order_relaxed);
  slab_retire(sl, checked); /* sl belongs to the pool from here */
}

/* Blocks come back grouped by slab where they are neighbours in v (a thread
 * cache's blocks mostly are): the slab is looked up, and its state settled,
 * once per run of same-slab blocks. */
/* Give v[0 .. n) back, holding held's lock (NULL: none) on the way in;
 * returns the slot whose lock is held on the way out (NULL: none). */
static slot_t *give_held(slot_t *held, void **v, unsigned n, const char *who) {
  bool checked = options.checked;
  for (void **q = v, **end = v + n; q < end;) {
    pagemap_entry_t e = pagemap_get(*q);
    /* Checked when it was freed; gone since: its slab emptied, so it was
     * freed twice. */
    if (unlikely(pagemap_kind(e) != PAGEMAP_SLAB)) {
      if (held) lock_drop(&held->lock);
      slot_bad_free(*q, who);
    }
    slab_t *sl = pagemap_desc(e);
    /* The owner cannot change while one of its blocks is out (used > 0). */
    slot_t *o = &slots[sl->owner];
    if (o != held) {
      if (held) lock_drop(&held->lock);
      lock_take(&o->lock);
      held = o;
    }
    bool was_full = chunk_state(sl) == SLAB_FULL;
    void **first = q;
    q = slab_give(sl, (uintptr_t)*q & ~(uintptr_t)(SMP_SLAB_SIZE - 1), q, end);
    if (unlikely(q < end && ((uintptr_t)*q ^ (uintptr_t)*first) < SMP_SLAB_SIZE)) {
      lock_drop(&held->lock); /* stopped inside the granule: its bit was set */
      slot_bad_free(*q, who);
    }
    if (unlikely(checked))
      for (void **j = first; j < q; j++) slab_fill_free(sl, *j);
    slot_settle(held, sl, was_full, checked);
  }
  return held;
}

void slot_give(void **v, unsigned n, const char *who) {
  slot_t *held = give_held(NULL, v, n, who);
  if (held) lock_drop(&held->lock);
}

void slot_collect(void) {
  for (unsigned i = 0, n = slots_used(); i < n; i++) {
    slot_t *s = &slots[i];
    lock_take(&s->lock);
    slot_drain(s);
    for (unsigned c = 0; c < SMP_NCLASS; c++) {
      slab_t *sl = s->bins[c].cur;
      if (sl != NULL && sl->used == 0) {
        s->bins[c].cur = NULL;
        atomic_fetch_sub_explicit(&class_slabs[c], 1, memory_order_relaxed);
        slab_retire(sl, options.checked);
      }
    }
    lock_drop(&s->lock);
  }
}
