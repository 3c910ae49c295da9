/* install.c: a program built against the installed smpalloc with
 * pkg-config (t_install.sh builds it shared and static).  It uses the smp_*
 * API and the libc names, and checks that malloc is smpalloc's: blocks move
 * freely between the two interfaces, and malloc(3) has usable size 8
 * (glibc's is 24).  Prints "consumer ok" and exits 0, or says what is wrong
 * and exits 1. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smpalloc.h>

#define CHECK(c)                                                         \
  do {                                                                   \
    if (!(c)) {                                                          \
      fprintf(stderr, "consumer: line %d: check failed: %s\n", __LINE__, \
              #c);                                                       \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(void) {
  char *p = smp_malloc(100);
  CHECK(p != NULL && smp_usable_size(p) >= 100);
  memset(p, 'x', 100);

  char *q = malloc(3);
  CHECK(q != NULL);
  size_t u = malloc_usable_size(q);
  if (u != 8) {
    fprintf(stderr, "consumer: malloc_usable_size(malloc(3)) = %zu, want 8: "
                    "malloc is not served by smpalloc\n", u);
    return 1;
  }
  CHECK(smp_usable_size(q) == 8);
  /* Each side frees the other's block: one allocator. */
  free(p);
  smp_free(q);

  void *big = malloc(1 << 20);
  CHECK(big != NULL && smp_usable_size(big) >= (1 << 20));
  memset(big, 0, 1 << 20);
  smp_free(big);
  puts("consumer ok");
  return 0;
}
