/*
 * bench/shapes/shape.c - one shape of the shape sweep (bench/shapes/run.sh).
 *
 * `threads` threads each keep `live` blocks; each operation frees one block
 * and allocates a new one in its place, its size log-uniform over
 * [lo, hi] bytes, and writes some of it.  Parameters (NAME=VALUE):
 *   threads  worker threads
 *   live     live blocks a thread keeps
 *   ops      operations a thread makes
 *   lo, hi   the size range in bytes (log-uniform)
 *   write    0 the first byte, 1 the first half, 2 every byte
 *   life     how blocks die:
 *            0 random: a random one of the thread's blocks is replaced;
 *            1 fifo: the oldest is replaced (a ring);
 *            2 lifo: bursts of up to live/4 newest blocks are freed, newest
 *              first, then as many allocated again;
 *            3 cross: a random one of all threads' blocks is replaced, so a
 *              block is freed by another thread than the one that
 *              allocated it (threads-1 times in threads)
 *   seed     the PRNG seed
 *
 * Before a block is freed its size and last byte are checked against the
 * values written when it was allocated (exit 3 if they differ), so an
 * allocator that hands out overlapping blocks is caught.  Exit 0 success,
 * 2 usage or out of memory, 3 verification failed.
 */
#include "../suite/suite_common.c"

#include <math.h>

static long threads = 2, live = 5000, ops = 200000, lo = 16, hi = 512 << 10, wr = 0, life = 0,
            seed = 1;

static _Atomic(unsigned char *) *shared; /* life 3: every thread's blocks */
static double lg_lo, lg_span;

static size_t shape_size(uint64_t *rng) {
  double u = (double)(rnd(rng) >> 11) * 0x1.0p-53;
  size_t n = (size_t)exp2(lg_lo + u * lg_span);
  if (n < (size_t)lo) n = (size_t)lo;
  if (n > (size_t)hi) n = (size_t)hi;
  return n;
}

/* A block of n bytes.  Its first byte holds n when n < 16, else 0xff and
 * n in the next seven bytes; its last byte a tag (n >= 2), checked on
 * free. */
static unsigned char shape_tag(size_t n) { return (unsigned char)(n * 31 + 7); }

static unsigned char *shape_new(uint64_t *rng) {
  size_t n = shape_size(rng);
  unsigned char *p = xmalloc(n);
  size_t w = wr == 0 ? 1 : wr == 1 ? n / 2 : n;
  if (w > 1) memset(p, 0x5a, w);
  if (n < 16) {
    p[0] = (unsigned char)n;
  } else {
    uint64_t v = (uint64_t)n << 8 | 0xff;
    memcpy(p, &v, sizeof v);
  }
  if (n >= 2) p[n - 1] = shape_tag(n);
  return p;
}

static void shape_free(unsigned char *p) {
  if (p == NULL) return;
  size_t n = p[0];
  if (n == 0xff) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    n = (size_t)(v >> 8);
  }
  if (n < (size_t)lo || n > (size_t)hi || (n >= 2 && p[n - 1] != shape_tag(n))) {
    fprintf(stderr, "shape: block %p of %zu bytes corrupted\n", (void *)p, n);
    exit(3);
  }
  free(p);
}

static void *worker(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  uint64_t rng = seed_for((uint64_t)seed, id);
  size_t w = (size_t)live;
  if (life == 3) {
    size_t all = w * (size_t)threads;
    for (long i = 0; i < ops; i++) {
      size_t k = rnd(&rng) % all;
      unsigned char *old = atomic_exchange(&shared[k], shape_new(&rng));
      shape_free(old);
    }
    return NULL;
  }
  unsigned char **b = xmalloc(w * sizeof *b);
  for (size_t i = 0; i < w; i++) b[i] = shape_new(&rng);
  size_t ring = 0;
  for (long i = 0; i < ops;) {
    if (life == 0) {
      size_t k = rnd(&rng) % w;
      shape_free(b[k]);
      b[k] = shape_new(&rng);
      i++;
    } else if (life == 1) {
      shape_free(b[ring]);
      b[ring] = shape_new(&rng);
      ring = ring + 1 == w ? 0 : ring + 1;
      i++;
    } else {
      size_t burst = 1 + rnd(&rng) % (w / 4 ? w / 4 : 1);
      if ((long)burst > ops - i) burst = (size_t)(ops - i);
      for (size_t j = 0; j < burst; j++) shape_free(b[w - 1 - j]);
      for (size_t j = burst; j-- > 0;) b[w - 1 - j] = shape_new(&rng);
      i += (long)burst;
    }
  }
  for (size_t i = 0; i < w; i++) shape_free(b[i]);
  free(b);
  return NULL;
}

int main(int argc, char **argv) {
  struct param p[] = {
      {"threads", &threads, "worker threads"},
      {"live", &live, "live blocks a thread keeps"},
      {"ops", &ops, "operations a thread makes"},
      {"lo", &lo, "smallest size, bytes"},
      {"hi", &hi, "largest size, bytes"},
      {"write", &wr, "0 first byte, 1 half, 2 every byte"},
      {"life", &life, "0 random, 1 fifo, 2 lifo bursts, 3 cross-thread"},
      {"seed", &seed, "PRNG seed"},
  };
  parse_args(argc, argv, "shape",
             "One shape of the sweep: threads each keep `live` blocks and replace them.", p,
             sizeof p / sizeof p[0]);
  if (threads < 1 || live < 1 || ops < 0 || lo < 1 || hi < lo || wr < 0 || wr > 2 || life < 0 ||
      life > 3 || hi >= ((long)1 << 40)) {
    fprintf(stderr, "shape: bad parameters\n");
    return 2;
  }
  lg_lo = log2((double)lo);
  lg_span = log2((double)hi + 1) - lg_lo;
  if (life == 3) {
    uint64_t rng = seed_for((uint64_t)seed, 999);
    size_t all = (size_t)live * (size_t)threads;
    shared = xmalloc(all * sizeof *shared);
    for (size_t i = 0; i < all; i++) atomic_init(&shared[i], shape_new(&rng));
  }
  pthread_t *t = xmalloc((size_t)threads * sizeof *t);
  for (long i = 0; i < threads; i++) t[i] = spawn(worker, (void *)(uintptr_t)i, 0, 0);
  for (long i = 0; i < threads; i++) join(t[i]);
  free(t);
  if (life == 3) {
    for (size_t i = 0; i < (size_t)live * (size_t)threads; i++) shape_free(shared[i]);
    free(shared);
  }
  if (verbose) printf("shape: peak RSS %ld KiB\n", peak_rss_kib());
  return 0;
}
