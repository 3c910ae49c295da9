/* mem_startup: which libc functions smpalloc calls while a program starts
 * and mallocs once (t_mem_startup.sh).
 *
 * A libc function the program itself never calls costs resident memory the
 * first time the allocator calls it: its page of libc is mapped, with up to
 * 15 neighbours (the kernel's fault-around), 64 KiB.  So smpalloc's start-up
 * makes its system calls through syscall() and reads no clock (src/os.h).
 * This program defines clock_gettime, sched_getaffinity, getrlimit and
 * __register_atfork (what pthread_atfork calls) itself (linked with
 * -rdynamic, so the library's calls bind to them: the executable comes
 * first in the lookup order), counts the calls and passes them on (system
 * calls; libc's __register_atfork).  It prints
 *
 *   start: clock_gettime=C sched_getaffinity=A getrlimit=R atfork=F
 *
 * for everything up to and including a malloc and a free in main, then
 * starts a thread that mallocs and frees (smpalloc reads the clock when a
 * second thread starts, and registers its fork handlers at the first lock
 * taken once there are two threads: the counts must grow, or the counting
 * does not see the library's calls at all) and prints
 *
 *   thread: clock_gettime=C atfork=F
 *
 * With --race N it starts N threads instead, which meet at a barrier and
 * malloc at once: the fork handlers must be registered once, and nobody
 * may hang (in practice the first pthread_create registers them, with its
 * calloc of the new thread's TLS, before any racer allocates), and prints
 *
 *   race: threads=N atfork=F
 *
 *   mem_startup [--expect smpalloc|glibc] [--race N]
 */
#define MEM_PROG "mem_startup"
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "mem_common.h"

static _Atomic int n_clock, n_affinity, n_rlimit, n_atfork;

int clock_gettime(clockid_t clock, struct timespec *ts) {
  n_clock++;
  return syscall(SYS_clock_gettime, clock, ts) == 0 ? 0 : -1;
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set) {
  n_affinity++;
  long got = syscall(SYS_sched_getaffinity, pid, size, set);
  if (got < 0) return -1;
  if ((size_t)got < size) memset((char *)set + got, 0, size - (size_t)got);
  return 0;
}

int getrlimit(__rlimit_resource_t resource, struct rlimit *limit) {
  n_rlimit++;
  return syscall(SYS_prlimit64, 0, resource, NULL, limit) == 0 ? 0 : -1;
}

int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso) {
  n_atfork++;
  int (*next)(void (*)(void), void (*)(void), void (*)(void), void *) =
      (int (*)(void (*)(void), void (*)(void), void (*)(void), void *))dlsym(RTLD_NEXT, "__register_atfork");
  return next != NULL ? next(prepare, parent, child, dso) : -1;
}

static void *worker(void *arg) {
  free(malloc(100));
  return arg;
}

static pthread_barrier_t start_line;

static void *racer(void *arg) {
  pthread_barrier_wait(&start_line);
  free(malloc(200));
  return arg;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  int race = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--expect") == 0) expect = argv[i + 1];
    else if (strcmp(argv[i], "--race") == 0) race = atoi(argv[i + 1]);
  }
  free(malloc(10));
  int start_clock = n_clock, start_atfork = n_atfork;
  printf("start: clock_gettime=%d sched_getaffinity=%d getrlimit=%d atfork=%d\n", start_clock, n_affinity,
         n_rlimit, start_atfork);
  if (expect_allocator(expect) != 0) return 1;
  if (race > 0) {
    pthread_t r[64];
    if (race > 64) race = 64;
    pthread_barrier_init(&start_line, NULL, (unsigned)race);
    for (int i = 0; i < race; i++)
      if (pthread_create(&r[i], NULL, racer, NULL) != 0) return 2;
    for (int i = 0; i < race; i++) pthread_join(r[i], NULL);
    printf("race: threads=%d atfork=%d\n", race, n_atfork - start_atfork);
    return 0;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
    fprintf(stderr, MEM_PROG ": cannot run a thread\n");
    return 2;
  }
  printf("thread: clock_gettime=%d atfork=%d\n", n_clock - start_clock, n_atfork - start_atfork);
  return 0;
}
