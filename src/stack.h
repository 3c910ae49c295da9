/*
 * stack.h - the call stack of the calling thread, from the DWARF unwind
 * tables (.eh_frame), so that programs built without frame pointers (a
 * distribution's python3, sqlite3, git) give whole stacks.
 *
 * The unwinder is the compiler runtime's _Unwind_Backtrace.  The shared
 * library loads it (libgcc_s.so.1, dlopen) at the first unwind_prime; the
 * archive (built with -DSMP_STATIC_UNWIND) references it, so that a
 * -static program links libgcc_eh's copy and needs no loader.  dlopen
 * allocates: unwind_prime must run outside the allocator's locks, with the
 * thread marked busy (prof.c) so that those allocations are served plainly.
 */
#ifndef SMP_STACK_H
#define SMP_STACK_H

#include "base.h"

/* The most frames a stack keeps. */
#define UNWIND_MAX 64

/* Make the unwinder ready; false while another thread loads it, or if it
 * cannot be loaded (then no stacks: unwind_stack returns 0). */
SMP_HIDDEN bool unwind_prime(void);
/* Up to max return addresses of the calling thread's stack into pc,
 * innermost first, from the return address out of the allocator entry
 * point whose canonical frame address is cfa (__builtin_dwarf_cfa() in
 * it): the allocator's own frames are left out.  How many.  unwind_prime must have returned true. */
SMP_HIDDEN unsigned unwind_stack(uintptr_t *pc, unsigned max, uintptr_t cfa);

#endif /* SMP_STACK_H */
