/*
 * stack.c - stacks from the DWARF unwinder (stack.h): libgcc_eh's, linked
 * in (the Makefile links the shared library with -static-libgcc and hides
 * its names: no dlopen, and no second copy of libgcc_s loaded for it).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <unwind.h>

#include "stack.h"

_Static_assert(sizeof(_Unwind_Reason_Code) == sizeof(int), "the unwinder's reason codes are ints");

/*
 * The walk stops at the program's outermost frame (main, a thread's start
 * routine) without unwinding libc's frames below it: the unwinder would
 * look up their FDEs (__libc_start_call_main, __libc_start_main;
 * start_thread, clone3) near the start of libc's .eh_frame, and the
 * kernel maps 64 KiB around each page fault there (fault-around): libc's
 * read-only mapping grew 128 KB in a process that sampled.  The stack
 * ends at the program's frame; the libc frames below it are left out.
 *
 * A context pairs a frame's instruction with its callee's CFA: the frame
 * is the program's outermost when nothing between that CFA and the top
 * of its stack (__libc_stack_end for the main thread; the thread pointer
 * for a thread, whose stack and static TLS lie just below it in one
 * mapping) may be a return address into a module other than libc, ld.so
 * and this library, or _start's (its entry point, which ld.so leaves in a
 * register that libc saves there, and its call of __libc_start_main):
 * a program frame further out (main calling qsort calling the
 * frame that allocates) left its return address there, after a call
 * instruction.  Words that may be one but are not keep the walk going:
 * never a wrong stop, at worst a whole walk as before.  Only within
 * STACK_TOP_NEAR bytes of the top, so that every word read lies in the
 * thread's own stack block (a frame that close below the main thread's
 * thread pointer, which is no stack, would have to be on an alternate
 * signal stack mapped right under its TLS, with a hole between them for
 * the read to fault).  x86-64 only: the call instructions' encodings.
 * Off where libc is not a module of its own (a -static program) or
 * _dl_find_object is missing (glibc < 2.35); no stop where this library
 * is linked into the program (its frames are then taken for ours).
 */
#if defined(__x86_64__) && defined(DLFO_STRUCT_HAS_EH_DBASE)
#define STACK_TOP_NEAR 8192u
extern void *__libc_stack_end;
/* Only its address: a name of libc's own, that no program defines. */
int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* The module of the words last looked up in a scan, and its executable
 * segment: most words that point into a module point into the program. */
typedef struct {
  uintptr_t lo, hi;     /* its mapping (hi 0: none yet) */
  uintptr_t x_lo, x_hi; /* its one executable segment (both 0: several, or not known) */
  uintptr_t entry;      /* its entry point, or 0 */
} module_t;

static void module_of(const struct dl_find_object *o, module_t *m) {
  const ElfW(Ehdr) *eh = o->dlfo_map_start;
  const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
  uintptr_t base = (uintptr_t)o->dlfo_link_map->l_addr;
  *m = (module_t){.lo = (uintptr_t)o->dlfo_map_start, .hi = (uintptr_t)o->dlfo_map_end};
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return; /* no ELF header at its start */
  m->entry = eh->e_entry != 0 ? base + eh->e_entry : 0;
  int n = 0;
  for (unsigned i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && n++ == 0)
      m->x_lo = base + ph[i].p_vaddr, m->x_hi = m->x_lo + ph[i].p_memsz;
  if (n > 1) m->x_lo = m->x_hi = 0;
}

/* [lo, hi) of libc's, ld.so's and this library's mappings (the frames
 * that are not the program's).  libc's 0: the check is off. */
static uintptr_t sys_lo[3], sys_hi[3];
static module_t libc_mod;

void unwind_init(void) {
  const void *at[3] = {(const void *)__libc_start_main, (const void *)_dl_find_object, (const void *)unwind_init};
  struct dl_find_object o[3];
  for (int i = 0; i < 3; i++)
    if (_dl_find_object((void *)at[i], &o[i]) != 0) return;
  if (o[0].dlfo_map_start == o[2].dlfo_map_start) return; /* libc linked in: a -static program */
  module_of(&o[0], &libc_mod);
  for (int i = 0; i < 3; i++) {
    sys_lo[i] = (uintptr_t)o[i].dlfo_map_start;
    sys_hi[i] = (uintptr_t)o[i].dlfo_map_end;
  }
}

static bool in_sys(uintptr_t a) {
  for (int i = 0; i < 3; i++)
    if (a - sys_lo[i] < sys_hi[i] - sys_lo[i]) return true;
  return false;
}

/* v is libc's __restore_rt, where a signal handler returns (mov $15,
 * %rax; syscall): a signal frame, above it the interrupted frame, whose
 * instruction follows no call. */
static bool sigreturn(uintptr_t v) {
  static const unsigned char code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
  return v - libc_mod.x_lo < libc_mod.x_hi - libc_mod.x_lo && libc_mod.x_hi - v >= sizeof code &&
         memcmp((const void *)v, code, sizeof code) == 0;
}

/* v may be a return address into a module other than libc's, ld.so's and
 * ours: in its executable segment (any word of a module with several),
 * after a call (E8 rel32 ending at v, or an FF /2 whose opcode byte lies
 * 2 to 7 bytes before v), not within 64 bytes of its entry point (_start's
 * own address and return address); or a signal frame's. */
static bool maybe_return(uintptr_t v, module_t *m) {
  if (v - m->lo >= m->hi - m->lo) {
    struct dl_find_object o;
    if (in_sys(v)) return sigreturn(v);
    if (_dl_find_object((void *)v, &o) != 0) return false;
    module_of(&o, m);
  }
  if (m->x_hi == 0) return true;
  if (v - m->x_lo >= m->x_hi - m->x_lo || v - m->entry < 64) return false;
  if (v - m->x_lo < 8) return true; /* the bytes before it are not the segment's */
  const unsigned char *c = (const unsigned char *)v;
  if (c[-5] == 0xE8) return true;
  for (int k = 2; k <= 7; k++)
    if (c[-k] == 0xFF) return true;
  return false;
}

/* The frame of instruction ip, whose callee's CFA is cfa, is the
 * outermost of its thread's program frames.  The words are read once a
 * walk, from the top down to the first that may be a return address:
 * w->outer, the lowest CFA that has none above it.  (Other frames' words:
 * not AddressSanitizer's business, their red zones included.) */
__attribute__((no_sanitize("address"))) static bool outermost(unwind_walk_t *w, uintptr_t ip, uintptr_t cfa) {
  uintptr_t end = (uintptr_t)__libc_stack_end, tp = (uintptr_t)__builtin_thread_pointer(), top;
  if (sys_hi[0] == 0 || in_sys(ip)) return false;
  if (cfa < end && end - cfa <= STACK_TOP_NEAR) top = end;
  else if (cfa < tp && tp - cfa <= STACK_TOP_NEAR) top = tp;
  else return false;
  if (w->top != top) {
    /* Small values, addresses in the stack itself (and above the main
     * thread's: its arguments and environment; the vdso at most) and
     * non-canonical ones (canaries) are no return addresses: not looked
     * up. */
    uintptr_t p = top, lo = cfa - 4096, hi = top == end ? end + ((uintptr_t)1 << 20) : top;
    module_t m = {0};
    for (; p - 8 >= cfa; p -= 8) {
      uintptr_t v = *(const uintptr_t *)(p - 8);
      if (v < 4096 || v >> 56 || v - lo < hi - lo) continue;
      if (maybe_return(v, &m)) break;
    }
    w->top = top;
    w->outer = p;
  }
  return cfa >= w->outer;
}
#else
void unwind_init(void) {}
static bool outermost(unwind_walk_t *w, uintptr_t ip, uintptr_t cfa) { return (void)w, (void)ip, (void)cfa, false; }
#endif

int unwind_frame(struct _Unwind_Context *ctx, void *arg) {
  unwind_walk_t *w = arg;
  /* A context pairs a return address with the frame address of the callee
   * that returns there: the entry point's own is the first kept. */
  uintptr_t cfa = (uintptr_t)_Unwind_GetCFA(ctx);
  if (cfa < w->cfa) return _URC_NO_REASON;
  uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  w->pc[w->n++] = ip;
  return w->n == w->max || outermost(w, ip, cfa) ? _URC_END_OF_STACK : _URC_NO_REASON;
}
