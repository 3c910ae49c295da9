/*
 * guard.h - guarded samples: one allocation in SMPALLOC_GUARD_SAMPLE of up
 * to a page is served from a small pool of slots, each a page between
 * inaccessible pages, the block right-aligned to the slot's end (rounded
 * to its alignment: 16, or what was asked).  A freed slot is made
 * inaccessible and goes to the back of a queue (reused last).  A fault in
 * the pool prints one report - use after free, overflow or underflow, the
 * address, the block's size, its allocation stack and (after a free) its
 * free stack - and aborts; a double or invalid free of a pool block is
 * reported the same way.  Faults elsewhere go on to the handler that was
 * there before (or the default action).
 *
 * The pool is made at the first guarded allocation: GUARD_SLOTS + 1
 * guard pages and GUARD_SLOTS slots of address space, and the slots'
 * records (stacks included) in GUARD_META_BYTES of metadata, at most 64
 * KiB (fixed, touched as slots are first used).  At most GUARD_LIVE slots
 * hold a block at once, so that at least GUARD_SLOTS - GUARD_LIVE freed
 * slots stay inaccessible.
 */
#ifndef SMP_GUARD_H
#define SMP_GUARD_H

#include "base.h"

#define GUARD_SLOTS 32u
#define GUARD_LIVE 16u

/* A guarded block of n bytes (n at most a page) aligned to align (0 or a
 * power of two up to a page), recording the allocation stack pc[0..depth);
 * NULL if the pool cannot be made or every slot it may use is taken. */
SMP_HIDDEN void *guard_alloc(size_t n, size_t align, const uintptr_t *pc, unsigned depth);
/* Is p in the pool (a block or not)?  An address compare. */
SMP_HIDDEN bool guard_owns(const void *p);
/* Free the block p (guard_owns(p)), recording the free stack; a double
 * or invalid free is reported and aborts. */
SMP_HIDDEN void guard_free(void *p, const uintptr_t *pc, unsigned depth);
/* The usable size of the block p (guard_owns(p)): from p to its slot's end. */
SMP_HIDDEN size_t guard_size(const void *p);
SMP_HIDDEN void guard_fork_prepare(void);
SMP_HIDDEN void guard_fork_parent(void);
SMP_HIDDEN void guard_fork_child(void);

#endif /* SMP_GUARD_H */
