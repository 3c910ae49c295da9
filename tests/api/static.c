/* static.c - linked with build/libsmpalloc.a: proves that the libc
 * names in this program are served by smpalloc (not glibc) and that the
 * program does not load libsmpalloc.so.  Exit 0 and "static: ok". */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smpalloc.h"

static int fails;
#define EXPECT(c)                                                   \
  do {                                                              \
    if (!(c)) {                                                     \
      fprintf(stderr, "static:%d: failed: %s\n", __LINE__, #c); \
      fails++;                                                      \
    }                                                               \
  } while (0)

static void *volatile sink;

int main(void)
{
  /* A block from malloc is known to smpalloc's own query, with the same
   * usable size malloc_usable_size reports. */
  for (size_t n = 1; n <= ((size_t)4 << 20); n = n * 3 + 1) {
    char *p = malloc(n);
    EXPECT(p != NULL);
    if (!p) continue;
    sink = p;
    EXPECT(smp_usable_size(p) >= n);
    EXPECT(smp_usable_size(p) == malloc_usable_size(p));
    memset(p, 1, n);
    smp_free(p); /* smpalloc frees what malloc handed out */
  }
  /* smpalloc's documented malloc(0): usable size 8 (glibc's is 24). */
  void *z = malloc(0);
  EXPECT(z && malloc_usable_size(z) == 8);
  free(z);
  /* And free takes what smp_malloc handed out. */
  void *q = smp_malloc(1000);
  EXPECT(q && malloc_usable_size(q) == smp_usable_size(q));
  free(q);
  /* Allocations made inside libc go through our malloc as well. */
  char *s = strdup("allocated by libc");
  EXPECT(s && smp_usable_size(s) >= 18);
  free(s);
  /* Not the shared library: the program's maps must not name it. */
  FILE *f = fopen("/proc/self/maps", "r");
  EXPECT(f != NULL);
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      EXPECT(strstr(line, "libsmpalloc.so") == NULL);
    fclose(f);
  }
  if (fails) return 1;
  puts("static: ok");
  return 0;
}
