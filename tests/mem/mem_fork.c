/* mem_fork: fork while 8 threads allocate, FORKS times.
 *
 * Eight worker threads run from start to end: each keeps 32 blocks and
 * replaces a random one per step (verify every byte, free; then malloc,
 * calloc (checked zero) or realloc (checked prefix) of 1 B..32 KiB, and 1 in
 * 50 a large block of 33 KiB..512 KiB, filled with a pattern; and 1 step in
 * 4 a burst of 48 blocks of 1..4 KiB allocated and freed, more than a thread
 * cache keeps, so the allocator's locks are taken often), counting its
 * steps (at nice 10, so the children get CPU time on a small machine).  The
 * main thread, FORKS times: allocates a few blocks (small, up to a 2 MiB
 * one mapped alone) and forks.  The child verifies and frees those inherited
 * blocks, allocates, verifies and frees blocks of many sizes (1 B..4 MiB),
 * starts a thread that does the same, joins it and exits 0 (an alarm of 60 s
 * kills a child that hangs, so a deadlock there shows as a signal).  The
 * parent reaps the child, checks it exited 0, and waits (condition
 * variable) until every worker has taken a whole step begun after the fork
 * (a worker stuck on a lock would stop the program: the script's timeout
 * catches it).
 *
 *   mem_fork [--expect smpalloc|glibc] [--forks N] [--child-alarm S]
 *            [--hang-child]   (control: every 10th child blocks on a mutex
 *                              the parent held at fork time, as a lock not
 *                              reset in the child would; the test must fail)
 *            [--fork-rss KIB] (only this: one fork, after a second thread
 *                              allocated once and was joined, grows
 *                              the anonymous memory by at most KIB)
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MEM_PROG "mem_fork"
#include "mem_common.h"

#define NWORKERS 8
#define WSET 32

static _Atomic uint64_t steps[NWORKERS];
/* After each fork the parent raises gen; each worker, at its next step,
 * records it in seen[] and counts pending down; the last one signals. */
static _Atomic unsigned gen, seen[NWORKERS];
static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gen_cond = PTHREAD_COND_INITIALIZER;
static unsigned pending;
static _Atomic int stop;
static _Atomic int worker_failed;

/* The pattern: byte i of block id is byte i % 8 of word_of(id, i / 8). */
static unsigned char byte_of(uint64_t id, size_t i) { return (unsigned char)(word_of(id, i / 8) >> (8 * (i % 8))); }

/* Blocks are at least 8-aligned: whole words where possible.  Blocks over
 * SPARSE bytes (only the fork-time ones: large, mapped alone) get their
 * pattern in the first and last 64 bytes of every 16th page and of the last
 * page: page faults are costly, and a child should not spend its time on
 * them. */
#define SPARSE (1u << 20) /* above every worker size: never realloc'd */
static void fill_range(struct blk *b, size_t i, size_t end) {
  for (; i < end && i % 8 != 0; i++) b->p[i] = byte_of(b->id, i);
  for (; i + 8 <= end; i += 8) *(uint64_t *)(b->p + i) = word_of(b->id, i / 8);
  for (; i < end; i++) b->p[i] = byte_of(b->id, i);
}
static int check_range(const struct blk *b, size_t i, size_t end) {
  for (; i < end && i % 8 != 0; i++)
    if (b->p[i] != byte_of(b->id, i)) return -1;
  for (; i + 8 <= end; i += 8)
    if (*(const uint64_t *)(b->p + i) != word_of(b->id, i / 8)) return -1;
  for (; i < end; i++)
    if (b->p[i] != byte_of(b->id, i)) return -1;
  return 0;
}
/* The next page of a sparse block of n bytes after page pg: every 16th,
 * then the last. */
static size_t next_page(size_t pg, size_t n) {
  size_t last = (n - 1) / 4096 * 4096, next = pg + 16 * 4096;
  return pg == last ? n : next < last ? next : last;
}
static void fill(struct blk *b, size_t from) {
  if (b->size <= SPARSE) {
    fill_range(b, from, b->size);
    return;
  }
  for (size_t pg = 0; pg < b->size; pg = next_page(pg, b->size)) {
    size_t end = pg + 4096 < b->size ? pg + 4096 : b->size;
    size_t lo = pg + 64 < end ? pg + 64 : end, hi = end > pg + 64 ? end - 64 : pg;
    if (lo > from) fill_range(b, pg > from ? pg : from, lo);
    if (end > from && hi < end) fill_range(b, hi > from ? hi : from, end);
  }
}
static int check(const struct blk *b, size_t n) {
  if (b->size <= SPARSE) return check_range(b, 0, n);
  for (size_t pg = 0; pg < n; pg = next_page(pg, n)) {
    size_t end = pg + 4096 < n ? pg + 4096 : n;
    size_t lo = pg + 64 < end ? pg + 64 : end, hi = end > pg + 64 ? end - 64 : pg;
    if (check_range(b, pg, lo) != 0 || check_range(b, hi, end) != 0) return -1;
  }
  return 0;
}

static size_t pick_size(uint64_t *seed) {
  uint64_t r = next_rand(seed);
  unsigned kind = (unsigned)(r % 100);
  r >>= 8;
  if (kind < 70) return 1 + r % 512;
  if (kind < 98) return 513 + r % (32768 - 512);
  return 33 * 1024 + r % (512 * 1024 - 33 * 1024);
}

/* Replace *b by a fresh block (malloc, calloc or realloc of the old one).
 * Returns -1 if a check failed or memory ran out. */
static int replace(struct blk *b, uint64_t *seed, uint64_t id) {
  size_t size = pick_size(seed);
  unsigned how = (unsigned)(next_rand(seed) % 8);
  if (b->p != NULL && check(b, b->size) != 0) return -1;
  if (how == 0 && b->p != NULL) { /* realloc: the prefix must survive */
    unsigned char *q = realloc(b->p, size);
    if (q == NULL) return -1;
    size_t keep = size < b->size ? size : b->size;
    b->p = q;
    if (check(b, keep) != 0) return -1;
    b->size = size;
    fill(b, keep);
    return 0;
  }
  free(b->p);
  b->id = id;
  b->size = size;
  if (how == 1) {
    b->p = calloc(1, size);
    if (b->p == NULL) return -1;
    for (size_t i = 0; i < size; i++)
      if (b->p[i] != 0) return -1;
  } else {
    b->p = malloc(size);
    if (b->p == NULL) return -1;
  }
  fill(b, 0);
  return 0;
}

static void *worker(void *arg) {
  unsigned t = (unsigned)(uintptr_t)arg;
  /* Lower priority (Linux: per thread): the workers are always runnable, and
   * on a machine with few CPUs the children, which inherit the main
   * thread's priority, would otherwise wait for a share of them. */
  (void)!setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
  uint64_t seed = 0x9E3779B97F4A7C15ull * (t + 1), id = (uint64_t)t << 40;
  struct blk set[WSET];
  memset(set, 0, sizeof set);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    unsigned g = atomic_load(&gen); /* a step begun after the fork acknowledges it */
    struct blk *b = &set[next_rand(&seed) % WSET];
    if (replace(b, &seed, ++id) != 0) {
      fprintf(stderr, "mem_fork: worker %u: block %p (size %zu) failed its check\n", t, (void *)b->p, b->size);
      pthread_mutex_lock(&gen_lock);
      atomic_store(&worker_failed, 1);
      pthread_cond_signal(&gen_cond);
      pthread_mutex_unlock(&gen_lock);
      return NULL;
    }
    if (next_rand(&seed) % 4 == 0) { /* a burst past the thread cache: slot locks */
      void *burst[48];
      size_t bs = 1024 + next_rand(&seed) % 3072;
      for (unsigned i = 0; i < 48; i++) {
        if ((burst[i] = malloc(bs)) == NULL) atomic_store(&worker_failed, 1);
        else *(uint64_t *)burst[i] = id ^ i;
      }
      for (unsigned i = 0; i < 48; i++) {
        if (burst[i] != NULL && *(uint64_t *)burst[i] != (id ^ i)) atomic_store(&worker_failed, 1);
        free(burst[i]);
      }
    }
    atomic_fetch_add_explicit(&steps[t], 1, memory_order_relaxed);
    if (atomic_load_explicit(&seen[t], memory_order_relaxed) != g) {
      atomic_store(&seen[t], g);
      pthread_mutex_lock(&gen_lock);
      if (--pending == 0) pthread_cond_signal(&gen_cond);
      pthread_mutex_unlock(&gen_lock);
    }
  }
  for (unsigned i = 0; i < WSET; i++) {
    if (set[i].p != NULL && check(&set[i], set[i].size) != 0) atomic_store(&worker_failed, 1);
    free(set[i].p);
  }
  return NULL;
}

/* In a child: allocate, verify and free blocks of many sizes.  0 if fine. */
static int child_work(uint64_t seed) {
  struct blk set[16];
  memset(set, 0, sizeof set);
  for (unsigned i = 0; i < 40; i++)
    if (replace(&set[next_rand(&seed) % 16], &seed, i + 1) != 0) return -1;
  static const size_t sizes[] = {1, 8, 16, 100, 1000, 4096, 32768, 32769, 65536, 256 << 10, 2 << 20, 4 << 20};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    struct blk b = {malloc(sizes[i]), sizes[i], 1000 + i};
    if (b.p == NULL) return -1;
    fill(&b, 0);
    if (check(&b, b.size) != 0) return -1;
    free(b.p);
  }
  for (unsigned i = 0; i < 16; i++) {
    if (set[i].p != NULL && check(&set[i], set[i].size) != 0) return -1;
    free(set[i].p);
  }
  return 0;
}

static void *child_thread(void *arg) { return (void *)(intptr_t)child_work((uint64_t)(uintptr_t)arg); }

/* Anonymous resident memory in KiB (/proc/self/statm: resident less
 * shared, file-backed pages). */
static long anon_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size, resident, shared;
  int ok = f != NULL && fscanf(f, "%lu %lu %lu", &size, &resident, &shared) == 3;
  if (f) fclose(f);
  return ok ? (long)((resident - shared) * (unsigned long)sysconf(_SC_PAGESIZE) / 1024) : -1;
}

static void *alloc_once(void *arg) {
  free(malloc(100));
  return arg;
}

/* --fork-rss: one fork of a program that has allocated once, from its main
 * thread and from a second thread (joined: with two threads the fork
 * handlers are registered, lock.h), grows its anonymous memory by at most
 * max KiB (the fork handlers lock the allocator's slots: only those in use
 * should become resident). */
static int fork_rss(long max) {
  free(malloc(100));
  pthread_t t;
  if (pthread_create(&t, NULL, alloc_once, NULL) != 0 || pthread_join(t, NULL) != 0) return 2;
  long before = anon_kib();
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid < 0 || waitpid(pid, NULL, 0) != pid) return 2;
  long after = anon_kib();
  printf("mem_fork: anonymous memory %ld KiB before a fork, %ld KiB after (at most %ld more)\n", before, after,
         max);
  return before >= 0 && after - before <= max ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  unsigned forks = 200, child_alarm = 60;
  int hang_child = 0;
  long fork_rss_max = -1;
  static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--forks") == 0 && i + 1 < argc) forks = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--child-alarm") == 0 && i + 1 < argc) child_alarm = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--hang-child") == 0) hang_child = 1;
    else if (strcmp(argv[i], "--fork-rss") == 0 && i + 1 < argc) fork_rss_max = atol(argv[++i]);
    else {
      fprintf(stderr,
              "usage: %s [--expect smpalloc|glibc] [--forks N] [--child-alarm S] [--hang-child] [--fork-rss KIB]\n",
              argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  if (fork_rss_max >= 0) return fork_rss(fork_rss_max);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t th[NWORKERS];
  for (unsigned i = 0; i < NWORKERS; i++)
    if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i) != 0) return 2;
  unsigned bad_children = 0;
  uint64_t seed = 12345;
  for (unsigned f = 0; f < forks && !atomic_load(&worker_failed); f++) {
    /* Blocks the child inherits and frees. */
    struct blk pre[6];
    static const size_t pre_sizes[] = {24, 200, 3000, 20000, 100000, 2 << 20};
    for (unsigned i = 0; i < 6; i++) {
      pre[i] = (struct blk){malloc(pre_sizes[i]), pre_sizes[i], (uint64_t)f * 10 + i};
      if (pre[i].p == NULL) return 2;
      fill(&pre[i], 0);
    }
    fflush(stdout);
    fflush(stderr);
    if (hang_child) pthread_mutex_lock(&held);
    pid_t pid = fork();
    if (pid < 0) {
      perror("mem_fork: fork");
      return 2;
    }
    if (pid == 0) {
      alarm(child_alarm); /* a hung child dies of SIGALRM: the parent reports it */
      if (hang_child && f % 10 == 9) pthread_mutex_lock(&held); /* never returns */
      for (unsigned i = 0; i < 6; i++) {
        if (check(&pre[i], pre[i].size) != 0) _exit(3);
        free(pre[i].p);
      }
      if (child_work(next_rand(&seed)) != 0) _exit(4);
      pthread_t ct;
      void *res;
      if (pthread_create(&ct, NULL, child_thread, (void *)(uintptr_t)next_rand(&seed)) != 0) _exit(5);
      pthread_join(ct, &res);
      if (res != NULL) _exit(6);
      exit(0);
    }
    if (hang_child) pthread_mutex_unlock(&held);
    next_rand(&seed);
    next_rand(&seed);
    /* Every worker must take a step after the fork (no lock left held). */
    pthread_mutex_lock(&gen_lock);
    pending = NWORKERS;
    atomic_fetch_add(&gen, 1);
    pthread_mutex_unlock(&gen_lock);
    int st;
    if (waitpid(pid, &st, 0) != pid) {
      perror("mem_fork: waitpid");
      return 2;
    }
    pthread_mutex_lock(&gen_lock);
    while (pending != 0 && !atomic_load(&worker_failed)) pthread_cond_wait(&gen_cond, &gen_lock);
    pthread_mutex_unlock(&gen_lock);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      if (WIFSIGNALED(st))
        fprintf(stderr, "mem_fork: child %u killed by signal %d%s\n", f, WTERMSIG(st),
                WTERMSIG(st) == SIGALRM ? " (hung until its alarm: deadlock?)" : "");
      else
        fprintf(stderr, "mem_fork: child %u exited %d\n", f, WEXITSTATUS(st));
      bad_children++;
    }
    for (unsigned i = 0; i < 6; i++) {
      if (check(&pre[i], pre[i].size) != 0) {
        fprintf(stderr, "mem_fork: parent's block %u changed across fork %u\n", i, f);
        bad_children++;
      }
      free(pre[i].p);
    }
  }
  atomic_store(&stop, 1);
  for (unsigned i = 0; i < NWORKERS; i++) pthread_join(th[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t min = UINT64_MAX, total = 0;
  for (unsigned i = 0; i < NWORKERS; i++) {
    uint64_t s = atomic_load(&steps[i]);
    total += s;
    if (s < min) min = s;
  }
  printf("forks=%u failed_children=%u worker_steps=%llu (least %llu) worker_failed=%d time=%.2f s\n", forks,
         bad_children, (unsigned long long)total, (unsigned long long)min, atomic_load(&worker_failed),
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  if (bad_children != 0 || atomic_load(&worker_failed)) {
    printf("FAIL\n");
    return 1;
  }
  printf("ok: every child exited 0, the workers ran throughout\n");
  return 0;
}
