/*
 * guard.c - the guard pool (guard.h).
 *
 * Layout: page 0 a guard, then for each slot i its page at 1 + 2i and a
 * guard page after it.  A slot is free (never used: inaccessible), live
 * (a block, readable and writable) or freed (inaccessible, in the queue).
 * Slots are taken from the never-used ones first, then from the front of
 * the queue; a freed slot goes to its back.  The lock covers the records
 * and the queue; mprotect and madvise run outside it.
 */
#include <string.h>

#include "guard.h"
#include "lock.h"
#include "os.h"
#include "symbol.h"
#include "stack.h"

enum { SLOT_FREE, SLOT_LIVE, SLOT_FREED };

typedef struct {
  uintptr_t at;   /* the block's address */
  size_t size;    /* its requested size */
  uint32_t state, nalloc, nfree;
  uintptr_t alloc_pc[UNWIND_MAX / 2], free_pc[UNWIND_MAX / 2];
} guard_slot_t;

#define GUARD_META_BYTES (sizeof(guard_slot_t) * GUARD_SLOTS + sizeof(uint32_t) * GUARD_SLOTS)
_Static_assert(GUARD_META_BYTES <= 64u << 10, "the guard pool's fixed memory is at most 64 KiB (README)");

static lock_t guard_lock;
static _Atomic int guard_state; /* 0 none, 1 being made, 2 made, 3 failed */
static char *guard_base;        /* the pool: (2 * GUARD_SLOTS + 1) pages */
static size_t guard_bytes;
static guard_slot_t *slots;
static uint32_t *queue; /* freed slots, oldest first: a ring */
static uint32_t q_head, q_len, never_used, live;

static size_t page(void) { return os_page_size(); }
static char *slot_page(uint32_t i) { return guard_base + (2 * (size_t)i + 1) * page(); }

static void guard_fault(int sig, void *info, void *ctx);

static bool guard_make(void) {
  int s = atomic_load_explicit(&guard_state, memory_order_acquire);
  if (likely(s == 2)) return true;
  if (s != 0 || !atomic_compare_exchange_strong(&guard_state, &s, 1)) return false;
  size_t bytes = (2 * (size_t)GUARD_SLOTS + 1) * page();
  char *meta = os_map(GUARD_META_BYTES, 0, false);
  char *base = meta != NULL ? os_reserve(bytes, page()) : NULL;
  if (base == NULL || !os_protect(base, bytes, false) || !os_signal_catch(11, guard_fault)) {
    atomic_store(&guard_state, 3);
    return false;
  }
  os_nohugepage(base, bytes);
  slots = (guard_slot_t *)meta;
  queue = (uint32_t *)(meta + sizeof(guard_slot_t) * GUARD_SLOTS);
  guard_bytes = bytes;
  guard_base = base;
  atomic_store_explicit(&guard_state, 2, memory_order_release);
  return true;
}

bool guard_owns(const void *p) {
  return guard_base != NULL && (uintptr_t)p - (uintptr_t)guard_base < guard_bytes;
}

static void keep_stack(uintptr_t *dst, uint32_t *n, const uintptr_t *pc, unsigned depth) {
  *n = depth < UNWIND_MAX / 2 ? depth : UNWIND_MAX / 2;
  memcpy(dst, pc, *n * sizeof *pc);
}

void *guard_alloc(size_t n, size_t align, const uintptr_t *pc, unsigned depth) {
  if (n > page() || align > page() || !guard_make()) return NULL;
  uint32_t i;
  lock_take(&guard_lock);
  if (live >= GUARD_LIVE || (never_used == GUARD_SLOTS && q_len == 0)) {
    lock_drop(&guard_lock);
    return NULL;
  }
  if (never_used < GUARD_SLOTS) {
    i = never_used++;
  } else {
    i = queue[q_head];
    q_head = (q_head + 1) % GUARD_SLOTS;
    q_len--;
  }
  live++;
  slots[i].state = SLOT_LIVE;
  lock_drop(&guard_lock);
  if (align < 16) align = 16;
  char *end = slot_page(i) + page();
  uintptr_t at = ((uintptr_t)end - (n ? n : 1)) & ~(uintptr_t)(align - 1);
  slots[i].at = at;
  slots[i].size = n;
  slots[i].nfree = 0;
  keep_stack(slots[i].alloc_pc, &slots[i].nalloc, pc, depth);
  if (!os_protect(slot_page(i), page(), true)) {
    lock_take(&guard_lock);
    slots[i].state = SLOT_FREE; /* lost to the pool: never taken again */
    live--;
    lock_drop(&guard_lock);
    return NULL;
  }
  return (void *)at;
}

size_t guard_size(const void *p) {
  uint32_t i = (uint32_t)(((uintptr_t)p - (uintptr_t)guard_base) / page() / 2);
  return i < GUARD_SLOTS ? (uintptr_t)slot_page(i) + page() - (uintptr_t)p : 0;
}

/* ---- the report ---------------------------------------------------------- */

static char report[8192];
static size_t report_len;

static void say(const char *s) { symbol_puts(s, report, sizeof report, &report_len); }
static void say_u(uint64_t v, bool hex) { symbol_putu(v, hex, report, sizeof report, &report_len); }

static void say_stack(const char *what, const uintptr_t *pc, uint32_t n) {
  say(what);
  if (n == 0) say(" (no stack)\n");
  else say(":\n");
  for (uint32_t k = 0; k < n; k++) {
    say("    #");
    say_u(k, false);
    say(" ");
    symbol_put(pc[k] - (k > 0), report, sizeof report, &report_len);
    say("\n");
  }
}

/* Print the report on the block of slot i and abort. */
static _Noreturn void guard_report(const char *kind, uintptr_t addr, uint32_t i, const uintptr_t *pc,
                                   unsigned depth) {
  static _Atomic int once;
  if (atomic_exchange(&once, 1)) for (;;) os_futex_wait(&once, 1); /* one report: the others wait */
  bool named = symbol_begin();
  report_len = 0;
  say("smpalloc: guarded sample: ");
  say(kind);
  say(" at ");
  say_u(addr, true);
  if (i < GUARD_SLOTS && slots[i].state != SLOT_FREE) {
    const guard_slot_t *s = &slots[i];
    say(", ");
    if (addr >= s->at) say_u(addr - s->at, false), say(" bytes into");
    else say_u(s->at - addr, false), say(" bytes before");
    say(" a block of ");
    say_u(s->size, false);
    say(" bytes at ");
    say_u(s->at, true);
    say("\n");
    say_stack("  allocated", s->alloc_pc, s->nalloc);
    if (s->state == SLOT_FREED) say_stack("  freed", s->free_pc, s->nfree);
  } else {
    say("\n");
  }
  if (pc != NULL) say_stack("  freed again", pc, depth);
  os_write_err(report, report_len);
  if (named) symbol_end();
  os_fatal("guard", "aborting after the report above", NULL);
}

void guard_free(void *p, const uintptr_t *pc, unsigned depth) {
  uint32_t i = (uint32_t)(((uintptr_t)p - (uintptr_t)guard_base) / page() / 2);
  lock_take(&guard_lock);
  if (i >= GUARD_SLOTS || slots[i].state != SLOT_LIVE || slots[i].at != (uintptr_t)p) {
    lock_drop(&guard_lock);
    bool twice = i < GUARD_SLOTS && slots[i].state == SLOT_FREED && slots[i].at == (uintptr_t)p;
    guard_report(twice ? "double free" : "invalid free", (uintptr_t)p, i, pc, depth);
  }
  slots[i].state = SLOT_FREED;
  keep_stack(slots[i].free_pc, &slots[i].nfree, pc, depth);
  lock_drop(&guard_lock);
  os_decommit(slot_page(i), page());
  os_protect(slot_page(i), page(), false);
  lock_take(&guard_lock);
  queue[(q_head + q_len++) % GUARD_SLOTS] = i;
  live--;
  lock_drop(&guard_lock);
}

/* SIGSEGV: in the pool, the report; elsewhere, the handler before ours.
 * In a guard page, the nearer slot's block is the one at fault: the first
 * half of the page lies after a block (overflow), the second before the
 * next slot's (underflow). */
static void guard_fault(int sig, void *info, void *ctx) {
  uintptr_t a = os_fault_addr(info);
  if (!guard_owns((void *)a)) return os_signal_forward(sig, info, ctx);
  size_t off = a - (uintptr_t)guard_base, pg = off / page();
  if (pg % 2 == 1) {
    uint32_t i = (uint32_t)(pg / 2);
    guard_report(slots[i].state == SLOT_FREED ? "use after free" : "access to an unused slot", a, i, NULL, 0);
  }
  bool first_half = off % page() < page() / 2;
  if ((first_half && pg > 0) || pg / 2 >= GUARD_SLOTS)
    guard_report("buffer overflow", a, (uint32_t)(pg / 2 - 1), NULL, 0);
  guard_report("buffer underflow", a, (uint32_t)(pg / 2), NULL, 0);
}

void guard_fork_prepare(void) { lock_take(&guard_lock); }
void guard_fork_parent(void) { lock_drop(&guard_lock); }
void guard_fork_child(void) { lock_reset(&guard_lock); }
