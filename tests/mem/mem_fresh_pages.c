/* mem_fresh_pages: blocks handed out from pages never touched come from
 * pages the allocator faulted in ahead, a batch per system call, not one
 * page fault per page at the program's first write (docs/design.md, "Page
 * faults and huge pages").
 *
 * Two phases, each counted with the kernel's software page-fault counter
 * (perf_event_open, PERF_COUNT_SW_PAGE_FAULTS: the faults a program takes
 * when it touches a page; pages that MADV_POPULATE_WRITE faults in are not
 * counted):
 *   small: 1,000 blocks of 48 bytes (a size class's first slab, whose pages
 *          are otherwise faulted one by one), each written whole;
 *   mid:   400 blocks of 1,000 bytes (that class's first slab and three
 *          more), each written whole.
 * Prints "PHASE pages N faults N" (N pages: the blocks' bytes over 4 KiB)
 * and fails (exit 1) if a phase took more than pages / DIV faults
 * (--max-share DIV; without it nothing is asserted).  Exit 77 when the
 * counter cannot be opened here.
 *
 *   mem_fresh_pages [--expect smpalloc|glibc] [--max-share DIV]
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MEM_PROG "mem_fresh_pages"
#include "mem_common.h"

static int fault_counter(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_SW_PAGE_FAULTS;
  a.disabled = 1;
  return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* Allocate n blocks of size bytes into v, writing each whole; returns the
 * page faults taken meanwhile. */
static uint64_t phase(int fd, char **v, size_t n, size_t size) {
  uint64_t count = 0;
  ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  for (size_t i = 0; i < n; i++) {
    if ((v[i] = malloc(size)) == NULL) {
      fprintf(stderr, MEM_PROG ": malloc(%zu) failed\n", size);
      exit(2);
    }
    memset(v[i], (int)(i & 0xff), size);
  }
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  if (read(fd, &count, sizeof count) != (ssize_t)sizeof count) {
    perror(MEM_PROG ": reading the counter");
    exit(2);
  }
  return count;
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  long share = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--max-share") == 0 && i + 1 < argc) share = atol(argv[++i]);
    else { fprintf(stderr, "usage: " MEM_PROG " [--expect smpalloc|glibc] [--max-share DIV]\n"); return 2; }
  }
  if (expect_allocator(expect) != 0) return 1;
  int fd = fault_counter();
  if (fd < 0) {
    perror(MEM_PROG ": perf_event_open (software page faults)");
    return 77;
  }
  static char *v[1000]; /* static: its pages are not the allocator's */
  memset(v, 0, sizeof v);
  struct { const char *name; size_t n, size; } phases[] = {{"small", 1000, 48}, {"mid", 400, 1000}};
  int bad = 0;
  for (size_t p = 0; p < sizeof phases / sizeof phases[0]; p++) {
    uint64_t faults = phase(fd, v, phases[p].n, phases[p].size);
    size_t pages = phases[p].n * phases[p].size / 4096;
    printf("%s pages %zu faults %llu\n", phases[p].name, pages, (unsigned long long)faults);
    if (share > 0 && faults > pages / (size_t)share) {
      printf("%s: more than %zu faults (a page in %ld)\n", phases[p].name, pages / (size_t)share, share);
      bad = 1;
    }
  }
  return bad;
}
