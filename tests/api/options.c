/* options: the program t_options.sh runs under LD_PRELOAD=libsmpalloc.so
 * (or linked with libsmpalloc.a) to see what each SMPALLOC_* option does.
 *
 *   options plain        writes "main-start" and "main-done" on stderr around
 *                        some allocations, prints "ok" on stdout, exits 0
 *   options doublefree   free(a); free(b); free(a) - a double free that is
 *                        not immediate; prints "survived" if not stopped
 *   options slots        prints smp_stats_get()'s slot count (the library's
 *                        smp_stats_get, found with dlsym)
 *   options spread       four threads, one after another (each exits before
 *                        the next starts), each allocate a 200-byte block
 *                        and keep it; prints how many slabs that class
 *                        holds (smp_stats_get): 1 when every thread joins
 *                        the least used slot, 4 when SMPALLOC_SLOT_SPREAD=1
 *                        puts each on the next of 4 slots
 *   options narrowed     prints the slot count, narrows the process to one
 *                        CPU (sched_setaffinity), starts a thread that
 *                        mallocs, and prints the count again: "N 1" when
 *                        the count follows the mask as a thread starts
 *   options purge        allocates 64 MiB in 1000-byte blocks, touches them,
 *                        frees them all, and prints "peak=R0 after=R1": the
 *                        resident set (bytes) before and right after the
 *                        frees, with no other call in between
 *   options idle         allocates 160 MiB of the same blocks, touches them,
 *                        frees them all and prints "start=R0 peak=R1
 *                        after=R2": what a program that then goes idle
 *                        (no allocator call) holds
 *   options idle4        the same, while three more threads that have
 *                        made a malloc wait (on a barrier) for it to end
 *   options burst        32 MiB of the same blocks allocated, freed and
 *                        allocated again at once; prints "faults1=F1 faults2=F2 peak1=R1
 *                        peak2=R2": minor page faults taken by each round of
 *                        allocation and the resident set after each
 *
 * Built with -fno-builtin-malloc -fno-builtin-free so every call reaches the
 * allocator. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "smpalloc.h"

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

/* smp_stats_get()'s slot count (the library's, found with dlsym); exits 3
 * if there is none. */
static size_t slot_count(void) {
  int (*get)(smp_stats_t *) = (int (*)(smp_stats_t *))dlsym(RTLD_DEFAULT, "smp_stats_get");
  smp_stats_t st;
  if (get == NULL || get(&st) != 0) {
    fprintf(stderr, "options: smp_stats_get is %s\n", get == NULL ? "not exported" : "failing");
    exit(3);
  }
  return st.slots;
}

static void *thread_malloc(void *arg) {
  free(malloc(100));
  return arg;
}

static void *thread_keep(void *arg) {
  *(void **)arg = malloc(200);
  return NULL;
}

/* idle4's other threads: a malloc each (so each has a thread cache), then
 * wait for the main thread's frees and measurements. */
static pthread_barrier_t idle_gate;
static void *idle_waiter(void *arg) {
  free(malloc(100));
  pthread_barrier_wait(&idle_gate);
  pthread_barrier_wait(&idle_gate);
  return arg;
}

/* Resident bytes, from /proc/self/statm, without allocating. */
static size_t rss_bytes(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  unsigned long size, resident;
  if (n <= 0) {
    say("options: cannot read /proc/self/statm\n");
    exit(2);
  }
  buf[n] = '\0';
  if (sscanf(buf, "%lu %lu", &size, &resident) != 2) exit(2);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

#define PURGE_BLOCK 1000
#define PURGE_COUNT ((64u << 20) / PURGE_BLOCK)
static void *blocks[PURGE_COUNT];

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "plain";
  say("main-start\n");
  if (strcmp(mode, "plain") == 0) {
    static void *p[1000];
    for (int round = 0; round < 3; round++) {
      for (size_t i = 0; i < 1000; i++) {
        p[i] = malloc(i * 37 % 5000 + 1);
        if (p[i] == NULL) return 1;
        memset(p[i], (int)i, i * 37 % 5000 + 1);
      }
      void *big = malloc(3u << 20);
      if (big == NULL) return 1;
      memset(big, 1, 3u << 20);
      free(big);
      for (size_t i = 0; i < 1000; i++) free(p[(i * 7) % 1000]);
    }
    say("main-done\n");
    puts("ok");
    return 0;
  }
  if (strcmp(mode, "doublefree") == 0) {
    char *a = malloc(48), *b = malloc(48);
    if (a == NULL || b == NULL) return 1;
    free(a);
    free(b);
    free(a);
    say("main-done\n");
    puts("survived");
    return 0;
  }
  if (strcmp(mode, "slots") == 0) {
    size_t slots = slot_count();
    say("main-done\n");
    printf("%zu\n", slots);
    return 0;
  }
  if (strcmp(mode, "spread") == 0) {
    void *kept[4];
    for (int i = 0; i < 4; i++) {
      pthread_t t;
      if (pthread_create(&t, NULL, thread_keep, &kept[i]) != 0 || pthread_join(t, NULL) != 0) return 1;
    }
    int (*get)(smp_stats_t *) = (int (*)(smp_stats_t *))dlsym(RTLD_DEFAULT, "smp_stats_get");
    smp_stats_t st;
    if (get == NULL || get(&st) != 0) return 3;
    size_t slabs = 0;
    for (unsigned c = 0; c < SMP_STATS_NCLASS; c++)
      if (st.classes[c].size >= 200 && (c == 0 || st.classes[c - 1].size < 200)) slabs = st.classes[c].slabs;
    say("main-done\n");
    printf("%zu\n", slabs);
    for (int i = 0; i < 4; i++) free(kept[i]);
    return 0;
  }
  if (strcmp(mode, "narrowed") == 0) {
    free(malloc(10));
    size_t before = slot_count();
    cpu_set_t now, one;
    if (sched_getaffinity(0, sizeof now, &now) != 0) return 3;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &now)) {
        CPU_SET(c, &one);
        break;
      }
    pthread_t t;
    if (sched_setaffinity(0, sizeof one, &one) != 0 || pthread_create(&t, NULL, thread_malloc, NULL) != 0 ||
        pthread_join(t, NULL) != 0) {
      fprintf(stderr, "options: cannot narrow the CPUs or run a thread\n");
      return 3;
    }
    say("main-done\n");
    printf("%zu %zu\n", before, slot_count());
    return 0;
  }
  if (strcmp(mode, "idle") == 0 || strcmp(mode, "idle4") == 0) {
    bool four = strcmp(mode, "idle4") == 0;
    pthread_t t[3];
    if (four) {
      if (pthread_barrier_init(&idle_gate, NULL, 4) != 0) return 1;
      for (int i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, idle_waiter, NULL) != 0) return 1;
      pthread_barrier_wait(&idle_gate); /* each has made its malloc */
    }
    size_t n = 5 * (PURGE_COUNT / 2), start = rss_bytes();
    void **v = malloc(n * sizeof *v);
    if (v == NULL) return 1;
    for (size_t i = 0; i < n; i++) {
      if ((v[i] = malloc(PURGE_BLOCK)) == NULL) return 1;
      memset(v[i], 0x5a, PURGE_BLOCK);
    }
    size_t peak = rss_bytes();
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
    size_t after = rss_bytes();
    if (four) {
      pthread_barrier_wait(&idle_gate); /* let them end */
      for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    }
    say("main-done\n");
    printf("start=%zu peak=%zu after=%zu\n", start, peak, after);
    return 0;
  }
  if (strcmp(mode, "burst") == 0) {
    long faults[2];
    size_t peak[2];
    for (int round = 0; round < 2; round++) {
      struct rusage r0, r1;
      getrusage(RUSAGE_SELF, &r0);
      for (size_t i = 0; i < PURGE_COUNT / 2; i++) {
        blocks[i] = malloc(PURGE_BLOCK);
        if (blocks[i] == NULL) return 1;
        memset(blocks[i], 0x5a, PURGE_BLOCK);
      }
      getrusage(RUSAGE_SELF, &r1);
      faults[round] = r1.ru_minflt - r0.ru_minflt;
      peak[round] = rss_bytes();
      if (round == 0)
        for (size_t i = 0; i < PURGE_COUNT / 2; i++) free(blocks[i]);
    }
    say("main-done\n");
    printf("faults1=%ld faults2=%ld peak1=%zu peak2=%zu\n", faults[0], faults[1], peak[0], peak[1]);
    return 0;
  }
  if (strcmp(mode, "purge") == 0) {
    for (size_t i = 0; i < PURGE_COUNT; i++) {
      blocks[i] = malloc(PURGE_BLOCK);
      if (blocks[i] == NULL) return 1;
      memset(blocks[i], 0x5a, PURGE_BLOCK);
    }
    size_t peak = rss_bytes();
    for (size_t i = 0; i < PURGE_COUNT; i++) free(blocks[i]);
    size_t after = rss_bytes();
    say("main-done\n");
    printf("peak=%zu after=%zu\n", peak, after);
    return 0;
  }
  fprintf(stderr, "options: unknown mode %s\n", mode);
  return 2;
}
