/* prof_sites MODE - programs for the profiler's tests (tests/prof/).
 *   sites    three allocation sites holding 60, 30 and 10 % of the live
 *            bytes (site_a malloc, site_b calloc, site_c realloc), about
 *            4.5 GB of address space never written, and planted_leak's
 *            blocks; all still live at exit (t_prof_sites)
 *   threads  64 threads allocating and exiting, a fork whose child
 *            allocates, a dump asked for by SMPALLOC_PROF_SIGNAL's signal
 *            while the threads allocate, after the main thread's own
 *            samples (DUMP_PREFIX.PID.1.heap: the
 *            prefix of SMPALLOC_PROF_DUMP), and smp_prof_dump(OWN_DUMP)
 *            (t_prof_threads)
 *   calloc   blocks written and freed, then calloc: every one must read
 *            as zero (with every block sampled, a freed pool slot's
 *            pages are kept and reused: t_prof_sites)
 *   grow     5000 small blocks live from 1200 stacks (20 functions, 60
 *            depths), so that the records' and the stacks' hash tables
 *            double: every block's usable size is checked, then every
 *            block freed (a record lost would abort), then one block of
 *            each stack left live at exit (t_prof_sites)
 *   bottom   leaks from a qsort comparator called by main, from a
 *            thread's start routine, and from a signal handler that
 *            interrupted one: the walk stops at the outermost program
 *            frame, never inside (t_prof_sites) */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "smpalloc.h"

/* Weak: the plain build gets it from the preloaded library. */
extern int smp_prof_dump(const char *path) __attribute__((weak));

#define SITE __attribute__((noinline, optimize("no-optimize-sibling-calls")))
static void *volatile sink;

SITE void *site_a(size_t n) { void *p = malloc(n); sink = p; return p; }
SITE void *site_b(size_t n) { void *p = calloc(1, n); sink = p; return p; }
SITE void *site_c(size_t n) { void *p = realloc(malloc(16), n); sink = p; return p; }
SITE void planted_leak(void) {
  for (int i = 0; i < 200; i++) sink = malloc(2000);
}

static void sites(void) {
  static void *keep[60000];
  sink = keep;
  size_t k = 0, MB = 1 << 20;
  struct { void *(*fn)(size_t); size_t bytes; } site[3] = {{site_a, 2700 * MB}, {site_b, 1350 * MB}, {site_c, 450 * MB}};
  for (int s = 0; s < 3; s++)
    for (size_t got = 0, i = 0; got < site[s].bytes; i++) {
      size_t n = (40 << 10) + (i * 7919 % 160) * 1024; /* 40 to 200 KiB */
      void *p = site[s].fn(n);
      if (p == NULL) { fprintf(stderr, "out of memory\n"); exit(1); }
      keep[k++] = p;
      got += n;
    }
  planted_leak();
  printf("sites: %zu blocks live\n", k);
}

static const char *dump_file;
static _Atomic int dumped;

SITE void thread_work(int t) {
  void *live[64] = {0};
  for (int i = 0; i < 20000 || (t == 0 && !dumped && i < 20000000); i++) {
    int j = i % 64;
    free(live[j]);
    live[j] = malloc(16 + (size_t)(i * 37 + t) % 3000);
    if (t == 0 && i % 1000 == 0 && !dumped && access(dump_file, F_OK) == 0) dumped = 1;
  }
  for (int j = 0; j < 32; j++) free(live[j]); /* the others live on: freed by nobody */
}

static void *thread_main(void *arg) {
  thread_work((int)(long)arg);
  return NULL;
}

static int threads(const char *own_dump, const char *prefix, int sig) {
  static char signal_dump[4096];
  snprintf(signal_dump, sizeof signal_dump, "%s.%d.1.heap", prefix, (int)getpid());
  dump_file = signal_dump;
  pid_t child = fork();
  if (child == 0) { /* the child allocates and exits: its profile is its own */
    for (int i = 0; i < 1000; i++) sink = malloc(1000);
    exit(0);
  }
  /* Samples before the dump is asked for, so that it has lines: 1 MB at a
   * mean of 4 KiB leaves none with probability about e^-250. */
  static void *before[1000];
  for (int i = 0; i < 1000; i++) before[i] = site_a(1000);
  pthread_t th[64];
  for (long t = 0; t < 64; t++)
    if (pthread_create(&th[t], NULL, thread_main, (void *)t) != 0) return 1;
  kill(getpid(), sig); /* a dump asked for while the threads allocate */
  for (int t = 0; t < 64; t++) pthread_join(th[t], NULL);
  for (int i = 0; i < 1000; i++) free(before[i]);
  int status;
  waitpid(child, &status, 0);
  if (!dumped) { fprintf(stderr, "the signal's dump %s was not written\n", signal_dump); return 1; }
  if (smp_prof_dump == NULL || smp_prof_dump(own_dump) != 0) { fprintf(stderr, "smp_prof_dump failed\n"); return 1; }
  printf("threads: done\n");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int calloc_zero(void) {
  for (int i = 0; i < 1000; i++) {
    size_t n = 16 + (size_t)i * 29 % 8000;
    char *p = malloc(n);
    for (size_t k = 0; k < n; k++) ((volatile char *)p)[k] = (char)0xab; /* kept: volatile */
    free(p);
    unsigned char *q = calloc(1, n);
    for (size_t k = 0; k < n; k++)
      if (q[k] != 0) { fprintf(stderr, "calloc(1, %zu): byte %zu is %#x\n", n, k, q[k]); return 1; }
    free(q);
  }
  printf("calloc: zero\n");
  return 0;
}

/* grow: blocks allocated at depth d under one of 20 functions. */
SITE void *grow_down(int d, size_t n) {
  void *p = d > 0 ? grow_down(d - 1, n) : malloc(n);
  sink = p;
  return p;
}
#define GROW_FN(i) SITE void *grow_##i(int d, size_t n) { void *p = grow_down(d, n); sink = p; return p; }
GROW_FN(0) GROW_FN(1) GROW_FN(2) GROW_FN(3) GROW_FN(4) GROW_FN(5) GROW_FN(6) GROW_FN(7) GROW_FN(8) GROW_FN(9)
GROW_FN(10) GROW_FN(11) GROW_FN(12) GROW_FN(13) GROW_FN(14) GROW_FN(15) GROW_FN(16) GROW_FN(17) GROW_FN(18) GROW_FN(19)
static void *(*const grow_fn[20])(int, size_t) = {grow_0,  grow_1,  grow_2,  grow_3,  grow_4,  grow_5,  grow_6,
                                                  grow_7,  grow_8,  grow_9,  grow_10, grow_11, grow_12, grow_13,
                                                  grow_14, grow_15, grow_16, grow_17, grow_18, grow_19};

static int grow(void) {
  enum { N = 5000 };
  static void *p[N];
  static size_t n[N];
  for (int i = 0; i < N; i++) {
    n[i] = 16 + (size_t)i * 37 % 3000;
    p[i] = grow_fn[i % 20](i / 20 % 60, n[i]);
    if (p[i] == NULL || malloc_usable_size(p[i]) < n[i]) return fprintf(stderr, "grow: block %d\n", i), 1;
    memset(p[i], 0x5a, n[i]);
  }
  for (int i = 0; i < N; i++)
    if (malloc_usable_size(p[i]) < n[i]) return fprintf(stderr, "grow: block %d's size\n", i), 1;
  for (int i = 0; i < N; i++) free(p[i]);
  for (int i = 0; i < 1200; i++) sink = grow_fn[i % 20](i / 20, 100); /* live at exit */
  puts("grow: ok");
  return 0;
}

SITE int leak_in_compare(const void *a, const void *b) {
  sink = malloc(3000);
  return *(const int *)a - *(const int *)b;
}
SITE void *leak_in_thread(void *arg) {
  for (int i = 0; i < 100; i++) sink = malloc(3000);
  return arg;
}
static volatile sig_atomic_t spun, caught;
SITE void leak_in_handler(int sig) {
  (void)sig;
  for (int i = 0; i < 200; i++) sink = malloc(3000);
  caught = 1;
}
SITE void *spin_thread(void *arg) {
  while (!caught) spun = 1; /* the signal interrupts this frame, the thread's outermost */
  return arg;
}
SITE int bottom(void) {
  int v[64];
  for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64;
  qsort(v, 64, sizeof *v, leak_in_compare);
  pthread_t t;
  if (pthread_create(&t, NULL, leak_in_thread, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
  signal(SIGUSR2, leak_in_handler);
  if (pthread_create(&t, NULL, spin_thread, NULL) != 0) return 1;
  while (!spun) {}
  pthread_kill(t, SIGUSR2);
  return pthread_join(t, NULL);
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "bottom") == 0) return bottom();
  if (argc >= 2 && strcmp(argv[1], "grow") == 0) return grow();
  if (argc >= 2 && strcmp(argv[1], "calloc") == 0) return calloc_zero();
  if (argc >= 2 && strcmp(argv[1], "sites") == 0) sites();
  else if (argc >= 5 && strcmp(argv[1], "threads") == 0) return threads(argv[2], argv[3], atoi(argv[4]));
  else { fprintf(stderr, "usage: prof_sites sites | calloc | grow | bottom | threads OWN_DUMP DUMP_PREFIX SIGNO\n"); return 2; }
  return 0;
}
