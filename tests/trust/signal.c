/* signal.c - threads allocate and free heavily while signals keep
 * arriving: SIGALRM and SIGPROF from interval timers (setitimer, 100 us)
 * and SIGUSR1 from a thread that pthread_kill()s the workers in a loop.
 * The handlers allocate nothing (malloc is not async-signal-safe): they
 * count, touch errno and put it back.  Handlers are installed without
 * SA_RESTART, so system calls inside the allocator (futex waits on a busy
 * slot, mmap) see EINTR.
 *
 * usage: signal [threads] [iterations] [min_signals]
 * Each worker runs `iterations` operations (malloc, calloc, realloc,
 * aligned_alloc, posix_memalign, free; blocks handed between threads
 * through a shared array), every block carrying a pattern that is checked
 * before it is freed or resized, errno checked after every successful call;
 * then it keeps working until it has itself taken min_signals SIGUSR1s, so
 * the signals certainly land during allocation work (no timing).  Exit 0
 * and "signal: ok" when everything held; a hang is the caller's to
 * bound (timeout). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define S_TEST "signal"
#include "../api/names.h"

#define NLOCAL 64
#define NSHARED 256
#define MAXT 64

/* A block starts with its header: size and seed; the rest is the pattern. */
typedef struct {
  size_t n;
  uint64_t seed;
} hdr_t;

static _Atomic(uintptr_t) shared[NSHARED];
static atomic_ulong sig_usr1, sig_alrm, sig_prof, ops_total, handoffs;
static atomic_int done_workers, stop_killer;
static __thread volatile unsigned long tl_usr1;
static long g_iters;
static pthread_barrier_t all_done;
static unsigned long g_min_sigs;

static void fail(const char *what, unsigned long a) {
  fprintf(stderr, "%s: FAIL: %s (%lu)\n", S_NAME, what, a);
  abort();
}

static void on_signal(int sig) {
  int saved = errno;
  errno = EINTR; /* scribble: the interrupted code must never see it */
  if (sig == SIGUSR1) {
    tl_usr1++;
    atomic_fetch_add_explicit(&sig_usr1, 1, memory_order_relaxed);
  } else if (sig == SIGALRM) {
    atomic_fetch_add_explicit(&sig_alrm, 1, memory_order_relaxed);
  } else {
    atomic_fetch_add_explicit(&sig_prof, 1, memory_order_relaxed);
  }
  errno = saved;
}

static inline uint8_t pat(uint64_t seed, size_t i) { return (uint8_t)((seed >> (i & 31)) + i * 7); }

static void fill(unsigned char *p, size_t n, uint64_t seed) {
  if (n < sizeof(hdr_t)) {
    for (size_t i = 0; i < n; i++) p[i] = pat(seed, i);
    return;
  }
  hdr_t h = {n, seed};
  memcpy(p, &h, sizeof h);
  for (size_t i = sizeof h; i < n; i++) p[i] = pat(seed, i);
}

/* Check a block of known size and seed (local) or from its header. */
static void check(const unsigned char *p, size_t n, uint64_t seed) {
  if (n < sizeof(hdr_t)) {
    for (size_t i = 0; i < n; i++)
      if (p[i] != pat(seed, i)) fail("small block changed", i);
    return;
  }
  hdr_t h;
  memcpy(&h, p, sizeof h);
  if (h.n != n || h.seed != seed) fail("block header changed", h.n);
  for (size_t i = sizeof h; i < n; i++)
    if (p[i] != pat(seed, i)) fail("block contents changed", i);
}
static void check_shared(const unsigned char *p) {
  hdr_t h;
  memcpy(&h, p, sizeof h);
  if (h.n < sizeof h || h.n > (1u << 22)) fail("shared block header", h.n);
  check(p, h.n, h.seed);
}

static uint64_t rnd(uint64_t *s) {
  uint64_t x = (*s += 0x9e3779b97f4a7c15u);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

static size_t pick_size(uint64_t r) {
  unsigned c = (unsigned)(r % 64);
  r >>= 6;
  if (c < 40) return 1 + r % 256;
  if (c < 58) return 256 + r % 8192;
  if (c < 63) return 8192 + r % 40000;
  return 40000 + r % (1u << 20);
}

static void *worker(void *arg) {
  uint64_t s = (uint64_t)(uintptr_t)arg * 0x51ed27u + 1;
  unsigned char *blk[NLOCAL] = {0};
  size_t len[NLOCAL] = {0};
  uint64_t seed[NLOCAL] = {0};
  unsigned long ops = 0;
  for (long it = 0; it < g_iters || tl_usr1 < g_min_sigs; it++) {
    uint64_t r = rnd(&s);
    unsigned i = (unsigned)(r % NLOCAL);
    unsigned what = (unsigned)((r >> 8) % 10);
    size_t n = pick_size(r >> 16);
    ops++;
    if (blk[i] && what < 4) { /* free, or hand to another thread */
      check(blk[i], len[i], seed[i]);
      if (what == 0 && len[i] >= sizeof(hdr_t)) {
        uintptr_t old = atomic_exchange(&shared[(r >> 40) % NSHARED], (uintptr_t)blk[i]);
        if (old) {
          check_shared((unsigned char *)old);
          S_free((void *)old);
          atomic_fetch_add_explicit(&handoffs, 1, memory_order_relaxed);
        }
      } else {
        S_free(blk[i]);
      }
      blk[i] = NULL;
      continue;
    }
    if (blk[i] && what < 6) { /* realloc */
      check(blk[i], len[i], seed[i]);
      errno = 0;
      unsigned char *q = S_realloc(blk[i], n);
      if (!q) fail("realloc failed", n);
      if (errno != 0) fail("errno changed by realloc", (unsigned long)errno);
      size_t keep = len[i] < n ? len[i] : n;
      /* The kept prefix is the old pattern; refill the whole block. */
      for (size_t k = sizeof(hdr_t); k < keep; k++)
        if (q[k] != pat(seed[i], k)) fail("realloc lost contents", k);
      blk[i] = q;
      len[i] = n;
      seed[i] = r;
      fill(q, n, r);
      continue;
    }
    if (blk[i]) {
      check(blk[i], len[i], seed[i]);
      S_free(blk[i]);
    }
    errno = 0;
    unsigned char *p;
    switch (what) {
      case 6: p = S_calloc(1, n);
        if (p) for (size_t k = 0; k < n; k++) if (p[k]) fail("calloc not zero", k);
        break;
      case 7: p = S_aligned_alloc((size_t)64 << (r % 7), n); break;
      case 8: {
        void *o = NULL;
        if (S_posix_memalign(&o, (size_t)16 << (r % 5), n) != 0) fail("posix_memalign", n);
        p = o;
        break;
      }
      default: p = S_malloc(n); break;
    }
    if (!p) fail("allocation failed", n);
    if (errno != 0) fail("errno changed by a successful call", (unsigned long)errno);
    blk[i] = p;
    len[i] = n;
    seed[i] = r;
    fill(p, n, r);
  }
  for (unsigned i = 0; i < NLOCAL; i++)
    if (blk[i]) {
      check(blk[i], len[i], seed[i]);
      S_free(blk[i]);
    }
  atomic_fetch_add(&ops_total, ops);
  atomic_fetch_add(&done_workers, 1);
  /* Stay alive (and a valid pthread_kill target) until main has stopped
   * the killer. */
  pthread_barrier_wait(&all_done);
  return NULL;
}

static pthread_t workers[MAXT];
static int nthreads;

static void *killer(void *arg) {
  (void)arg;
  unsigned long sent = 0;
  while (!atomic_load(&stop_killer)) {
    for (int i = 0; i < nthreads; i++) {
      int rc = pthread_kill(workers[i], SIGUSR1);
      if (rc == 0) sent++;
    }
  }
  return (void *)(uintptr_t)sent;
}

int main(int argc, char **argv) {
  nthreads = argc > 1 ? atoi(argv[1]) : 6;
  g_iters = argc > 2 ? atol(argv[2]) : 100000;
  g_min_sigs = argc > 3 ? strtoul(argv[3], NULL, 0) : 2000;
  if (nthreads < 1 || nthreads > MAXT) nthreads = 6;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: interrupted system calls return EINTR */
  if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGALRM, &sa, NULL) || sigaction(SIGPROF, &sa, NULL)) {
    perror("sigaction");
    return 2;
  }
  /* Timers first, so that even thread creation is interrupted. */
  struct itimerval tv = {{0, 100}, {0, 100}};
  if (setitimer(ITIMER_REAL, &tv, NULL) || setitimer(ITIMER_PROF, &tv, NULL)) {
    perror("setitimer");
    return 2;
  }
  pthread_barrier_init(&all_done, NULL, (unsigned)nthreads + 1);
  for (int i = 0; i < nthreads; i++)
    if (pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0) {
      perror("pthread_create");
      return 2;
    }
  pthread_t k;
  if (pthread_create(&k, NULL, killer, NULL) != 0) return 2;
  pthread_barrier_wait(&all_done); /* every worker has finished its work */
  atomic_store(&stop_killer, 1);
  void *sent;
  pthread_join(k, &sent);
  for (int i = 0; i < nthreads; i++) pthread_join(workers[i], NULL);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  setitimer(ITIMER_PROF, &off, NULL);
  /* What is left in the exchange, from threads now gone. */
  unsigned long left = 0;
  for (unsigned i = 0; i < NSHARED; i++) {
    uintptr_t p = atomic_exchange(&shared[i], 0);
    if (p) {
      check_shared((unsigned char *)p);
      S_free((void *)p);
      left++;
    }
  }
  /* Everything still works, from the main thread. */
  for (int i = 0; i < 1000; i++) {
    size_t n = pick_size((uint64_t)i * 0x9e3779b97f4a7c15u);
    unsigned char *p = S_malloc(n);
    if (!p) fail("allocation after the run", n);
    fill(p, n, (uint64_t)i);
    check(p, n, (uint64_t)i);
    S_free(p);
  }
#ifdef API_PREFIX
  smp_collect();
#endif
  printf("%s: ok: %d threads, %lu operations, %lu handoffs (+%lu at exit); signals handled: "
         "SIGUSR1 %lu (sent %lu), SIGALRM %lu, SIGPROF %lu\n",
         S_NAME, nthreads, atomic_load(&ops_total), atomic_load(&handoffs), left,
         atomic_load(&sig_usr1), (unsigned long)(uintptr_t)sent, atomic_load(&sig_alrm),
         atomic_load(&sig_prof));
  return 0;
}
