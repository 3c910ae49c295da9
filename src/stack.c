/*
 * stack.c - stacks from the DWARF unwinder (stack.h).
 */
#include <unwind.h>

#include "stack.h"

#ifdef SMP_STATIC_UNWIND
static bool unwind_load(void) { return true; }
#define BACKTRACE _Unwind_Backtrace
#define GET_IP _Unwind_GetIP
#define GET_CFA _Unwind_GetCFA
#else
#include <dlfcn.h>

typedef _Unwind_Reason_Code backtrace_fn(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr get_fn(struct _Unwind_Context *);
static backtrace_fn *backtrace_p;
static get_fn *get_ip_p, *get_cfa_p;
#define BACKTRACE backtrace_p
#define GET_IP get_ip_p
#define GET_CFA get_cfa_p

/* The unwinder of libgcc_s: already loaded in most processes (then
 * RTLD_NOLOAD finds it without loading anything), else loaded now. */
static bool unwind_load(void) {
  void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == NULL) h = dlopen("libgcc_s.so.1", RTLD_NOW);
  if (h == NULL) return false;
  get_ip_p = (get_fn *)dlsym(h, "_Unwind_GetIP");
  get_cfa_p = (get_fn *)dlsym(h, "_Unwind_GetCFA");
  backtrace_p = (backtrace_fn *)dlsym(h, "_Unwind_Backtrace");
  return get_ip_p != NULL && get_cfa_p != NULL && backtrace_p != NULL;
}
#endif

static _Atomic int unwind_state; /* 0 not loaded, 1 loading, 2 ready, 3 failed */

bool unwind_prime(void) {
  int s = atomic_load_explicit(&unwind_state, memory_order_acquire);
  if (likely(s == 2)) return true;
  if (s != 0 || !atomic_compare_exchange_strong(&unwind_state, &s, 1)) return false;
  bool ok = unwind_load();
  atomic_store_explicit(&unwind_state, ok ? 2 : 3, memory_order_release);
  return ok;
}

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
