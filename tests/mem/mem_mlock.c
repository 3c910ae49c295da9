/* mem_mlock: a program that locks its memory (mlockall) after its first
 * malloc, then allocates (t_mem_mlock.sh runs it).
 *
 *   mem_mlock [--expect smpalloc|glibc] FLAGS MIB
 *     mallocs once; calls mlockall(FLAGS) (current, future, onfault: a
 *     comma list, as MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT); then allocates
 *     MIB MiB of 4000-byte blocks, each written whole, and keeps them.
 *
 * Prints "mlockall_kib N blocks_kib N" (RSS growth over the call, and
 * over the allocations), or "mlockall_errno N" and exits 77 when the
 * kernel refuses the call (no CAP_IPC_LOCK, a low RLIMIT_MEMLOCK).  Also
 * checks that mlockall(0) fails with EINVAL, as the kernel's does. */
#define MEM_PROG "mem_mlock"
#include <errno.h>
#include <sys/mman.h>

#include "mem_common.h"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

int main(int argc, char **argv) {
  int a = 1;
  const char *expect = NULL;
  if (a + 1 < argc && strcmp(argv[a], "--expect") == 0) expect = argv[a + 1], a += 2;
  if (argc - a != 2) {
    fprintf(stderr, "usage: mem_mlock [--expect smpalloc|glibc] current,future,onfault MIB\n");
    return 2;
  }
  if (expect_allocator(expect)) return 1;
  int flags = 0;
  if (strstr(argv[a], "current")) flags |= MCL_CURRENT;
  if (strstr(argv[a], "future")) flags |= MCL_FUTURE;
  if (strstr(argv[a], "onfault")) flags |= MCL_ONFAULT;
  size_t mib = (size_t)atol(argv[a + 1]);
  free(malloc(16));
  errno = 0;
  if (mlockall(0) == 0 || errno != EINVAL) {
    fprintf(stderr, MEM_PROG ": mlockall(0) did not fail with EINVAL (errno %d)\n", errno);
    return 1;
  }
  size_t r0 = rss_bytes();
  if (mlockall(flags) != 0) {
    printf("mlockall_errno %d\n", errno);
    return 77;
  }
  size_t r1 = rss_bytes();
  for (size_t done = 0; done < mib << 20; done += 4000) {
    char *p = malloc(4000);
    if (p == NULL) { fprintf(stderr, MEM_PROG ": malloc failed\n"); return 2; }
    memset(p, 1, 4000);
  }
  size_t r2 = rss_bytes();
  munlockall();
  printf("mlockall_kib %zu blocks_kib %zu\n", (r1 - r0) >> 10, (r2 - r1) >> 10);
  return 0;
}
