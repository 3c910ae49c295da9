/*
 * slot.h - slots: SmpAllocator's unit of sharing.
 *
 * There are min(CPUs, SMP_MAX_SLOTS) slots.  Each holds a lock and, per
 * size class, the slab it is allocating from and the slabs it owns that
 * have free blocks.  A thread remembers a slot index (kept by the caller,
 * in the thread cache); when that slot's lock is taken it moves on with
 * try-lock to the next one and remembers where it succeeded, so threads
 * spread over the slots by themselves.  After SMP_SPIN_ROUNDS full rounds of
 * failed try-locks a thread waits on a slot's lock: more threads than slots
 * cost waiting, not CPU.
 *
 * Unlike SmpAllocator, a freed block goes back to its own slab, under the
 * lock of the slot that owns the slab.  That is what lets an empty slab be
 * seen at once (its used count reaches 0) and returned to the kernel, and
 * what keeps a producer/consumer pair bounded: the consumer's frees land
 * where the producer allocates.  Thread caches (tcache.c) batch both ways,
 * so a slot lock is taken once per batch, not once per call, and a batch
 * freed by a thread of another slot takes no lock at all: it waits in the
 * owner's inbox (slot_send) until a thread of that slot, which holds the
 * lock to take blocks anyway, gives it back.
 */
#ifndef SMP_SLOT_H
#define SMP_SLOT_H

#include "base.h"

/* Take up to want blocks of class cls into out[0 .. n), highest address
 * first: out[n - 1] is the lowest, so that a thread cache, which hands
 * out the top of its array first, hands them out lowest address first
 * (tcache.h).  Returns n (0 only when out of memory, or deferred: below).
 * *slot is the caller's slot index, updated when it moves.  Touches no
 * block (but checks them in checked mode).  With defer not NULL, a new
 * slab that would need a granule not resident (the pool holds no dirty
 * granule, single or in a free run) is not made: *defer is set and
 * the blocks taken so far (maybe none) returned, so that the caller can
 * give its cached blocks back first and ask again. */
SMP_HIDDEN unsigned slot_take(unsigned cls, unsigned want, void **out, unsigned *slot, bool *defer);
/* Give blocks v[0 .. n) (any classes, already checked to be block starts
 * that were handed out) back to their slabs.  A block whose bit is set
 * already was freed twice: abort, naming the call `who`. */
SMP_HIDDEN void slot_give(void **v, unsigned n, const char *who);
/* Send blocks v[0 .. n) (all of slabs that slot owner owns, checked;
 * bytes in all) home without waiting for its lock: they wait in its inbox
 * until a thread that locks it gives them back (its next slot_take),
 * unless the slot has no threads or its inbox is full, when the sender
 * gives them back itself.  *stash is the sender's own list of empty
 * parcels (NULL at first; it keeps what it is given). */
typedef struct parcel_s parcel_t;
SMP_HIDDEN void slot_send(unsigned owner, void **v, unsigned n, size_t bytes, parcel_t **stash,
                          const char *who);
/* Give back what waits in slot i's inbox (its last thread exits: nobody
 * else would). */
SMP_HIDDEN void slot_drain_idle(unsigned i);
/* Release every empty current slab to the pool (for smp_collect). */
SMP_HIDDEN void slot_collect(void);

/* A new thread's slot: the first of those fewest threads use now (counted); the
 * thread leaves it when it exits, or moves (slot_take changed its index;
 * from SMP_MAX_SLOTS: from nowhere, a thread counted again after fork). */
SMP_HIDDEN unsigned slot_join(void);
SMP_HIDDEN void slot_leave(unsigned slot);
SMP_HIDDEN void slot_moved(unsigned from, unsigned to);
/* How many threads use slot i now (the count slot_join goes by). */
SMP_HIDDEN unsigned slot_threads_in(unsigned i);
/* The number of slots in use (the CPU count, or SMPALLOC_SLOTS). */
SMP_HIDDEN unsigned slot_count(void);
/* Set it (init.c: at start-up, and when the CPU count changes). */
SMP_HIDDEN void slot_set_count(unsigned n);
/* Lock / unlock every slot, in index order (fork, statistics). */
SMP_HIDDEN void slot_lock_all(void);
SMP_HIDDEN void slot_unlock_all(void);
SMP_HIDDEN void slot_reset_all(void);
/* Counters: try-locks that found a slot busy, waits on a slot's lock. */
SMP_HIDDEN void slot_counters(size_t *contended, size_t *waits);

#endif /* SMP_SLOT_H */
