/*
 * os_proc.c - the process from the kernel: the clock, the CPU count,
 * random bits, futexes, threads, messages on stderr.  With os.c (memory)
 * the only files of smpalloc that talk to the kernel.  The contract of
 * every function is in os.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "os.h"

uint32_t os_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts); /* vDSO: no kernel entry */
  return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* The CPU limit of the cgroup (v2 cpu.max: "QUOTA PERIOD" or "max PERIOD"),
 * rounded up; 0 when there is none or it cannot be read.  Plain system
 * calls on a stack buffer: no stdio, no allocation. */
static unsigned os_cgroup_cpus(void) {
  char buf[64];
  int fd = open("/sys/fs/cgroup/cpu.max", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0 || buf[0] < '0' || buf[0] > '9') return 0; /* "max": no limit */
  buf[n] = '\0';
  unsigned long quota = 0, period = 0;
  char *s = buf;
  while (*s >= '0' && *s <= '9') quota = quota * 10 + (unsigned long)(*s++ - '0');
  while (*s == ' ') s++;
  while (*s >= '0' && *s <= '9') period = period * 10 + (unsigned long)(*s++ - '0');
  if (period == 0) return 0;
  return (unsigned)((quota + period - 1) / period);
}

unsigned os_cpu_count(void) {
  unsigned long mask[sizeof(cpu_set_t) / sizeof(unsigned long)];
  int saved = errno;
  unsigned n = 0;
  /* The system call itself, not libc's wrapper (nor CPU_COUNT's helper):
   * no allocation, safe early, and no page of libc that the program may
   * never use gets mapped (os.h).  It returns the bytes of the mask it
   * wrote. */
  long got = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
  for (long i = 0; i < got / (long)sizeof *mask; i++) n += (unsigned)__builtin_popcountl(mask[i]);
  if (n == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (unsigned)c : 1;
  }
  unsigned limit = os_cgroup_cpus();
  if (limit > 0 && limit < n) n = limit;
  errno = saved;
  return n;
}

uint64_t os_random(void) {
  const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
  uint64_t v = 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)&v;
  if (r != NULL) memcpy(&v, r + 8, sizeof v); /* glibc uses the first 8 for the stack guard */
  return v;
}

void os_futex_wait(_Atomic int *addr, int val) {
  int saved = errno;
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
  errno = saved;
}

void os_futex_wait_ms(_Atomic int *addr, int val, uint32_t ms) {
  int saved = errno;
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
  errno = saved;
}

int os_gettid(void) { return (int)syscall(SYS_gettid); }

bool os_task_in_syscall(int tid) {
  int saved = errno;
  char path[48] = "/proc/self/task/", digits[12], buf[32];
  int k = 0, at = 16;
  for (unsigned v = (unsigned)tid; k == 0 || v != 0; v /= 10) digits[k++] = (char)('0' + v % 10);
  while (k > 0) path[at++] = digits[--k];
  memcpy(path + at, "/syscall", 9);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  errno = saved;
  /* "running", "-1 ..." (blocked, not in a system call), or "NR ...". */
  return n > 0 && buf[0] >= '0' && buf[0] <= '9';
}

bool os_thread_start(void *(*fn)(void *), const char *name) {
  int saved = errno;
  pthread_attr_t attr;
  pthread_t t;
  sigset_t all, old;
  /* The thread takes no signal of the program's: every one is blocked in
   * it (it inherits the mask it is created with). */
  sigfillset(&all);
  bool ok = pthread_attr_init(&attr) == 0;
  if (ok) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64u << 10);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ok = pthread_create(&t, &attr, fn, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (ok && name != NULL) pthread_setname_np(t, name);
  }
  errno = saved;
  return ok;
}

void os_futex_wake(_Atomic int *addr, int n) {
  int saved = errno;
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
  errno = saved;
}

int os_dup_stderr(void) {
  int saved = errno;
  int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  errno = saved;
  return fd < 0 ? STDERR_FILENO : fd;
}

void os_write_fd(int fd, const char *s, size_t len) {
  int saved = errno;
  while (len > 0) {
    ssize_t w = write(fd, s, len);
    if (w <= 0) break;
    s += w;
    len -= (size_t)w;
  }
  errno = saved;
}

void os_write_err(const char *s, size_t len) { os_write_fd(STDERR_FILENO, s, len); }

int os_file_create(const char *path) {
  int saved = errno;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  errno = saved;
  return fd;
}

void os_close(int fd) {
  int saved = errno;
  close(fd);
  errno = saved;
}

int os_getpid(void) { return (int)syscall(SYS_getpid); }

static struct sigaction os_old_action[65];

bool os_signal_catch(int sig, os_signal_fn *fn) {
  if (sig <= 0 || sig > 64) return false;
  int saved = errno;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))(void *)fn;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  bool ok = sigaction(sig, &sa, &os_old_action[sig]) == 0;
  errno = saved;
  return ok;
}

void os_signal_forward(int sig, void *info, void *ctx) {
  struct sigaction *old = &os_old_action[sig];
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction != NULL) return old->sa_sigaction(sig, info, ctx);
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    return old->sa_handler(sig);
  }
  signal(sig, SIG_DFL); /* the instruction faults again, to the default action */
}

uintptr_t os_fault_addr(const void *info) { return (uintptr_t)((const siginfo_t *)info)->si_addr; }

/* Append s to buf at *len (bounded). */
static void os_put(char *buf, size_t cap, size_t *len, const char *s) {
  while (*s && *len + 1 < cap) buf[(*len)++] = *s++;
}

void os_fail(const char *call, const char *what, const void *addr) { os_fatal(call, what, addr); }

void os_fatal(const char *call, const char *what, const void *addr) {
  char buf[256], hex[19];
  size_t len = 0;
  os_put(buf, sizeof buf, &len, "smpalloc: ");
  os_put(buf, sizeof buf, &len, call);
  os_put(buf, sizeof buf, &len, "(): ");
  os_put(buf, sizeof buf, &len, what);
  if (addr != NULL) {
    uintptr_t a = (uintptr_t)addr;
    int i = 18;
    hex[i] = '\0';
    do { hex[--i] = "0123456789abcdef"[a & 15]; a >>= 4; } while (a && i > 2);
    hex[--i] = 'x';
    hex[--i] = '0';
    os_put(buf, sizeof buf, &len, " ");
    os_put(buf, sizeof buf, &len, hex + i);
  }
  buf[len++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf, len);
  (void)w;
  abort();
}
