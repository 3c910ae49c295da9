/* mem_prodcons: one producer thread, one consumer thread, bounded memory.
 *
 * The producer allocates N blocks of 16..256 bytes (sizes from a fixed-seed
 * generator), fills each with a byte pattern and passes it through a
 * bounded single-producer/single-consumer ring (1024 entries; a full or
 * empty ring waits with sched_yield).  The consumer keeps a live set: a
 * table of LIVE_SLOTS blocks (about 16 MiB of requests); each block it
 * receives replaces a random entry, whose block is checked and freed.  So
 * frees come in an order unrelated to allocation, from another thread.
 *
 *   mem_prodcons [--expect smpalloc|glibc] [--blocks N] [--max-growth-mib M]
 *                [--max-ratio R] [--leak-every K]
 *
 * Prints the baseline RSS (VmRSS at start, after the table and ring are
 * touched), the peak (VmHWM), the largest live set seen (requested bytes in
 * the table plus the ring), and the time.  With --max-growth-mib M exits 1
 * when peak - baseline > M MiB, with --max-ratio R when peak - baseline is
 * more than R times the largest live set.  --expect checks /proc/self/maps for
 * libsmpalloc (smpalloc) or its absence (glibc).  --leak-every K (a control
 * for the test itself) drops every K-th replaced block instead of freeing
 * it, as an allocator that never reuses freed memory would look.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MEM_PROG "mem_prodcons"
#include "mem_common.h"

#define RING 1024u
#define LIVE_BYTES ((size_t)16 << 20)
#define AVG_SIZE 136u                    /* mean of 16..256 */
#define LIVE_SLOTS (LIVE_BYTES / AVG_SIZE) /* 123361 */

struct item {
  unsigned char *p;
  uint32_t size;
  uint32_t tag;
};

static struct item *ring;  /* mmap'd: not from the allocator under test */
static _Alignas(64) _Atomic uint64_t ring_head; /* written by the producer */
static _Alignas(64) _Atomic uint64_t ring_tail; /* written by the consumer */
static _Alignas(64) uint64_t nblocks;
static struct item *table;
static size_t live_now, live_max;
static volatile int failed;
static uint64_t leak_every;

/* A field of /proc/self/status, in bytes ("VmRSS", "VmHWM"). */
static size_t status_kb(const char *field) {
  char buf[8192];
  int fd = open("/proc/self/status", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  if (n <= 0) exit(2);
  buf[n] = '\0';
  size_t len = strlen(field);
  for (char *l = buf; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, field, len) == 0 && l[len] == ':') return (size_t)strtoul(l + len + 1, NULL, 10) * 1024;
  fprintf(stderr, "mem_prodcons: no %s in /proc/self/status\n", field);
  exit(2);
}

static void *producer(void *arg) {
  (void)arg;
  uint64_t seed = 0x2545F4914F6CDD1Dull;
  uint64_t head = 0;
  for (uint64_t i = 0; i < nblocks; i++) {
    uint32_t size = 16 + (uint32_t)(next_rand(&seed) % 241); /* 16..256 */
    unsigned char *p = malloc(size);
    if (p == NULL) {
      fprintf(stderr, "mem_prodcons: malloc(%u) failed\n", size);
      failed = 1;
      size = 0;
    } else {
      memset(p, (int)(i & 0xff), size);
    }
    while (head - atomic_load_explicit(&ring_tail, memory_order_acquire) == RING) sched_yield();
    ring[head % RING] = (struct item){p, size, (uint32_t)i};
    atomic_store_explicit(&ring_head, ++head, memory_order_release);
  }
  return NULL;
}

static uint64_t dropped;
static int check_free(const struct item *it) {
  if (it->p == NULL) return 0;
  if (leak_every != 0 && ++dropped % leak_every == 0) return 0;
  unsigned char want = (unsigned char)(it->tag & 0xff);
  if (it->p[0] != want || it->p[it->size / 2] != want || it->p[it->size - 1] != want) {
    fprintf(stderr, "mem_prodcons: block %p (size %u, #%u) corrupted\n", (void *)it->p, it->size, it->tag);
    return -1;
  }
  free(it->p);
  return 0;
}

static void *consumer(void *arg) {
  (void)arg;
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  uint64_t tail = 0;
  while (tail < nblocks) {
    uint64_t head;
    while ((head = atomic_load_explicit(&ring_head, memory_order_acquire)) == tail) sched_yield();
    /* In flight: everything between tail and head, at most RING * 256. */
    for (; tail < head; tail++) {
      struct item it = ring[tail % RING];
      atomic_store_explicit(&ring_tail, tail + 1, memory_order_release);
      size_t k = (size_t)(next_rand(&seed) % LIVE_SLOTS);
      if (check_free(&table[k]) != 0) failed = 1;
      live_now = live_now - table[k].size + it.size;
      table[k] = it;
    }
    size_t in_ring = (size_t)(atomic_load_explicit(&ring_head, memory_order_relaxed) - tail) * 256;
    if (live_now + in_ring > live_max) live_max = live_now + in_ring;
  }
  for (size_t k = 0; k < LIVE_SLOTS; k++)
    if (check_free(&table[k]) != 0) failed = 1;
  return NULL;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  long max_growth_mib = -1;
  double max_ratio = -1;
  nblocks = 20000000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc) nblocks = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--max-growth-mib") == 0 && i + 1 < argc) max_growth_mib = atol(argv[++i]);
    else if (strcmp(argv[i], "--max-ratio") == 0 && i + 1 < argc) max_ratio = atof(argv[++i]);
    else if (strcmp(argv[i], "--leak-every") == 0 && i + 1 < argc) leak_every = strtoull(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--blocks N] [--max-growth-mib M] [--max-ratio R] "
              "[--leak-every K]\n",
              argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  /* The test's own bookkeeping, mapped and touched before the baseline. */
  ring = mmap(NULL, RING * sizeof *ring, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  table = mmap(NULL, LIVE_SLOTS * sizeof *table, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED || table == MAP_FAILED) return 2;
  memset(ring, 0, RING * sizeof *ring);
  memset(table, 0, LIVE_SLOTS * sizeof *table);
  /* Start the peak afresh (Linux: "5" resets VmHWM to the current RSS). */
  int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd >= 0) {
    (void)!write(fd, "5", 1);
    close(fd);
  }
  size_t base = status_kb("VmRSS");
  double t0 = now_s();
  pthread_t pt, ct;
  if (pthread_create(&pt, NULL, producer, NULL) != 0 || pthread_create(&ct, NULL, consumer, NULL) != 0) {
    fprintf(stderr, "mem_prodcons: pthread_create failed\n");
    return 2;
  }
  pthread_join(pt, NULL);
  pthread_join(ct, NULL);
  double secs = now_s() - t0;
  size_t peak = status_kb("VmHWM");
  size_t end = status_kb("VmRSS");
  double growth = ((double)peak - (double)base) / MIB;
  printf("blocks=%llu live_set_max=%.1f MiB baseline=%.1f peak=%.1f (+%.1f) end=%.1f MiB time=%.2f s (%.0f ns/block)\n",
         (unsigned long long)nblocks, live_max / MIB, base / MIB, peak / MIB, growth, end / MIB, secs,
         secs * 1e9 / (double)(nblocks ? nblocks : 1));
  if (failed) return 1;
  if (max_growth_mib >= 0) {
    if (growth > (double)max_growth_mib) {
      printf("FAIL: peak RSS is %.1f MiB above the baseline (bound %ld MiB = 4 x the 16 MiB live set)\n",
             growth, max_growth_mib);
      return 1;
    }
    printf("ok: peak RSS is %.1f MiB above the baseline (bound %ld MiB)\n", growth, max_growth_mib);
  }
  if (max_ratio >= 0) {
    double ratio = growth / (live_max / MIB);
    if (ratio > max_ratio) {
      printf("FAIL: peak RSS above the baseline is %.3fx the largest live set (bound %.2fx)\n", ratio, max_ratio);
      return 1;
    }
    printf("ok: peak RSS above the baseline is %.3fx the largest live set (bound %.2fx)\n", ratio, max_ratio);
  }
  return 0;
}
