/* mem_threads: 1,000 threads at once allocate, fill, verify and free; some
 * blocks change hands.
 *
 * All NTHREADS threads are created first and start together (a barrier), so
 * all of them are alive at once - far more threads than slots or CPUs.
 * Each does OPS operations on a private set of up to 48 blocks: allocate a
 * block (mostly 1..512 bytes, some up to 32 KiB, a few large 32 KiB..256 KiB
 * blocks mapped alone) and fill every byte with a pattern derived from the
 * block's unique id; or verify a random block's every byte and free it; or
 * hand a block to another thread through one of MAILBOXES mailboxes (a
 * mutex each): the block put there replaces the one waiting, which the
 * thread verifies and takes over.  At the end each thread verifies and frees
 * its set; the main thread verifies and frees what is left in the mailboxes.
 * Every block is verified exactly once, before its free: the program checks
 * that the number of blocks verified equals the number allocated.
 *
 *   mem_threads [--expect smpalloc|glibc] [--threads N] [--ops N]
 *               [--corrupt]   (control: one byte of one block is changed
 *                              after filling; the program must then fail)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEM_PROG "mem_threads"
#include "mem_common.h"

#define LOCAL_MAX 48
#define MAILBOXES 256

struct mailbox {
  pthread_mutex_t lock;
  struct blk b;
};

static unsigned nthreads = 1000, ops = 5000;
static struct mailbox boxes[MAILBOXES];
static pthread_barrier_t start;
static _Atomic uint64_t n_alloc, n_verified, n_handed, n_bad, n_large;
static int corrupt;

static void fill(const struct blk *b) {
  size_t words = b->size / 8;
  uint64_t *w = (uint64_t *)b->p;
  for (size_t i = 0; i < words; i++) w[i] = word_of(b->id, i);
  for (size_t j = words * 8; j < b->size; j++) b->p[j] = (unsigned char)(b->id + j);
}

/* Verify every byte of b, then free it. */
static void verify_free(const struct blk *b) {
  size_t words = b->size / 8;
  const uint64_t *w = (const uint64_t *)b->p;
  int bad = ((uintptr_t)b->p & 7) != 0;
  for (size_t i = 0; i < words && !bad; i++) bad = w[i] != word_of(b->id, i);
  for (size_t j = words * 8; j < b->size && !bad; j++) bad = b->p[j] != (unsigned char)(b->id + j);
  if (bad) {
    if (atomic_fetch_add(&n_bad, 1) < 10)
      fprintf(stderr, "mem_threads: block %p (size %zu, id %llx) does not hold its pattern\n", (void *)b->p,
              b->size, (unsigned long long)b->id);
  }
  atomic_fetch_add_explicit(&n_verified, 1, memory_order_relaxed);
  free(b->p);
}

static size_t pick_size(uint64_t *seed) {
  uint64_t r = next_rand(seed);
  unsigned kind = (unsigned)(r % 1000);
  r >>= 10;
  if (kind < 870) return 1 + r % 512;
  if (kind < 980) return 513 + r % (4096 - 512);
  if (kind < 997) return 4097 + r % (32768 - 4096);
  return 32769 + r % (256 * 1024 - 32768);
}

static void *worker(void *arg) {
  unsigned t = (unsigned)(uintptr_t)arg;
  uint64_t seed = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(t + 1) * 0xBF58476D1CE4E5B9ull);
  struct blk set[LOCAL_MAX];
  unsigned n = 0;
  uint64_t serial = 0;
  pthread_barrier_wait(&start);
  for (unsigned op = 0; op < ops; op++) {
    unsigned r = (unsigned)(next_rand(&seed) % 16);
    if (n > 0 && r == 0) { /* hand a block over, take the waiting one */
      unsigned k = (unsigned)(next_rand(&seed) % n);
      struct mailbox *m = &boxes[next_rand(&seed) % MAILBOXES];
      pthread_mutex_lock(&m->lock);
      struct blk old = m->b;
      m->b = set[k];
      pthread_mutex_unlock(&m->lock);
      atomic_fetch_add_explicit(&n_handed, 1, memory_order_relaxed);
      if (old.p != NULL) set[k] = old;
      else set[k] = set[--n];
    } else if (n == LOCAL_MAX || (n > 0 && r < 8)) { /* verify and free one */
      unsigned k = (unsigned)(next_rand(&seed) % n);
      verify_free(&set[k]);
      set[k] = set[--n];
    } else { /* allocate one */
      struct blk b;
      b.size = pick_size(&seed);
      b.id = ((uint64_t)t << 32) | serial++;
      b.p = malloc(b.size);
      if (b.p == NULL) {
        fprintf(stderr, "mem_threads: malloc(%zu) failed\n", b.size);
        atomic_fetch_add(&n_bad, 1);
        continue;
      }
      atomic_fetch_add_explicit(&n_alloc, 1, memory_order_relaxed);
      if (b.size > 32768) atomic_fetch_add_explicit(&n_large, 1, memory_order_relaxed);
      fill(&b);
      if (t == nthreads / 2 && corrupt == 1 && op >= ops / 2) { /* one thread only */
        b.p[b.size / 2] ^= 1; /* the control: the first block past half-way */
        corrupt = 2;
      }
      set[n++] = b;
    }
  }
  while (n > 0) verify_free(&set[--n]);
  return NULL;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) nthreads = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) ops = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--corrupt") == 0) corrupt = 1;
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--threads N] [--ops N] [--corrupt]\n", argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  if (nthreads < 1) nthreads = 1;
  for (unsigned i = 0; i < MAILBOXES; i++) pthread_mutex_init(&boxes[i].lock, NULL);
  pthread_t *th = calloc(nthreads, sizeof *th);
  if (th == NULL) return 2;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 128 * 1024);
  pthread_barrier_init(&start, NULL, nthreads + 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (unsigned i = 0; i < nthreads; i++) {
    int e = pthread_create(&th[i], &attr, worker, (void *)(uintptr_t)i);
    if (e != 0) {
      fprintf(stderr, "mem_threads: pthread_create #%u failed: %s\n", i, strerror(e));
      return 2; /* the created threads wait at the barrier forever: exit */
    }
  }
  pthread_barrier_wait(&start); /* all threads exist now */
  for (unsigned i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  unsigned left = 0;
  for (unsigned i = 0; i < MAILBOXES; i++)
    if (boxes[i].b.p != NULL) {
      verify_free(&boxes[i].b);
      left++;
    }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  free(th);
  uint64_t a = atomic_load(&n_alloc), v = atomic_load(&n_verified), bad = atomic_load(&n_bad);
  printf("threads=%u ops/thread=%u allocated=%llu (large %llu) verified=%llu handed_over=%llu "
         "left_in_mailboxes=%u bad=%llu time=%.2f s\n",
         nthreads, ops, (unsigned long long)a, (unsigned long long)atomic_load(&n_large),
         (unsigned long long)v, (unsigned long long)atomic_load(&n_handed), left, (unsigned long long)bad,
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  if (bad != 0 || a != v || a == 0) {
    printf("FAIL: %llu bad blocks, %llu allocated vs %llu verified\n", (unsigned long long)bad,
           (unsigned long long)a, (unsigned long long)v);
    return 1;
  }
  printf("ok: every block verified before its free\n");
  return 0;
}
