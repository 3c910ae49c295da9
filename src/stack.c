/*
 * stack.c - stacks from the DWARF unwinder (stack.h): libgcc_eh's, linked
 * in (the Makefile links the shared library with -static-libgcc and hides
 * its names: no dlopen, and no second copy of libgcc_s loaded for it).
 */
#include <unwind.h>

#include "stack.h"

_Static_assert(sizeof(_Unwind_Reason_Code) == sizeof(int), "the unwinder's reason codes are ints");

int unwind_frame(struct _Unwind_Context *ctx, void *arg) {
  unwind_walk_t *w = arg;
  /* A context pairs a return address with the frame address of the callee
   * that returns there: the entry point's own is the first kept. */
  if ((uintptr_t)_Unwind_GetCFA(ctx) < w->cfa) return _URC_NO_REASON;
  uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  w->pc[w->n++] = ip;
  return w->n == w->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}
