/*
 * stack.h - the call stack of the calling thread, from the DWARF unwind
 * tables (.eh_frame), so that programs built without frame pointers (a
 * distribution's python3, sqlite3, git) give whole stacks.
 *
 * The unwinder is the compiler runtime's _Unwind_Backtrace, linked into
 * both libraries (libgcc_eh): taking a stack loads nothing and allocates
 * nothing; a -static program links its own copy.
 */
#ifndef SMP_STACK_H
#define SMP_STACK_H

#include "base.h"

/* The most frames a stack keeps. */
#define UNWIND_MAX 64

/* Up to max return addresses of the calling thread's stack into pc,
 * innermost first, from the return address out of the allocator entry
 * point whose canonical frame address is cfa (__builtin_dwarf_cfa() in
 * it): the allocator's own frames are left out.  How many. */
SMP_HIDDEN unsigned unwind_stack(uintptr_t *pc, unsigned max, uintptr_t cfa);

#endif /* SMP_STACK_H */
