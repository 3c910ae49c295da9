/* cancel.c - threads cancelled in the middle of allocation work.
 *
 * usage: cancel [rounds] [threads]
 * Each round starts `threads` victims.  A victim registers a cleanup
 * handler (pthread_cleanup_push) that verifies and frees every block it
 * holds, then loops: allocate (malloc, calloc, realloc growth,
 * aligned_alloc), sometimes free, and between allocations pass a
 * cancellation point - nanosleep of 0, read() of /dev/zero,
 * pthread_testcancel() - or, in one victim in four, block in read() on an
 * empty pipe once it has done its share.  Main waits (semaphore) until
 * every victim has done a round-dependent number of batches, cancels them
 * all (deferred cancellation), joins them and checks PTHREAD_CANCELED.
 * Afterwards: every block allocated was freed by its cleanup handler
 * (counts), fresh threads and the main thread allocate and free normally,
 * smp_collect() works, and the bytes in use are back near where they
 * started (the cancelled threads' caches were given back).
 * Prints "cancel: ok ..." and exits 0 when everything held. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smpalloc.h"

#ifdef API_PREFIX
#define C_malloc smp_malloc
#define C_calloc smp_calloc
#define C_realloc smp_realloc
#define C_free smp_free
#define C_aligned_alloc smp_aligned_alloc
#define C_NAME "cancel(prefixed)"
#else
#define C_malloc malloc
#define C_calloc calloc
#define C_realloc realloc
#define C_free free
#define C_aligned_alloc aligned_alloc
#define C_NAME "cancel(plain)"
#endif

#define NHELD 128
#define MAXT 32

typedef struct {
  unsigned char *p[NHELD];
  size_t n[NHELD];
  unsigned idx;
  uint64_t rng;
} held_t;

static atomic_ulong n_alloc, n_freed, n_cleanups, n_batches;
static sem_t ready;
static int zero_fd, pipe_fd[2];
static unsigned g_need; /* batches each victim does before main may cancel */

static _Noreturn void fail(const char *what, unsigned long v) {
  fprintf(stderr, "%s: FAIL: %s (%lu)\n", C_NAME, what, v);
  abort();
}

static inline uint8_t pat(const void *p, size_t i) {
  return (uint8_t)(((uintptr_t)p >> 4) + i * 13);
}
static void fill(unsigned char *p, size_t from, size_t n) {
  for (size_t i = from; i < n; i++) p[i] = pat(p, i);
}
static void check(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != pat(p, i)) fail("block contents changed", i);
}

static uint64_t rnd(uint64_t *s) {
  uint64_t x = (*s += 0x9e3779b97f4a7c15u);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

static void release(held_t *h, unsigned i) {
  if (!h->p[i]) return;
  check(h->p[i], h->n[i]);
  C_free(h->p[i]);
  h->p[i] = NULL;
  atomic_fetch_add_explicit(&n_freed, 1, memory_order_relaxed);
}

static void release_all(held_t *h) {
  for (unsigned i = 0; i < NHELD; i++) release(h, i);
}

/* The victims' cleanup handler. */
static void cleanup(void *arg) {
  release_all(arg);
  atomic_fetch_add(&n_cleanups, 1);
}

/* One batch of allocation work; no cancellation point inside. */
static void batch(held_t *h) {
  for (int k = 0; k < 16; k++) {
    uint64_t r = rnd(&h->rng);
    unsigned i = (unsigned)(r % NHELD);
    unsigned what = (unsigned)((r >> 8) % 8);
    size_t n = (r >> 16) % 64 == 0 ? 40000 + (r >> 24) % 300000 : 1 + (r >> 24) % 2000;
    if (h->p[i] && what < 3) {
      release(h, i);
      continue;
    }
    if (h->p[i] && what < 5) { /* grow */
      check(h->p[i], h->n[i]);
      size_t m = h->n[i] * 2 + 1;
      unsigned char *q = C_realloc(h->p[i], m);
      if (!q) fail("realloc", m);
      h->p[i] = q;
      /* the pattern depends on the address: rewrite the kept part */
      for (size_t j = 0; j < h->n[i]; j++) q[j] = pat(q, j);
      fill(q, h->n[i], m);
      h->n[i] = m;
      continue;
    }
    release(h, i);
    unsigned char *p = what == 5 ? C_calloc(1, n) : what == 6 ? C_aligned_alloc(256, n) : C_malloc(n);
    if (!p) fail("allocation", n);
    if (what == 5)
      for (size_t j = 0; j < n; j++)
        if (p[j]) fail("calloc not zero", j);
    fill(p, 0, n);
    h->p[i] = p;
    h->n[i] = n;
    atomic_fetch_add_explicit(&n_alloc, 1, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&n_batches, 1, memory_order_relaxed);
}

static void *victim(void *arg) {
  held_t h;
  memset(&h, 0, sizeof h);
  h.idx = (unsigned)(uintptr_t)arg;
  h.rng = h.idx * 0x2545f4914f6cdd1du + 7;
  pthread_cleanup_push(cleanup, &h);
  unsigned done = 0;
  for (;;) {
    batch(&h);
    if (++done == g_need + h.idx % 7) sem_post(&ready);
    struct timespec ts = {0, 0};
    char c;
    switch (done % 3) {
      case 0: nanosleep(&ts, NULL); break;
      case 1:
        if (read(zero_fd, &c, 1) != 1) fail("read /dev/zero", 0);
        break;
      default: pthread_testcancel(); break;
    }
    if (h.idx % 4 == 3 && done > g_need + h.idx % 7) {
      /* Block in read() on an empty pipe until cancelled. */
      ssize_t r = read(pipe_fd[0], &c, 1);
      fail("read of an empty pipe returned", (unsigned long)r);
    }
  }
  pthread_cleanup_pop(1); /* not reached: the loop ends by cancellation */
  return NULL;
}

/* A plain worker: allocate and free, verified, and exit normally. */
static void *normal(void *arg) {
  held_t h;
  memset(&h, 0, sizeof h);
  h.rng = (uint64_t)(uintptr_t)arg;
  for (int i = 0; i < 200; i++) batch(&h);
  release_all(&h);
  return NULL;
}

static size_t in_use(void) {
  smp_stats_t st;
#ifdef API_PREFIX
  smp_collect();
  if (smp_stats_get(&st) != 0) fail("smp_stats_get", 0);
#else
  size_t (*collect)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "smp_collect");
  int (*get)(smp_stats_t *) = (int (*)(smp_stats_t *))dlsym(RTLD_DEFAULT, "smp_stats_get");
  if (!collect || !get) return 0; /* not under smpalloc: nothing to measure */
  collect();
  if (get(&st) != 0) fail("smp_stats_get", 0);
#endif
  return st.bytes_in_use;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  int nt = argc > 2 ? atoi(argv[2]) : 4;
  if (nt < 1 || nt > MAXT) nt = 4;
  zero_fd = open("/dev/zero", O_RDONLY);
  if (zero_fd < 0 || pipe(pipe_fd) != 0 || sem_init(&ready, 0, 0) != 0) {
    perror("setup");
    return 2;
  }
  /* Warm up: the main thread's cache, a thread's first allocation. */
  pthread_t t[MAXT];
  pthread_create(&t[0], NULL, normal, (void *)1);
  pthread_join(t[0], NULL);
  size_t before = in_use();
  unsigned long canceled = 0;
  for (int r = 0; r < rounds; r++) {
    g_need = 1 + (unsigned)(r * 7 % 40);
    for (int i = 0; i < nt; i++)
      if (pthread_create(&t[i], NULL, victim, (void *)(uintptr_t)(r * nt + i)) != 0) fail("pthread_create", 0);
    for (int i = 0; i < nt; i++)
      while (sem_wait(&ready) != 0) {
      }
    for (int i = 0; i < nt; i++)
      if (pthread_cancel(t[i]) != 0) fail("pthread_cancel", (unsigned long)i);
    for (int i = 0; i < nt; i++) {
      void *ret;
      if (pthread_join(t[i], &ret) != 0) fail("pthread_join", (unsigned long)i);
      if (ret != PTHREAD_CANCELED) fail("a victim was not cancelled", (unsigned long)i);
      canceled++;
    }
  }
  if (atomic_load(&n_cleanups) != canceled) fail("cleanup handlers run", atomic_load(&n_cleanups));
  if (atomic_load(&n_alloc) != atomic_load(&n_freed)) fail("blocks not freed", atomic_load(&n_alloc) - atomic_load(&n_freed));
  /* Business as usual, from fresh threads and from main. */
  for (int i = 0; i < nt; i++) pthread_create(&t[i], NULL, normal, (void *)(uintptr_t)(1000 + i));
  for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
  normal((void *)99);
  size_t after = in_use();
  long grew = (long)after - (long)before;
  printf("%s: ok: %d rounds, %lu threads cancelled, %lu batches, %lu blocks allocated and freed, "
         "bytes in use %zu -> %zu\n",
         C_NAME, rounds, canceled, atomic_load(&n_batches), atomic_load(&n_alloc), before, after);
  /* Cancelled threads' caches came back: what is in use after collecting
   * did not grow by more than a thread cache or two. */
  if (grew > (long)(1u << 20)) fail("bytes in use grew after the cancellations", (unsigned long)grew);
  return 0;
}
