/* mem_frag: fragmentation under a long soak of random replacement.
 *
 * T threads (--threads, default 2) each keep a window of W/T live blocks
 * (--window W, default 20,000 in all) and make N operations (--ops,
 * default 3,000,000 a thread): each frees a random block of its window and
 * allocates a new one in its place, written whole.  Sizes are log-uniform,
 * and the mix moves in three phases of N/3 operations: small (8 B-1 KiB),
 * large (1-32 KiB), mixed (8 B-32 KiB).  At the end each thread frees its
 * window and exits.
 *
 *   mem_frag [--expect smpalloc|glibc] [--threads T] [--ops N] [--window W]
 *            [--max-ratio R] [--max-after-mib M] [--leak-every K] [--trace]
 *
 * Prints one line:
 *   live_peak=L rss_peak=P ratio=R after=A time=S
 * L the most requested bytes live at once (MiB), P the peak RSS (VmHWM)
 * above the RSS at the start (MiB), R = P / L, A the RSS above the start
 * once every block is freed and the threads are joined, with no trim
 * (MiB).  Under smpalloc (smp_stats_get found by dlsym) a second line
 * breaks the excess down at the highest RSS sampled (thread 0 samples
 * every 4,096 operations): "at: rss= live= round= cache= slabfree=
 * pooldirty= meta=", in MiB: the live bytes, class rounding (usable
 * sizes minus requests), blocks held in thread caches, free blocks inside
 * slabs in use, free granules not returned, metadata mapped.
 * --trace also prints (stderr) the live bytes and RSS every 131,072
 * operations of thread 0 and, under smpalloc, each class's slabs and free
 * blocks at that sample.
 * --max-ratio R: exit 1 when P / L > R; --max-after-mib M: exit 1 when
 * A > M.  --leak-every K (a control for the test itself) drops every K-th
 * replaced block instead of freeing it.  Exit 2 when something fails to
 * run. */
#define MEM_PROG "mem_frag"
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "mem_common.h"
#include "smpalloc.h"

static unsigned nthreads = 2;
static uint64_t nops = 3000000, window = 20000, leak_every;
static _Atomic size_t live;     /* requested bytes live, all threads */
static _Atomic size_t live_max; /* the most of it seen */
static _Atomic size_t usable[64]; /* per thread: usable bytes of its live blocks */
static size_t base_rss;

/* smpalloc's statistics, when it is the allocator (its own header: a copy
 * of the struct here went stale once a field was added). */
typedef smp_stats_t stats_t;
static int (*stats_get)(stats_t *);
static size_t best_rss;
static stats_t best_st;
static double parts[6]; /* the breakdown at best_rss */

/* 2^(k/64), k = 0..64, for log-uniform sizes without libm. */
static double pow64[65];

/* A size log-uniform in [lo, hi] (powers of two). */
static size_t draw(uint64_t *s, unsigned lo_log2, unsigned hi_log2) {
  uint64_t r = next_rand(s);
  unsigned span = (hi_log2 - lo_log2) * 64, k = (unsigned)(r % span);
  double frac = (double)((r >> 32) & 0xffff) / 65536.0; /* within 1/64 octave */
  double x = (double)((size_t)1 << (lo_log2 + k / 64)) * pow64[k % 64] * (1.0 + frac * 0.0108892860517);
  size_t n = (size_t)x;
  return n < 8 ? 8 : n;
}

static int trace;
static void sample(uint64_t op) {
  size_t rss = rss_bytes();
  if (trace && op % (1 << 17) == 0)
    fprintf(stderr, "op=%llu live=%.1f rss=%.1f\n", (unsigned long long)op, atomic_load(&live) / MIB,
            ((double)rss - (double)base_rss) / MIB);
  if (rss <= best_rss) return;
  best_rss = rss;
  if (stats_get == NULL) return;
  stats_t st;
  if (stats_get(&st) != 0) return;
  size_t L = atomic_load(&live), U = 0;
  for (unsigned i = 0; i < nthreads; i++) U += atomic_load_explicit(&usable[i], memory_order_relaxed);
  if (trace) best_st = st;
  size_t slab_bytes = 0;
  for (unsigned c = 0; c < SMP_STATS_NCLASS; c++) slab_bytes += st.classes[c].in_use * st.classes[c].size;
  size_t slab_room = st.slabs * 65536;
  /* Resident as smpalloc counts it, less slabs, large blocks and metadata:
   * free granules whose pages were not returned. */
  double pool = (double)st.bytes_resident - (double)slab_room - (double)st.large_bytes - (double)st.bytes_metadata;
  parts[0] = L / MIB;
  parts[1] = ((double)U - (double)L) / MIB;
  parts[2] = ((double)slab_bytes + (double)st.large_bytes - (double)U) / MIB;
  parts[3] = ((double)slab_room - (double)slab_bytes) / MIB;
  parts[4] = pool / MIB;
  parts[5] = st.bytes_metadata / MIB;
}

static void *worker(void *arg) {
  unsigned id = (unsigned)(uintptr_t)arg;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ ((uint64_t)id * 0xD6E8FEB86659FD93ull + 1);
  size_t w = window / nthreads, dropped = 0, mine = 0;
  unsigned char **blk = mmap(NULL, w * sizeof *blk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  size_t *len = mmap(NULL, w * sizeof *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (blk == MAP_FAILED || len == MAP_FAILED) exit(2);
  for (uint64_t op = 0; op < nops; op++) {
    unsigned phase = (unsigned)(op * 3 / nops);
    size_t n = phase == 0 ? draw(&s, 3, 10) : phase == 1 ? draw(&s, 10, 15) : draw(&s, 3, 15);
    size_t k = (size_t)(next_rand(&s) % w);
    if (blk[k] != NULL) {
      size_t u = malloc_usable_size(blk[k]);
      if (blk[k][0] != (unsigned char)k || blk[k][len[k] - 1] != (unsigned char)k) {
        fprintf(stderr, "mem_frag: block %p of %zu bytes corrupted\n", (void *)blk[k], len[k]);
        exit(2);
      }
      if (leak_every == 0 || ++dropped % leak_every != 0) free(blk[k]);
      atomic_fetch_sub_explicit(&live, len[k], memory_order_relaxed);
      mine -= u;
    }
    unsigned char *p = malloc(n);
    if (p == NULL) exit(2);
    memset(p, (int)(k & 0xff), n);
    blk[k] = p, len[k] = n;
    mine += malloc_usable_size(p);
    atomic_store_explicit(&usable[id], mine, memory_order_relaxed);
    size_t l = atomic_fetch_add_explicit(&live, n, memory_order_relaxed) + n;
    size_t m = atomic_load_explicit(&live_max, memory_order_relaxed);
    while (l > m && !atomic_compare_exchange_weak_explicit(&live_max, &m, l, memory_order_relaxed,
                                                           memory_order_relaxed)) {
    }
    if (id == 0 && op % 4096 == 0) sample(op);
  }
  for (size_t k = 0; k < w; k++) free(blk[k]);
  munmap(blk, w * sizeof *blk);
  munmap(len, w * sizeof *len);
  return NULL;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  double max_ratio = -1, max_after = -1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) nthreads = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) nops = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc) window = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--max-ratio") == 0 && i + 1 < argc) max_ratio = atof(argv[++i]);
    else if (strcmp(argv[i], "--max-after-mib") == 0 && i + 1 < argc) max_after = atof(argv[++i]);
    else if (strcmp(argv[i], "--trace") == 0) trace = 1;
    else if (strcmp(argv[i], "--leak-every") == 0 && i + 1 < argc) leak_every = strtoull(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--threads T] [--ops N] [--window W] "
                      "[--max-ratio R] [--max-after-mib M] [--leak-every K] [--trace]\n", argv[0]);
      return 2;
    }
  }
  if (nthreads < 1 || nthreads > 64 || window < nthreads || nops < 3) return 2;
  if (expect_allocator(expect) != 0) return 1;
  pow64[0] = 1;
  for (int k = 1; k <= 64; k++) pow64[k] = pow64[k - 1] * 1.0108892860517005;
  *(void **)&stats_get = dlsym(RTLD_DEFAULT, "smp_stats_get");
  /* Start the peak afresh (Linux: "5" resets VmHWM to the current RSS). */
  int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd >= 0) {
    (void)!write(fd, "5", 1);
    close(fd);
  }
  base_rss = rss_bytes();
  double t0 = now_s();
  pthread_t t[64];
  for (unsigned i = 0; i < nthreads; i++)
    if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0) return 2;
  for (unsigned i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
  double secs = now_s() - t0;
  double after = ((double)rss_bytes() - (double)base_rss) / MIB;
  double peak = ((double)hwm_kib() * 1024 - (double)base_rss) / MIB;
  double L = (double)atomic_load(&live_max) / MIB;
  double ratio = peak / L;
  if (trace) sample(0);
  printf("live_peak=%.1f rss_peak=%.1f ratio=%.3f after=%.1f time=%.2f\n", L, peak, ratio, after, secs);
  if (stats_get != NULL)
    printf("at: rss=%.1f live=%.1f round=%.1f cache=%.1f slabfree=%.1f pooldirty=%.1f meta=%.1f\n",
           ((double)best_rss - (double)base_rss) / MIB, parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]);
  if (trace && stats_get != NULL)
    for (unsigned c = 0; c < SMP_STATS_NCLASS; c++) {
      size_t sz = best_st.classes[c].size, n = best_st.classes[c].slabs;
      if (n == 0) continue;
      size_t cnt = 65536 / sz, fr = n * cnt - best_st.classes[c].in_use;
      fprintf(stderr, "class %2u size %5zu slabs %4zu in_use %6zu free %5zu = %.2f MiB\n", c, sz, n,
              best_st.classes[c].in_use, fr, (double)(fr * sz) / MIB);
    }
  if (max_ratio >= 0) mem_check(ratio <= max_ratio, "peak RSS within the bound on live bytes");
  if (max_after >= 0) mem_check(after <= max_after, "RSS back near the start after the last free");
  return mem_fails ? 1 : 0;
}
