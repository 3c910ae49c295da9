/* mem_idle: memory freed in a burst comes back while the program is idle,
 * with no allocator call.
 *
 * usage: mem_idle burst [wait_ms [back]]
 *   Two threads each allocate 48 MiB of blocks of 16 B to 8 KiB (sizes
 *   log-uniform, each block's first and last bytes written), then free the
 *   newest seven eighths of them, so that about 12 MiB stays live; the
 *   threads then wait on a barrier and the main thread, making no
 *   allocator call, reads its RSS every 10 ms for wait_ms (default 3000)
 *   milliseconds.  Prints one line:
 *     live=L after=A end=E reached=T
 *   in MiB: the live bytes, the RSS right after the frees and after
 *   wait_ms;
 *   T the first millisecond at which the RSS fell to L + (A - L) * (1 -
 *   back): that share of the excess gone back (default 2/3; -1: never).
 *   Then it reports the background thread's wake-ups over one more idle
 *   second ("wakeups=W", -1 when there is no such thread), and the MiB the
 *   allocator counts in use beyond the live blocks' usable sizes
 *   ("cached=C": what the threads' caches hold; -1 without smpalloc).
 * usage: mem_idle trim
 *   Four threads allocate 256 MiB each of 16-1015 byte blocks, four other
 *   threads free them, the first four free their arrays of pointers, and
 *   all eight wait (the main thread makes sure each is blocked in a system
 *   call: idle) while the main thread calls malloc_trim(0); prints
 *   "start=S peak=P freed=F trimmed=T excess=X": the RSS (MiB) at the start,
 *   at the peak, after the frees, after the trim, and T - S.
 * usage: mem_idle small
 *   A program that allocates a little (100 blocks) and frees it: prints
 *   "threads=N", the threads of the process at the end (1: no background
 *   thread was started for nothing).
 * Exit 0 unless something failed to run (exit 2). */
#define MEM_PROG "mem_idle"
#include <dirent.h>
#include <malloc.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "mem_common.h"
#include "smpalloc.h"

#define PER_THREAD (48u << 20)
#define MAXB (PER_THREAD / 16)

static pthread_barrier_t freed, done;
static size_t live_bytes[2], live_usable[2];

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
  size_t keep = n / 8, kept = 0, usable = 0;
  for (size_t i = n; i-- > keep;) free(blk[id][i]);
  for (size_t i = 0; i < keep; i++) kept += len[id][i], usable += malloc_usable_size(blk[id][i]);
  live_bytes[id] = kept;
  live_usable[id] = usable;
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

/* Does a thread of the process other than the caller run, or wait
 * outside a system call (/proc/self/task/TID/syscall)? */
static int others_running(void) {
  char self[16];
  snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return 0;
  int running = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, self) == 0) continue;
    char path[300], buf[32];
    snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (n <= 0 || buf[0] < '0' || buf[0] > '9') running = 1;
  }
  closedir(d);
  return running;
}

/* trim: producers allocate, consumers (other threads) free. */
#define TRIM_EACH (256u << 20)
static void **tblk[4];
static size_t tcnt[4];
static pthread_barrier_t tb;

static void *trim_producer(void *arg) {
  uintptr_t i = (uintptr_t)arg;
  uint64_t s = 99 + i;
  size_t cap = TRIM_EACH / 16, k = 0, total = 0;
  tblk[i] = malloc(cap * sizeof(void *));
  if (tblk[i] == NULL) exit(2);
  while (total < TRIM_EACH && k < cap) {
    size_t n = 16 + next_rand(&s) % 1000;
    char *p = malloc(n);
    if (p == NULL) exit(2);
    p[0] = 1;
    tblk[i][k++] = p;
    total += n;
  }
  tcnt[i] = k;
  pthread_barrier_wait(&tb); /* 1: allocated */
  pthread_barrier_wait(&tb); /* 2: freed by the consumers */
  free(tblk[i]);
  pthread_barrier_wait(&tb); /* 3: all freed */
  pthread_barrier_wait(&tb); /* 4: trimmed */
  return NULL;
}

static void *trim_consumer(void *arg) {
  uintptr_t i = (uintptr_t)arg;
  pthread_barrier_wait(&tb);
  for (size_t k = 0; k < tcnt[i]; k++) free(tblk[i][k]);
  pthread_barrier_wait(&tb);
  pthread_barrier_wait(&tb);
  pthread_barrier_wait(&tb);
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "burst";
  if (strcmp(mode, "trim") == 0) {
    double r0 = (double)rss_bytes() / MIB;
    pthread_barrier_init(&tb, NULL, 9);
    pthread_t t[8];
    for (uintptr_t i = 0; i < 4; i++)
      if (pthread_create(&t[i], NULL, trim_producer, (void *)i) != 0 ||
          pthread_create(&t[4 + i], NULL, trim_consumer, (void *)i) != 0)
        return 2;
    pthread_barrier_wait(&tb);
    double peak = (double)rss_bytes() / MIB;
    pthread_barrier_wait(&tb);
    pthread_barrier_wait(&tb);
    double r1 = (double)rss_bytes() / MIB;
    /* The other threads are idle: each blocked in the barrier's wait. */
    for (int tries = 0; others_running() && tries < 100000; tries++) sched_yield();
    malloc_trim(0);
    double r2 = (double)rss_bytes() / MIB;
    pthread_barrier_wait(&tb);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    printf("start=%.1f peak=%.1f freed=%.1f trimmed=%.1f excess=%.2f\n", r0, peak, r1, r2, r2 - r0);
    return 0;
  }
  if (strcmp(mode, "small") == 0) {
    void *p[100];
    for (int i = 0; i < 100; i++) p[i] = malloc((size_t)(i * 40 + 8));
    for (int i = 0; i < 100; i++) free(p[i]);
    printf("threads=%d\n", task_count());
    return 0;
  }
  long wait_ms = argc > 2 ? atol(argv[2]) : 3000;
  double back = argc > 3 ? atof(argv[3]) : 2.0 / 3;
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
    if (reached < 0 && (double)rss_bytes() / MIB <= live + (after - live) * (1 - back))
      reached = (long)((now_s() - start) * 1000);
    nap_ms(10);
  }
  double end = (double)rss_bytes() / MIB;
  long w0 = purge_switches();
  nap_ms(1000);
  long w1 = purge_switches();
  /* What the allocator counts in use beyond the live blocks: the blocks
   * the threads' caches hold (-1: not smpalloc). */
  double cached = -1;
  int (*get)(smp_stats_t *) = (int (*)(smp_stats_t *))dlsym(RTLD_DEFAULT, "smp_stats_get");
  smp_stats_t st;
  if (get != NULL && get(&st) == 0)
    cached = ((double)st.bytes_in_use - (double)(live_usable[0] + live_usable[1])) / MIB;
  printf("live=%.1f after=%.1f end=%.1f reached=%ld wakeups=%ld cached=%.2f\n", live, after, end, reached,
         w0 < 0 || w1 < 0 ? -1 : w1 - w0, cached);
  if (getenv("MEM_IDLE_STATS")) {
    void (*pr)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "smp_stats_print");
    if (pr) pr(1);
  }
  fflush(stdout);
  pthread_barrier_wait(&done);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  return 0;
}
