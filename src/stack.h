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

/* Finds the modules whose frames end a walk (stack.c): before the first
 * stack is taken. */
SMP_HIDDEN void unwind_init(void);

/* The most frames a stack keeps. */
#define UNWIND_MAX 64

/* Up to max return addresses of the calling thread's stack into pc,
 * innermost first, from the return address out of the allocator entry
 * point whose canonical frame address is cfa (__builtin_dwarf_cfa() in
 * it): the allocator's own frames are left out, and so are libc's frames
 * below the program's outermost one (main, a thread's start routine;
 * stack.c).  How many. */
static inline unsigned unwind_stack(uintptr_t *pc, unsigned max, uintptr_t cfa);

/* (Inline, so that the walk starts in its caller: a frame fewer to unwind,
 * about a tenth of a sample's cost.) */
typedef struct {
  uintptr_t *pc;
  unsigned n, max;
  uintptr_t cfa;
  uintptr_t top, outer; /* the stack's top, once read, and its outermost CFA (stack.c) */
} unwind_walk_t;
struct _Unwind_Context;
SMP_HIDDEN int unwind_frame(struct _Unwind_Context *ctx, void *walk); /* stack.c */
/* The unwinder's _Unwind_Backtrace, under its own name (no wrapper frame). */
int unwind_backtrace(int (*fn)(struct _Unwind_Context *, void *), void *walk) __asm__("_Unwind_Backtrace");

static inline unsigned unwind_stack(uintptr_t *pc, unsigned max, uintptr_t cfa) {
  unwind_walk_t w = {.pc = pc, .n = 0, .max = max, .cfa = cfa, .top = 0, .outer = 0};
  unwind_backtrace(unwind_frame, &w);
  return w.n;
}

#endif /* SMP_STACK_H */
