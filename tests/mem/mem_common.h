/* mem_common.h: helpers shared by the memory tests tests/mem/mem_*.c
 * (mem_classes, mem_fork, mem_prodcons, mem_purge_auto, mem_rss_return,
 * mem_threads), each of which includes it; nothing else does.
 *
 * It holds: the --expect smpalloc|glibc check (is libsmpalloc in
 * /proc/self/maps?), RSS from /proc/self/statm, a monotonic clock in
 * seconds, the xorshift64 generator, the per-word pattern of a block id, and
 * the block records two tests each share, and "ok:"/"FAIL:" checks with the
 * page faults they count (mem_check, mem_minflt, mem_filled).  All functions are static inline,
 * so a test that uses only some of them compiles without warnings.
 *
 * Define MEM_PROG (the program's name, a string: "mem_fork") before the
 * include; it prefixes the messages printed here.
 */
#ifndef MEM_COMMON_H
#define MEM_COMMON_H

#ifndef MEM_PROG
#error "define MEM_PROG (the program's name) before including mem_common.h"
#endif

#include <fcntl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)

/* 1 if a mapping of libsmpalloc is in /proc/self/maps, 0 if not, -1 if the
 * file cannot be read. */
static inline int smpalloc_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, "libsmpalloc") != NULL) found = 1;
  fclose(f);
  return found;
}

/* --expect EXPECT: 0 when libsmpalloc is mapped and EXPECT is "smpalloc", or
 * it is not and EXPECT is anything else ("glibc"), or EXPECT is NULL (no
 * --expect given); else a message on stderr and 1 (the exit status). */
static inline int expect_allocator(const char *expect) {
  if (expect == NULL) return 0;
  int m = smpalloc_mapped();
  if (m != (strcmp(expect, "smpalloc") == 0)) {
    fprintf(stderr, MEM_PROG ": expected %s, but libsmpalloc is %s in /proc/self/maps\n", expect,
            m ? "mapped" : "not mapped");
    return 1;
  }
  return 0;
}

/* Resident set size in bytes (/proc/self/statm); exits 2 if unreadable. */
static inline size_t rss_bytes(void) {
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  if (fd >= 0) close(fd);
  unsigned long size, resident;
  if (n <= 0) {
    fprintf(stderr, MEM_PROG ": cannot read /proc/self/statm\n");
    exit(2);
  }
  buf[n] = '\0';
  if (sscanf(buf, "%lu %lu", &size, &resident) != 2) exit(2);
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* Peak resident set size in KiB (VmHWM of /proc/self/status); exits 2 if
 * unreadable. */
static inline size_t hwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t kib = 0;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtoul(line + 6, NULL, 10);
  if (f != NULL) fclose(f);
  if (kib == 0) {
    fprintf(stderr, MEM_PROG ": cannot read VmHWM\n");
    exit(2);
  }
  return kib;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: the next value of the state *s (never 0 from a nonzero seed). */
static inline uint64_t next_rand(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* The pattern of block id: its 64-bit word number w. */
static inline uint64_t word_of(uint64_t id, size_t w) {
  return (id * 0x9E3779B97F4A7C15ull) ^ (w * 0xD6E8FEB86659FD93ull);
}

/* A block filled with the pattern of id (mem_fork, mem_threads). */
struct blk {
  unsigned char *p;
  size_t size;
  uint64_t id;
};

/* A block in a chain linked through its first word, so that no pointer
 * array adds to RSS; a byte pattern follows (mem_purge_auto,
 * mem_rss_return). */
struct block {
  struct block *next;
  uint32_t size;
  uint32_t tag;
};

/* A check that prints "ok: what" or "FAIL: what" and counts failures. */
static int mem_fails;
static inline void mem_check(int cond, const char *what) {
  printf("%s: %s\n", cond ? "ok" : "FAIL", what);
  if (!cond) mem_fails++;
}

/* The process's minor page faults so far. */
static inline long mem_minflt(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

/* Are the n bytes at p all v? */
static inline int mem_filled(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

#endif
