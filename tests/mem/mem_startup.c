/* mem_startup: which libc functions smpalloc calls while a program starts
 * and mallocs once (t_mem_startup.sh).
 *
 * A libc function the program itself never calls costs resident memory the
 * first time the allocator calls it: its page of libc is mapped, with up to
 * 15 neighbours (the kernel's fault-around), 64 KiB.  So smpalloc's start-up
 * makes its system calls through syscall() and reads no clock (src/os.h).
 * This program defines clock_gettime, sched_getaffinity and getrlimit
 * itself (linked with -rdynamic, so the library's calls bind to them: the
 * executable comes first in the lookup order), counts the calls and passes
 * them on as system calls.  It prints
 *
 *   start: clock_gettime=C sched_getaffinity=A getrlimit=R
 *
 * for everything up to and including a malloc and a free in main, then
 * starts a thread that mallocs and frees (smpalloc reads the clock when a
 * second thread starts: the count must grow, or the counting does not see
 * the library's calls at all) and prints
 *
 *   thread: clock_gettime=C
 *
 *   mem_startup [--expect smpalloc|glibc]
 */
#define MEM_PROG "mem_startup"
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "mem_common.h"

static _Atomic int n_clock, n_affinity, n_rlimit;

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

static void *worker(void *arg) {
  free(malloc(100));
  return arg;
}

int main(int argc, char **argv) {
  const char *expect = argc > 2 && strcmp(argv[1], "--expect") == 0 ? argv[2] : NULL;
  free(malloc(10));
  int start_clock = n_clock;
  printf("start: clock_gettime=%d sched_getaffinity=%d getrlimit=%d\n", start_clock, n_affinity, n_rlimit);
  if (expect_allocator(expect) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
    fprintf(stderr, MEM_PROG ": cannot run a thread\n");
    return 2;
  }
  printf("thread: clock_gettime=%d\n", n_clock - start_clock);
  return 0;
}
