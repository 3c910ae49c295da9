/*
 * prof_out.c - what the profiler writes: heap profiles (the gperftools
 * text format that google-pprof reads), the leak report at exit, dumps on
 * demand (smp_prof_dump, or a signal whose handler only sets a flag: the
 * next allocation slow path writes the file).
 *
 * A profile:
 *   heap profile: <live blocks>: <live bytes> [<blocks>: <bytes>] @ heapprofile
 *   <live blocks>: <live bytes> [<blocks>: <bytes>] @ 0x<pc> 0x<pc> ...
 *   ...
 *   (empty line)
 *   MAPPED_LIBRARIES:
 *   <a copy of /proc/self/maps>
 * one line per stack, the figures estimated already (pprof's "heapprofile"
 * type: it scales nothing).  pprof takes one from every address but the
 * first to reach the call instruction: the first is written less one here.
 * Everything is formatted into mapped memory and written with write(2):
 * no allocation, no stdio.
 */
#include <stdlib.h>

#include "options.h"
#include "os.h"
#include "prof.h"
#include "smpalloc.h"
#include "symbol.h"
#include "stack.h"

#define LINE_MAX_BYTES (UNWIND_MAX * 19 + 128) /* a stack's line, at most */
#define MAPS_BYTES (2u << 20)
#define TOP 10

_Atomic int prof_asked;
static _Atomic unsigned dump_seq;

typedef struct {
  char *buf;
  size_t cap, len;
  double n, b, an, ab; /* totals */
} sink_t;

static void put(sink_t *s, const char *t) { symbol_puts(t, s->buf, s->cap, &s->len); }
static void put_u(sink_t *s, double v, bool hex) { symbol_putu(v > 0 ? (uint64_t)(v + 0.5) : 0, hex, s->buf, s->cap, &s->len); }

static void counts(sink_t *s, double n, double b, double an, double ab) {
  put_u(s, n, false);
  put(s, ": ");
  put_u(s, b, false);
  put(s, " [");
  put_u(s, an, false);
  put(s, ": ");
  put_u(s, ab, false);
  put(s, "]");
}

/* A figure as written: rounded, never below 0. */
static double whole(double v) { return v > 0 ? (double)(uint64_t)(v + 0.5) : 0; }

static void line(const prof_site_t *site, void *arg) {
  sink_t *s = arg;
  if (site->depth == 0 || s->len + LINE_MAX_BYTES > s->cap) return;
  double n = whole(site->live_n), b = whole(site->live_b), an = whole(site->alloc_n), ab = whole(site->alloc_b);
  counts(s, n, b, an, ab);
  put(s, " @");
  for (unsigned i = 0; i < site->depth; i++) {
    put(s, " ");
    put_u(s, (double)(site->pc[i] - (i == 0)), true);
  }
  put(s, "\n");
  s->n += n; /* the header's totals are the sums of the lines */
  s->b += b;
  s->an += an;
  s->ab += ab;
}

int prof_write(const char *path, bool peak) {
  size_t cap = (prof_nstacks() + 16) * LINE_MAX_BYTES + MAPS_BYTES;
  char *mem = os_map(cap, 0, false);
  if (mem == NULL) return -1;
  sink_t body = {.buf = mem + 256, .cap = cap - 256 - MAPS_BYTES};
  prof_each(line, &body, peak);
  sink_t head = {.buf = mem, .cap = 256};
  put(&head, "heap profile: ");
  counts(&head, body.n, body.b, body.an, body.ab);
  put(&head, " @ heapprofile\n");
  char *maps = mem + cap - MAPS_BYTES;
  size_t nmaps = os_read_file("/proc/self/maps", maps, MAPS_BYTES);
  int fd = os_file_create(path);
  if (fd >= 0) {
    os_write_fd(fd, head.buf, head.len);
    os_write_fd(fd, body.buf, body.len);
    os_write_fd(fd, "\nMAPPED_LIBRARIES:\n", 19);
    os_write_fd(fd, maps, nmaps);
    os_close(fd);
  }
  os_unmap(mem, cap);
  return fd >= 0 ? 0 : -1;
}

/* PREFIX.PID[.N][.peak].heap, PREFIX from SMPALLOC_PROF_DUMP or "smpalloc". */
static void dump_path(char *out, size_t cap, unsigned seq, bool peak) {
  size_t len = 0;
  out[0] = '\0';
  symbol_puts(options.prof_dump ? options.prof_dump : "smpalloc", out, cap, &len);
  symbol_puts(".", out, cap, &len);
  symbol_putu((uint64_t)os_getpid(), false, out, cap, &len);
  if (seq) symbol_puts(".", out, cap, &len), symbol_putu(seq, false, out, cap, &len);
  symbol_puts(peak ? ".peak.heap" : ".heap", out, cap, &len);
}

void prof_poll(void) {
  if (atomic_exchange_explicit(&prof_asked, 0, memory_order_acquire) == 0) return;
  char path[1100];
  dump_path(path, sizeof path, atomic_fetch_add(&dump_seq, 1) + 1, false);
  prof_write(path, false);
}

SMP_API int smp_prof_dump(const char *path) {
  char own[1100];
  if (path == NULL) {
    dump_path(own, sizeof own, atomic_fetch_add(&dump_seq, 1) + 1, false);
    path = own;
  }
  return prof_write(path, false);
}

static void asked(int sig, void *info, void *ctx) {
  (void)sig, (void)info, (void)ctx;
  atomic_store_explicit(&prof_asked, 1, memory_order_release);
}

/* ---- the leak report ----------------------------------------------------- */

typedef struct {
  prof_site_t top[TOP];
  unsigned n;
  double blocks, bytes;
  size_t stacks;
} leaks_t;

static void leak_site(const prof_site_t *site, void *arg) {
  leaks_t *l = arg;
  if (site->live_b < 0.5) return;
  l->blocks += site->live_n;
  l->bytes += site->live_b;
  l->stacks++;
  unsigned i = l->n < TOP ? l->n++ : TOP;
  for (; i > 0 && l->top[i - 1].live_b < site->live_b; i--)
    if (i < TOP) l->top[i] = l->top[i - 1];
  if (i < TOP) l->top[i] = *site;
}

static void leak_report(void) {
  static leaks_t l;
  prof_each(leak_site, &l, false);
  size_t cap = 64 << 10;
  char *mem = os_map(cap, 0, false);
  if (mem == NULL) return;
  sink_t s = {.buf = mem, .cap = cap};
  put(&s, "smpalloc: leak report (pid ");
  put_u(&s, os_getpid(), false);
  put(&s, "): about ");
  put_u(&s, l.bytes, false);
  put(&s, " bytes in ");
  put_u(&s, l.blocks, false);
  put(&s, " blocks still allocated at exit, estimated from the samples still live, by ");
  put_u(&s, (double)l.stacks, false);
  put(&s, " stacks");
  put(&s, l.n ? "; the largest:\n" : "\n");
  bool named = symbol_begin();
  for (unsigned i = 0; i < l.n; i++) {
    put(&s, "  about ");
    put_u(&s, l.top[i].live_b, false);
    put(&s, " bytes in ");
    put_u(&s, l.top[i].live_n, false);
    put(&s, " blocks (");
    put_u(&s, 100 * l.top[i].live_b / l.bytes, false);
    put(&s, "%) allocated at:\n");
    for (unsigned k = 0; k < l.top[i].depth && k < 16 && s.len + 1024 < s.cap; k++) {
      put(&s, "    #");
      put_u(&s, k, false);
      put(&s, " ");
      symbol_put(l.top[i].pc[k] - 1, s.buf, s.cap, &s.len);
      put(&s, "\n");
    }
  }
  if (named) symbol_end();
  os_write_err(s.buf, s.len);
  os_unmap(mem, cap);
}

/* ---- start-up and exit --------------------------------------------------- */

static void at_exit(void) {
  char path[1100];
  if (options.prof_dump != NULL) {
    dump_path(path, sizeof path, 0, false);
    prof_write(path, false);
    if (options.prof_peak) {
      dump_path(path, sizeof path, 0, true);
      prof_write(path, true);
    }
  }
  if (options.prof_leaks) leak_report();
}

void prof_start(void) {
  prof_allow_stacks();
  if (options.prof_signal != 0) os_signal_catch((int)options.prof_signal, asked);
  if (options.prof_dump != NULL || options.prof_leaks) atexit(at_exit);
}
