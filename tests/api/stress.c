/* stress.c - multi-threaded allocator stress test.
 *
 * usage: stress [threads] [iterations] [seed] [rounds] [max_large]
 *   threads     threads alive at a time (default 8)
 *   iterations  operations per thread (default 20000)
 *   seed        everything random derives from it (default 1)
 *   rounds      each of the `threads` positions is run by `rounds` threads
 *               in turn: a thread is joined and a fresh one started in its
 *               place throughout the run (default 4)
 *   max_large   largest block size in bytes (default 4 MiB)
 *
 * Every block carries a pattern derived from its address, the seed and a
 * per-block tag; blocks of 16 bytes or more start with a header (size, tag)
 * so that another thread can check and free them.  Each thread mixes
 * malloc, calloc, aligned allocation, realloc and free, and hands blocks to
 * other threads through a shared array of atomic slots (exchange): whatever
 * it gets back was allocated by some other (maybe exited) thread and is
 * verified and then freed or adopted.  The pattern is checked before every
 * free and realloc.  Any corruption aborts with a message.
 *
 * Built with the libc names (for LD_PRELOAD runs) or, with -DAPI_PREFIX, with
 * the smp_* names and linked with the allocator sources. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_TEST "stress"
#include "names.h"

#define NSHARED 4096
#define NLOCAL 64
#define HDR 16

static _Atomic(uintptr_t) shared[NSHARED];
static uint64_t g_seed;
static size_t g_max_large = (size_t)4 << 20;
static long g_iters;
static atomic_ulong g_ops, g_handoffs, g_verified_bytes, g_misaligned;

struct item {
  unsigned char *p;
  size_t n;
  uint64_t tag;
};

struct task {
  pthread_t th;
  unsigned long index;
};

static inline uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

static inline uint64_t rnd(uint64_t *s)
{
  *s += 0x9e3779b97f4a7c15ULL;
  return mix64(*s);
}

static inline uint64_t block_key(uintptr_t addr, uint64_t tag)
{
  return mix64(addr ^ (tag * 0x9e3779b97f4a7c15ULL) ^ g_seed);
}

static inline unsigned char pat_byte(uint64_t key, size_t i)
{
  return (unsigned char)(mix64(key + (i >> 3)) >> ((i & 7) * 8));
}

/* The byte at offset i of a block of n bytes at addr with this tag. */
static inline unsigned char expect_byte(uintptr_t addr, size_t n, uint64_t tag, size_t i)
{
  if (n >= HDR && i < HDR) {
    uint64_t h[2] = {(uint64_t)n, tag};
    unsigned char b[HDR];
    memcpy(b, h, HDR);
    return b[i];
  }
  return pat_byte(block_key(addr, tag), i);
}

static void fill_block(unsigned char *p, size_t n, uint64_t tag)
{
  size_t i = 0;
  if (n >= HDR) {
    uint64_t h[2] = {(uint64_t)n, tag};
    memcpy(p, h, HDR);
    i = HDR;
  }
  uint64_t key = block_key((uintptr_t)p, tag);
  for (; i + 8 <= n; i += 8) {
    uint64_t w = mix64(key + (i >> 3));
    memcpy(p + i, &w, 8);
  }
  for (; i < n; i++) p[i] = pat_byte(key, i);
}

static _Noreturn void corrupt(const char *what, const void *p, size_t n, size_t at, unsigned long task)
{
  fprintf(stderr, "%s: task %lu: %s: block %p of %zu bytes wrong at byte %zu\n", S_NAME, task, what, p,
          n, at);
  abort();
}

/* Check bytes [0, limit) of mem against the content a block of n bytes at
 * addr with tag must have; returns the first wrong offset or limit. */
static size_t check_content(const unsigned char *mem, uintptr_t addr, size_t n, uint64_t tag, size_t limit)
{
  size_t i = 0;
  for (; i < limit && i < HDR && n >= HDR; i++)
    if (mem[i] != expect_byte(addr, n, tag, i)) return i;
  uint64_t key = block_key(addr, tag);
  for (; (i & 7) && i < limit; i++)
    if (mem[i] != pat_byte(key, i)) return i;
  for (; i + 8 <= limit; i += 8) {
    uint64_t w;
    memcpy(&w, mem + i, 8);
    if (w != mix64(key + (i >> 3))) {
      for (;; i++)
        if (mem[i] != pat_byte(key, i)) return i;
    }
  }
  for (; i < limit; i++)
    if (mem[i] != pat_byte(key, i)) return i;
  return limit;
}

static void verify_item(const struct item *it, const char *what, unsigned long task)
{
  size_t at = check_content(it->p, (uintptr_t)it->p, it->n, it->tag, it->n);
  if (at != it->n) corrupt(what, it->p, it->n, at, task);
  atomic_fetch_add_explicit(&g_verified_bytes, it->n, memory_order_relaxed);
}

static size_t rand_size(uint64_t *s, bool need_header)
{
  uint64_t r = rnd(s);
  unsigned c = (unsigned)(r % 1000);
  size_t n;
  r >>= 10;
  if (c < 500) n = 1 + r % 64;
  else if (c < 900) n = 1 + r % 1024;
  else if (c < 996 || g_max_large <= 65536) n = 1025 + r % (65536 - 1024);
  else n = 65537 + r % (g_max_large - 65536);
  if (need_header && n < HDR) n = HDR + n;
  return n;
}

/* Every block is 8-aligned, and 16-aligned if its size is a multiple of 16
 * (the header's promise).  A violation is counted and reported (the run
 * goes on, so that a sanitizer build can still look for other problems) and
 * makes the exit status 1. */
static void check_align(const void *p, size_t n, size_t align, const char *what, unsigned long task)
{
  uintptr_t a = (uintptr_t)p;
  size_t want = n % 16 == 0 ? 16 : 8;
  if (align > want) want = align;
  if ((a & (want - 1)) == 0) return;
  if (atomic_fetch_add(&g_misaligned, 1) < 5)
    fprintf(stderr, "%s: task %lu: %s of %zu bytes = %p, not %zu-aligned\n", S_NAME, task, what, n, p, want);
}

static void new_item(struct item *it, uint64_t *s, bool need_header, unsigned long task)
{
  size_t n = rand_size(s, need_header);
  unsigned kind = (unsigned)(rnd(s) % 16);
  unsigned char *p = NULL;
  size_t align = 0;
  if (kind == 0) {
    p = S_calloc(1, n);
    if (p) {
      for (size_t i = 0; i < n; i++)
        if (p[i]) corrupt("calloc not zeroed", p, n, i, task);
    }
  } else if (kind == 1) {
    align = (size_t)16 << (rnd(s) % 9); /* 16 .. 4096 */
    p = S_aligned_alloc(align, n);
  } else if (kind == 2) {
    void *q = NULL;
    align = (size_t)8 << (rnd(s) % 8); /* 8 .. 1024 */
    if (S_posix_memalign(&q, align, n) != 0) q = NULL;
    p = q;
  } else {
    p = S_malloc(n);
  }
  if (!p) {
    fprintf(stderr, "%s: task %lu: allocation of %zu bytes failed (errno %d)\n", S_NAME, task, n, errno);
    abort();
  }
  check_align(p, n, align, kind == 0 ? "calloc" : kind == 1 ? "aligned_alloc" : kind == 2 ? "posix_memalign" : "malloc", task);
  it->p = p;
  it->n = n;
  it->tag = rnd(s);
  fill_block(p, n, it->tag);
}

static void free_item(struct item *it, const char *what, unsigned long task)
{
  verify_item(it, what, task);
  S_free(it->p);
  it->p = NULL;
}

static void realloc_item(struct item *it, uint64_t *s, unsigned long task)
{
  verify_item(it, "before realloc", task);
  size_t n = rand_size(s, false);
  if (rnd(s) % 4 == 0) n = it->n + 1 + rnd(s) % 64; /* small growth */
  uintptr_t old_addr = (uintptr_t)it->p;
  unsigned char *p = S_realloc(it->p, n);
  if (!p) {
    fprintf(stderr, "%s: task %lu: realloc to %zu failed\n", S_NAME, task, n);
    abort();
  }
  check_align(p, n, 0, "realloc", task);
  size_t keep = n < it->n ? n : it->n;
  size_t at = check_content(p, old_addr, it->n, it->tag, keep);
  if (at != keep) corrupt("contents lost by realloc", p, n, at, task);
  it->p = p;
  it->n = n;
  it->tag = rnd(s);
  fill_block(p, n, it->tag);
}

/* Take a block someone put in a shared slot: read its header and verify. */
static void adopt(struct item *it, uintptr_t v, unsigned long task)
{
  uint64_t h[2];
  memcpy(h, (void *)v, HDR);
  if (h[0] < HDR || h[0] > g_max_large) corrupt("bad header in handed-off block", (void *)v, h[0], 0, task);
  it->p = (unsigned char *)v;
  it->n = (size_t)h[0];
  it->tag = h[1];
  verify_item(it, "handed-off block", task);
  atomic_fetch_add_explicit(&g_handoffs, 1, memory_order_relaxed);
}

/* Put a block (>= HDR bytes) into a random shared slot, and deal with what
 * was there. */
static void hand_off(struct item *it, uint64_t *s, unsigned long task, bool may_adopt)
{
  size_t k = rnd(s) % NSHARED;
  uintptr_t v = atomic_exchange_explicit(&shared[k], (uintptr_t)it->p, memory_order_acq_rel);
  it->p = NULL;
  if (v) {
    adopt(it, v, task);
    if (!may_adopt || rnd(s) % 2) free_item(it, "free of handed-off block", task);
  }
}

static void *worker(void *arg)
{
  struct task *t = arg;
  uint64_t s = mix64(g_seed * 0x2545f4914f6cdd1dULL + t->index + 1);
  struct item local[NLOCAL];
  memset(local, 0, sizeof local);
  for (long it = 0; it < g_iters; it++) {
    struct item *x = &local[rnd(&s) % NLOCAL];
    unsigned r = (unsigned)(rnd(&s) % 100);
    if (r < 35) {
      if (x->p) free_item(x, "free before reuse", t->index);
      new_item(x, &s, false, t->index);
    } else if (r < 55) {
      if (x->p) free_item(x, "free", t->index);
    } else if (r < 70) {
      if (x->p) realloc_item(x, &s, t->index);
    } else if (r < 97) {
      if (x->p && x->n < HDR) free_item(x, "free small", t->index);
      if (!x->p) new_item(x, &s, true, t->index);
      hand_off(x, &s, t->index, true);
    } else {
      /* A burst of short-lived small blocks freed in reverse order. */
      struct item b[32];
      for (int i = 0; i < 32; i++) {
        size_t n = 1 + rnd(&s) % 256;
        b[i].p = S_malloc(n);
        if (!b[i].p) abort();
        b[i].n = n;
        b[i].tag = rnd(&s);
        fill_block(b[i].p, n, b[i].tag);
      }
      for (int i = 31; i >= 0; i--) free_item(&b[i], "burst free", t->index);
    }
    atomic_fetch_add_explicit(&g_ops, 1, memory_order_relaxed);
  }
  /* Leave: free half, hand the rest to whoever comes next. */
  for (int i = 0; i < NLOCAL; i++) {
    struct item *x = &local[i];
    if (!x->p) continue;
    if (x->n < HDR || rnd(&s) % 2) free_item(x, "free at exit", t->index);
    else hand_off(x, &s, t->index, false);
  }
  return NULL;
}

int main(int argc, char **argv)
{
  long threads = argc > 1 ? atol(argv[1]) : 8;
  g_iters = argc > 2 ? atol(argv[2]) : 20000;
  g_seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
  long rounds = argc > 4 ? atol(argv[4]) : 4;
  if (argc > 5) g_max_large = strtoull(argv[5], NULL, 0);
  if (threads < 1 || g_iters < 0 || rounds < 1 || g_max_large < 65536 * 2) {
    fprintf(stderr, "usage: %s [threads] [iterations] [seed] [rounds] [max_large>=131072]\n", argv[0]);
    return 2;
  }
#ifdef API_PREFIX
  const char *who = "smpalloc";
#else
  const char *who = dlsym(RTLD_DEFAULT, "smp_malloc") ? "smpalloc" : "glibc";
#endif
  printf("%s: allocator=%s threads=%ld iterations=%ld seed=%llu rounds=%ld max_large=%zu\n", S_NAME, who,
         threads, g_iters, (unsigned long long)g_seed, rounds, g_max_large);
  fflush(stdout);

  struct task *tasks = calloc((size_t)threads, sizeof *tasks);
  if (!tasks) return 2;
  unsigned long total = (unsigned long)threads * (unsigned long)rounds;
  /* Keep `threads` running: join the oldest, start its successor. */
  for (unsigned long i = 0; i < total; i++) {
    struct task *t = &tasks[i % (unsigned long)threads];
    if (i >= (unsigned long)threads) {
      if (pthread_join(t->th, NULL) != 0) return 3;
    }
    t->index = i;
    int rc = pthread_create(&t->th, NULL, worker, t);
    if (rc != 0) {
      fprintf(stderr, "%s: pthread_create: %s\n", S_NAME, strerror(rc));
      return 3;
    }
  }
  for (long i = 0; i < threads && (unsigned long)i < total; i++) pthread_join(tasks[i].th, NULL);
  /* Free what is left in the shared slots, checking it. */
  unsigned long left = 0;
  for (size_t k = 0; k < NSHARED; k++) {
    uintptr_t v = atomic_exchange(&shared[k], 0);
    if (!v) continue;
    struct item it;
    adopt(&it, v, ~0UL);
    free_item(&it, "final free", ~0UL);
    left++;
  }
  free(tasks);
  unsigned long mis = atomic_load(&g_misaligned);
  if (mis) {
    printf("%s: FAILED: %lu misaligned blocks\n", S_NAME, mis);
    return 1;
  }
  printf("%s: ok: %lu threads run, %lu ops, %lu hand-offs, %lu blocks left to main, %lu MiB verified\n",
         S_NAME, total, atomic_load(&g_ops), atomic_load(&g_handoffs), left,
         atomic_load(&g_verified_bytes) >> 20);
  return 0;
}
