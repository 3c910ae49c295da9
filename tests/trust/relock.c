/* relock.c - a lock taken twice by one thread is caught, never waited for:
 * the allocator's own mutex (src/lock.h), taken by main, then by a signal
 * handler that interrupts it (the way a handler's malloc would reach a lock
 * its interrupted thread holds, had no slow path's guard served it aside:
 * src/reentry.h).  Built with the core sources.
 * usage: relock [threads]
 *   threads 0: the process has one thread (plain stores: lock.h, lock_try)
 *   threads 1: a second thread exists (the compare-and-swap path)
 * Expected: "addr 0x..." (the lock) on stdout, one line "smpalloc:
 * malloc(): re-entered ... 0x..." on stderr and SIGABRT; a
 * hang is the caller's to bound (timeout); "relock: not caught" and exit 1
 * if the second take returned. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lock.h"

static lock_t l;
static pthread_barrier_t go;

static void on_usr1(int sig) {
  (void)sig;
  lock_take(&l);
  static const char msg[] = "relock: not caught\n";
  (void)!write(1, msg, sizeof msg - 1);
  _exit(1);
}

static void *idle(void *arg) {
  (void)arg;
  pthread_barrier_wait(&go);
  pause();
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 0;
  signal(SIGUSR1, on_usr1);
  if (threads) {
    pthread_t t;
    pthread_barrier_init(&go, NULL, 2);
    if (pthread_create(&t, NULL, idle, NULL) != 0) return 2;
    pthread_barrier_wait(&go);
  }
  printf("addr %p\n", (void *)&l);
  fflush(stdout);
  lock_take(&l);
  raise(SIGUSR1);
  puts("relock: the handler returned");
  return 1;
}
