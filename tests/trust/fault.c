/* fault.c - out of memory at every point of a mixed workload.
 *
 * usage (built with -DAPI_PREFIX -DSMP_FAULT_INJECTION, the smp_* names):
 *   fault sweep [scale [first last]]
 *     Measures how many kernel maps the workload needs (M), then for every
 *     N in 0..M+2 (or first..last) forks a child that sets
 *     smp_fault_countdown = N and runs the workload: after N successful
 *     maps every map fails.  In the child, every call must succeed or
 *     return NULL with errno ENOMEM (posix_memalign: ENOMEM, *out
 *     untouched), never fail while the countdown is not 0, and leave every
 *     live block as it was (each failure re-checks them all).  Then the
 *     countdown is set back to -1 and every kind of allocation must work
 *     again, the failed-to-grow block included; everything is verified and
 *     freed, smp_collect() runs.  The parent never allocates through
 *     smpalloc, so each child starts from a fresh allocator.
 *     FAULT_THREADS=T: the child runs the workload in T threads at once
 *     (the maps then vary from run to run; every N is still a fault point,
 *     and a lock left held on a failure path shows as a hang).
 * usage (built without, the libc names, run under LD_PRELOAD and ulimit -v):
 *   fault_plain ulimit
 *     Runs the workload again and again without freeing until calls fail
 *     (ENOMEM, live blocks intact), frees half and goes on, then frees all:
 *     a whole workload round must then succeed.
 * Prints "fault: ok ..." and exits 0 when everything held. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef API_PREFIX
#include "smpalloc.h"
#define F_malloc smp_malloc
#define F_calloc smp_calloc
#define F_realloc smp_realloc
#define F_free smp_free
#define F_aligned_alloc smp_aligned_alloc
#define F_posix_memalign smp_posix_memalign
#define F_usable smp_usable_size
#else
#include <malloc.h>
#define F_malloc malloc
#define F_calloc calloc
#define F_realloc realloc
#define F_free free
#define F_aligned_alloc aligned_alloc
#define F_posix_memalign posix_memalign
#define F_usable malloc_usable_size
#endif

#ifdef SMP_FAULT_INJECTION
#include <stdatomic.h>
extern _Atomic long smp_fault_countdown;
static long countdown(void) { return atomic_load(&smp_fault_countdown); }
#endif

/* Messages without stdio (stdio allocates, and memory may be out). */
static void say(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(1, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}
static void say_num(const char *pre, unsigned long v, const char *post) {
  char buf[32];
  int i = 31;
  buf[i] = '\0';
  do { buf[--i] = (char)('0' + v % 10); v /= 10; } while (v);
  say(pre);
  say(buf + i);
  say(post);
}
static _Noreturn void die(const char *what, unsigned long v, int line) {
  say_num("fault: line ", (unsigned long)line, ": ");
  say(what);
  say_num(" (", v, ")\n");
  _exit(1);
}
#define CHECK(c, v) do { if (!(c)) die(#c, (unsigned long)(v), __LINE__); } while (0)

/* ---- live blocks and their patterns --------------------------------------- */

#define NLIVE 512
typedef struct {
  unsigned char *p;
  size_t n;
  uint32_t seed;
} blk_t;
/* Per thread: the threaded sweep runs the workload in several threads. */
static __thread blk_t live[NLIVE];
static __thread unsigned long n_calls, n_fail;

static inline uint64_t word_at(uint32_t seed, size_t w) {
  return ((uint64_t)w + 1) * 0x9e3779b97f4a7c15u ^ ((uint64_t)seed << 20);
}
static void fill(unsigned char *p, uint32_t seed, size_t from, size_t n) {
  size_t i = from & ~(size_t)7;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = word_at(seed, i >> 3);
    memcpy(p + i, &v, 8);
  }
  for (; i < n; i++) p[i] = (unsigned char)(word_at(seed, i >> 3) >> ((i & 7) * 8));
}
static bool same(const unsigned char *p, uint32_t seed, size_t from, size_t to) {
  uint64_t acc = 0;
  size_t i = from;
  for (; i < to && (i & 7); i++) acc |= p[i] ^ (unsigned char)(word_at(seed, i >> 3) >> ((i & 7) * 8));
  for (; i + 8 <= to; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    acc |= v ^ word_at(seed, i >> 3);
  }
  for (; i < to; i++) acc |= p[i] ^ (unsigned char)(word_at(seed, i >> 3) >> ((i & 7) * 8));
  return acc == 0;
}
/* Big blocks: first and last 4 KiB and 64 bytes of every page; full: all. */
static bool intact(const blk_t *b, bool full) {
  if (full || b->n <= 65536) return same(b->p, b->seed, 0, b->n);
  if (!same(b->p, b->seed, 0, 4096) || !same(b->p, b->seed, b->n - 4096, b->n)) return false;
  for (size_t pg = 4096; pg + 4096 <= b->n; pg += 4096) {
    size_t off = pg + ((pg >> 12) * 192u) % 4032u;
    if (!same(b->p, b->seed, off, off + 64)) return false;
  }
  return true;
}
/* ulimit mode: blocks kept to use the memory up. */
#define NHOARD 4096
static blk_t hoard[NHOARD];

static void verify_all(bool full, int line) {
  for (unsigned i = 0; i < NLIVE; i++)
    if (live[i].p && !intact(&live[i], full)) die("a live block changed", i, line);
  for (unsigned i = 0; i < NHOARD; i++)
    if (hoard[i].p && !intact(&hoard[i], full)) die("a hoarded block changed", i, line);
}
static void put(unsigned i, void *p, size_t n, uint32_t seed) {
  CHECK(((uintptr_t)p & 7) == 0, (uintptr_t)p);
  CHECK(F_usable(p) >= n, n);
  live[i].p = p;
  live[i].n = n;
  live[i].seed = seed;
  fill(p, seed, 0, n);
}
static void drop(unsigned i) {
  if (!live[i].p) return;
  if (!intact(&live[i], true)) die("a block changed before free", i, __LINE__);
  F_free(live[i].p);
  live[i].p = NULL;
}

/* A call came back with NULL (err: errno or the posix_memalign result). */
static void failed(int err, int line) {
  n_fail++;
  if (err != ENOMEM) die("failure without ENOMEM", (unsigned long)err, line);
#ifdef SMP_FAULT_INJECTION
  if (countdown() != 0) die("failed while no fault was injected", (unsigned long)countdown(), line);
#endif
  verify_all(false, line);
}

/* ---- the workload ------------------------------------------------------------ */

static __thread uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t x = (rng_state += 0x9e3779b97f4a7c15u);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

/* The block grown by realloc from 16 bytes to GROW_MAX, in live[0]. */
#define GROW_MAX ((size_t)6 << 20)

static void grow_step(void) {
  blk_t *b = &live[0];
  size_t n = b->p ? b->n * 2 + 40 : 16;
  if (n > GROW_MAX) {
    drop(0);
    return;
  }
  errno = 0;
  n_calls++;
  unsigned char *q = F_realloc(b->p, n);
  if (q == NULL) {
    failed(errno, __LINE__);
    CHECK(b->p == NULL || intact(b, true), b->n); /* the old block is untouched */
    return;
  }
  if (b->p) CHECK(same(q, b->seed, 0, b->n), b->n);
  size_t old = b->p ? b->n : 0;
  b->p = q;
  b->n = n;
  fill(q, b->seed, old, n);
}

/* One round: `ops` operations of every kind, on slots base..NLIVE-1. */
static void workload(uint64_t seed, unsigned ops, bool free_some) {
  rng_state = seed;
  for (unsigned k = 0; k < ops; k++) {
    uint64_t r = rnd();
    unsigned i = 1 + (unsigned)(r % (NLIVE - 1));
    r >>= 16;
    unsigned what = (unsigned)(r % 16);
    r >>= 8;
    if (what == 15) { grow_step(); continue; }
    if (live[i].p) {
      if (free_some || what < 4) drop(i);
      continue;
    }
    size_t n;
    unsigned cls = (unsigned)(r % 16);
    r >>= 4;
    if (cls < 10) n = 1 + r % 512;                 /* small */
    else if (cls < 15) n = 512 + r % 32768;        /* medium, slab classes */
    else n = 32769 + r % ((size_t)1 << 20);        /* large */
    uint32_t s = (uint32_t)(seed + k);
    void *p = NULL;
    int err;
    errno = 0;
    n_calls++;
    switch (what % 5) {
      case 0: case 1: p = F_malloc(n); err = errno; break;
      case 2: {
        p = F_calloc(1 + n % 7, n / (1 + n % 7) + 1);
        err = errno;
        if (p) {
          size_t m = (1 + n % 7) * (n / (1 + n % 7) + 1);
          for (size_t j = 0; j < m; j++) CHECK(((unsigned char *)p)[j] == 0, j);
          n = m;
        }
        break;
      }
      case 3: {
        size_t a = (size_t)16 << (r % 17); /* 16 .. 1 MiB */
        p = F_aligned_alloc(a, n);
        err = errno;
        if (p) CHECK(((uintptr_t)p & (a - 1)) == 0, a);
        break;
      }
      default: {
        size_t a = (size_t)8 << (r % 14);
        void *out = &live[0];
        err = F_posix_memalign(&out, a, n);
        if (err == 0) {
          p = out;
          CHECK(((uintptr_t)p & (a - 1)) == 0, a);
        } else {
          CHECK(out == &live[0], err); /* *out untouched */
        }
        break;
      }
    }
    if (p == NULL) {
      failed(err, __LINE__);
      continue;
    }
    CHECK(errno == 0, errno); /* a success leaves errno alone */
    put(i, p, n, s);
  }
}

static void free_all(void) {
  for (unsigned i = 0; i < NLIVE; i++) drop(i);
}

/* After the faults: everything works again. */
static void recover(void) {
  n_fail = 0;
  verify_all(true, __LINE__);
  /* The growing block reaches its end now. */
  while (live[0].p == NULL || live[0].n * 2 + 40 <= GROW_MAX) {
    grow_step();
    CHECK(n_fail == 0, live[0].n);
  }
  static const size_t sizes[] = {0, 8, 100, 1000, 4000, 20000, 32768, 40000, 1 << 20, 5 << 20};
  void *p[10];
  for (unsigned k = 0; k < 10; k++) {
    p[k] = F_malloc(sizes[k]);
    CHECK(p[k] != NULL, sizes[k]);
    memset(p[k], 0xa5, sizes[k]);
  }
  void *c = F_calloc(3, 3 << 20), *a = F_aligned_alloc(1 << 20, 3000), *m = NULL;
  CHECK(c != NULL && a != NULL, 0);
  CHECK(F_posix_memalign(&m, 4096, 100000) == 0, 0);
  for (unsigned k = 0; k < 10; k++) F_free(p[k]);
  F_free(c);
  F_free(a);
  F_free(m);
  workload(99, 300, false);
  CHECK(n_fail == 0, n_fail);
  verify_all(true, __LINE__);
  free_all();
#ifdef API_PREFIX
  smp_collect();
#endif
}

#ifdef SMP_FAULT_INJECTION
/* Shared with the children (mmap: the parent never calls smpalloc). */
typedef struct {
  unsigned long calls, fails;
  long maps_left;
} report_t;

static unsigned scale = 1, nthreads = 1;
static atomic_ulong t_calls, t_fails;

/* One thread's share: the workload, then its blocks verified and freed
 * (still under the faults: freeing needs no memory). */
static void *sweep_thread(void *arg) {
  uint64_t base = (uint64_t)(uintptr_t)arg * 10;
  workload(base + 1, 300 * scale, false);
  workload(base + 2, 100 * scale, true);
  workload(base + 3, 200 * scale, false);
  atomic_fetch_add(&t_calls, n_calls);
  atomic_fetch_add(&t_fails, n_fail);
  if (nthreads > 1) {
    verify_all(true, __LINE__);
    free_all();
  }
  return NULL;
}

static int run_child(long n, report_t *rep) {
  pid_t pid = fork();
  if (pid < 0) { perror("fork"); exit(2); }
  if (pid == 0) {
    atomic_store(&smp_fault_countdown, n);
    if (nthreads == 1) {
      sweep_thread(0);
    } else {
      pthread_t t[16];
      for (unsigned i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, sweep_thread, (void *)(uintptr_t)i) != 0) die("pthread_create", i, __LINE__);
      for (unsigned i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    }
    rep->calls = atomic_load(&t_calls);
    rep->fails = atomic_load(&t_fails);
    rep->maps_left = atomic_load(&smp_fault_countdown);
    atomic_store(&smp_fault_countdown, -1);
    recover();
    _exit(0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) { perror("waitpid"); exit(2); }
  if (WIFSIGNALED(st)) {
    printf("fault: N=%ld: child killed by signal %d\n", n, WTERMSIG(st));
    return 1;
  }
  return WEXITSTATUS(st) != 0;
}

static int sweep(long first, long last) {
  report_t *rep = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (rep == MAP_FAILED) { perror("mmap"); return 2; }
  const long big = 1000000000L;
  memset(rep, 0, sizeof *rep);
  if (run_child(big, rep) != 0 || rep->fails != 0) {
    printf("fault: the workload fails without faults\n");
    return 1;
  }
  long maps = big - rep->maps_left;
  printf("fault: the workload (scale %u, %u thread%s) needs %ld maps, %lu calls\n", scale, nthreads,
         nthreads > 1 ? "s" : "", maps, rep->calls);
  if (last < 0) last = maps + 2;
  unsigned long injected = 0, points = 0, bad = 0, quiet = 0;
  for (long n = first; n <= last; n++) {
    memset(rep, 0, sizeof *rep);
    if (run_child(n, rep) != 0) {
      printf("fault: FAIL with the %ld-th map failing\n", n + 1);
      bad++;
      continue;
    }
    points++;
    injected += rep->fails;
    if (n == 0 && rep->fails == 0) {
      printf("fault: FAIL: no map allowed, yet no call failed\n");
      bad++;
    }
    /* A failed map need not fail a call (a thread cache is optional), and
     * the count of maps varies a little with addresses (re-aligning). */
    if (n < maps && rep->fails == 0) quiet++;
  }
  printf("fault: %lu fault points (N=%ld..%ld), %lu calls failed with ENOMEM (%lu points with "
         "no failing call), %lu bad\n", points, first, last, injected, quiet, bad);
  if (bad) return 1;
  printf("fault: ok\n");
  return 0;
}
#endif

/* Under ulimit -v: hoard blocks between workload rounds until the workload
 * fails (ENOMEM, nothing changed), free half the hoard and go on, free
 * everything: then everything must work again. */
static int ulimit_run(void) {
  unsigned nh = 0;
  unsigned long hoard_fail = 0;
  for (uint64_t round = 0; round < 2000 && n_fail < 300; round++) {
    workload(1000 + round, 100, false);
    for (unsigned k = 0; k < 4 && nh < NHOARD; k++) {
      size_t n = ((size_t)256 << 10) + (size_t)(round * 7919 + k * 104729) % ((size_t)1 << 20);
      errno = 0;
      n_calls++;
      void *p = F_malloc(n);
      if (p == NULL) {
        hoard_fail++;
        failed(errno, __LINE__);
        break;
      }
      CHECK(F_usable(p) >= n, n);
      hoard[nh] = (blk_t){p, n, (uint32_t)(77 + nh)};
      fill(p, hoard[nh].seed, 0, n);
      nh++;
    }
  }
  unsigned long fails_seen = n_fail;
  say_num("fault: filled: ", n_calls, " calls, ");
  say_num("", n_fail, " failed with ENOMEM (");
  say_num("", hoard_fail, " of them hoarding), ");
  say_num("", nh, " blocks hoarded\n");
  CHECK(n_fail > hoard_fail, n_fail); /* the workload itself met the limit */
  for (unsigned i = 0; i < nh; i += 2) {
    CHECK(intact(&hoard[i], true), i);
    F_free(hoard[i].p);
    hoard[i].p = NULL;
  }
  for (uint64_t round = 0; round < 20; round++) workload(5000 + round, 200, false);
  verify_all(true, __LINE__);
  for (unsigned i = 0; i < nh; i++)
    if (hoard[i].p) {
      CHECK(intact(&hoard[i], true), i);
      F_free(hoard[i].p);
      hoard[i].p = NULL;
    }
  free_all();
  say_num("fault: after freeing half: ", n_fail - fails_seen, " more failures\n");
  recover();
  say_num("fault: ok: ", n_calls, " calls, ");
  say_num("", fails_seen, " ENOMEM failures\n");
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc >= 2 && strcmp(argv[1], "ulimit") == 0) return ulimit_run();
#ifdef SMP_FAULT_INJECTION
  if (argc >= 2 && strcmp(argv[1], "sweep") == 0) {
    scale = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    if (scale < 1) scale = 1;
    const char *th = getenv("FAULT_THREADS");
    nthreads = th ? (unsigned)atoi(th) : 1;
    if (nthreads < 1 || nthreads > 16) nthreads = 1;
    return sweep(argc > 3 ? atol(argv[3]) : 0, argc > 4 ? atol(argv[4]) : -1);
  }
#endif
  fprintf(stderr, "usage: %s sweep [scale [first last]] | ulimit\n", argv[0]);
  return 2;
}
