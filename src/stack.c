/*
 * stack.c - stacks from the DWARF unwinder (stack.h): libgcc_eh's, linked
 * in (the Makefile links the shared library with -static-libgcc and hides
 * its names: no dlopen, and no second copy of libgcc_s loaded for it).
 */
#include <unwind.h>

#include "stack.h"

#define BACKTRACE _Unwind_Backtrace
#define GET_IP _Unwind_GetIP
#define GET_CFA _Unwind_GetCFA

typedef struct {
  uintptr_t *pc;
  unsigned n, max;
  uintptr_t cfa;
} unwind_walk_t;

static _Unwind_Reason_Code unwind_frame(struct _Unwind_Context *ctx, void *arg) {
  unwind_walk_t *w = arg;
  /* A context pairs a return address with the frame address of the callee
   * that returns there: the entry point's own is the first kept. */
  if ((uintptr_t)GET_CFA(ctx) < w->cfa) return _URC_NO_REASON;
  uintptr_t ip = (uintptr_t)GET_IP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  w->pc[w->n++] = ip;
  return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

unsigned unwind_stack(uintptr_t *pc, unsigned max, uintptr_t cfa) {
  unwind_walk_t w = {.pc = pc, .n = 0, .max = max, .cfa = cfa};
  BACKTRACE(unwind_frame, &w);
  return w.n;
}
