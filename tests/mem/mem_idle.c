/* mem_idle: memory freed in a burst comes back while the program is idle,
 * with no allocator call.
 *
 * usage: mem_idle burst [wait_ms]
 *   Two threads each allocate 48 MiB of blocks of 16 B to 8 KiB (sizes
 *   log-uniform, each block's first and last bytes written), then free the
 *   newest seven eighths of them, so that about 12 MiB stays live; the
 *   threads then wait on a barrier and the main thread, making no
 *   allocator call, reads its RSS every 10 ms for wait_ms (default 3000)
 *   milliseconds.  Prints one line:
 *     live=L after=A end=E reached=T
 *   in MiB: the live bytes, the RSS right after the frees and at the end;
 *   T the first millisecond at which the RSS fell to L + (A - L) / 3, two
 *   thirds of the excess gone back (-1: never).
 *   Then it reports the background thread's wake-ups over one more idle
 *   second ("wakeups=W", -1 when there is no such thread).
 * usage: mem_idle small
 *   A program that allocates a little (100 blocks) and frees it: prints
 *   "threads=N", the threads of the process at the end (1: no background
 *   thread was started for nothing).
 * Exit 0 unless something failed to run (exit 2). */
#define MEM_PROG "mem_idle"
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>

#include "mem_common.h"

#define PER_THREAD (48u << 20)
#define MAXB (PER_THREAD / 16)

static pthread_barrier_t freed, done;
static size_t live_bytes[2];

static void *burst(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  uint64_t s = 0x1234567 + id;
  static void **blk[2];
  static size_t *len[2];
  blk[id] = mmap(NULL, MAXB * sizeof(void *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  len[id] = mmap(NULL, MAXB * sizeof(size_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (blk[id] == MAP_FAILED || len[id] == MAP_FAILED) exit(2);
  size_t n = 0, bytes = 0;
  while (bytes < PER_THREAD && n < MAXB) {
    uint64_t r = next_rand(&s);
    size_t base = (size_t)16 << (r % 9); /* 16 B .. 8 KiB, about log-uniform */
    size_t sz = base + (r >> 8) % base;
    if (sz > 8192) sz = 8192;
    unsigned char *p = malloc(sz);
    if (p == NULL) exit(2);
    p[0] = 1, p[sz - 1] = 2;
    blk[id][n] = p, len[id][n] = sz, n++, bytes += sz;
  }
  size_t keep = n / 8, kept = 0;
  for (size_t i = n; i-- > keep;) free(blk[id][i]);
  for (size_t i = 0; i < keep; i++) kept += len[id][i];
  live_bytes[id] = kept;
  pthread_barrier_wait(&freed);
  pthread_barrier_wait(&done); /* idle until the main thread is done */
  for (size_t i = 0; i < keep; i++) free(blk[id][i]);
  return NULL;
}

/* The background thread's voluntary context switches (each sleep is
 * one), or -1 when the process has no thread named smpalloc-purge. */
static long purge_switches(void) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  long r = -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[300], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    int ours = 0;
    while (fgets(line, sizeof line, f) != NULL) {
      if (strncmp(line, "Name:", 5) == 0) ours = strstr(line, "smpalloc-purge") != NULL;
      long v;
      if (ours && sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1) r = v;
    }
    fclose(f);
  }
  closedir(d);
  return r;
}

static int task_count(void) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "burst";
  if (strcmp(mode, "small") == 0) {
    void *p[100];
    for (int i = 0; i < 100; i++) p[i] = malloc((size_t)(i * 40 + 8));
    for (int i = 0; i < 100; i++) free(p[i]);
    printf("threads=%d\n", task_count());
    return 0;
  }
  long wait_ms = argc > 2 ? atol(argv[2]) : 3000;
  pthread_barrier_init(&freed, NULL, 3);
  pthread_barrier_init(&done, NULL, 3);
  pthread_t t[2];
  for (uintptr_t i = 0; i < 2; i++)
    if (pthread_create(&t[i], NULL, burst, (void *)i) != 0) return 2;
  pthread_barrier_wait(&freed);
  /* From here on no thread calls the allocator until `done`. */
  double live = (double)(live_bytes[0] + live_bytes[1]) / MIB, after = (double)rss_bytes() / MIB;
  double start = now_s();
  long reached = -1;
  for (long ms = 0; ms <= wait_ms; ms += 10) {
    if (reached < 0 && (double)rss_bytes() / MIB <= live + (after - live) / 3)
      reached = (long)((now_s() - start) * 1000);
    if (reached >= 0) break;
    nap_ms(10);
  }
  double end = (double)rss_bytes() / MIB;
  long w0 = purge_switches();
  nap_ms(1000);
  long w1 = purge_switches();
  printf("live=%.1f after=%.1f end=%.1f reached=%ld wakeups=%ld\n", live, after, end, reached,
         w0 < 0 || w1 < 0 ? -1 : w1 - w0);
  if (getenv("MEM_IDLE_STATS")) {
    void (*pr)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "smp_stats_print");
    if (pr) pr(1);
  }
  fflush(stdout);
  pthread_barrier_wait(&done);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  return 0;
}
