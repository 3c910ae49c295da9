/* fault_misuse.c - one misuse of the heap per mode, for t_checked.sh (run
 * under LD_PRELOAD with SMPALLOC_CHECKED=1).  Prints "addr 0x..." (the
 * pointer the allocator must name) on stdout before the bad call; if the
 * process survives the call it prints "survived" and exits 3.
 *
 * modes:
 *   double_later  free(a); free(b); free(a)   (not an immediate double free)
 *   stack         free of a stack address
 *   static        free of a static array's element
 *   mmap          free of a page from mmap
 *   unhanded      free of a block start in a live slab never handed out
 *   interior      free of a block's address + 8
 *   uaf_write     write into a freed block's first 8 bytes, then allocate
 *                 blocks of its size (the free-list link is corrupted)
 *   ok            a clean run (exits 0) */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char static_array[256];

/* Keep the compiler from seeing through pointers it could prove bad. */
static void *launder(void *p) {
  __asm__ volatile("" : "+r"(p));
  return p;
}
static void announce(const void *p) {
  printf("addr %p\n", p);
  fflush(stdout);
}
static int survived(void) {
  printf("survived\n");
  return 3;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s mode\n", argv[0]);
    return 2;
  }
  const char *m = argv[1];
  /* Blocks that stay live, so that no slab of the test's classes empties
   * (and leaves the page map) during the test. */
  void *keep[4];
  for (int i = 0; i < 4; i++) keep[i] = launder(malloc(48));
  if (!strcmp(m, "double_later")) {
    char *a = launder(malloc(48)), *b = launder(malloc(48));
    if (!a || !b) return 2;
    volatile uintptr_t ua = (uintptr_t)a; /* a, as the compiler cannot follow */
    announce(a);
    free(a);
    free(b);
    free((void *)ua);
  } else if (!strcmp(m, "stack")) {
    char buf[64];
    memset(buf, 1, sizeof buf);
    char *p = launder(buf + 16);
    announce(p);
    free(p);
  } else if (!strcmp(m, "static")) {
    char *p = launder(static_array + 64);
    announce(p);
    free(p);
  } else if (!strcmp(m, "mmap")) {
    char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 2;
    p = launder(p);
    announce(p);
    free(p);
  } else if (!strcmp(m, "unhanded")) {
    /* The last block of the 64 KiB slab of a fresh block of a class
     * nothing else uses: a valid block start, never handed out. */
    char *a = launder(malloc(1000));
    if (!a) return 2;
    size_t u = malloc_usable_size(a);
    uintptr_t end = ((uintptr_t)a & ~(uintptr_t)0xffff) + 0x10000;
    size_t k = (end - (uintptr_t)a) / u - 1;
    if (k == 0) return 2;
    char *p = launder(a + k * u);
    announce(p);
    free(p);
  } else if (!strcmp(m, "interior")) {
    char *a = launder(malloc(64));
    if (!a) return 2;
    char *p = launder(a + 8);
    announce(p);
    free(p);
  } else if (!strcmp(m, "uaf_write")) {
    char *a = launder(malloc(48));
    if (!a) return 2;
    volatile uintptr_t ua = (uintptr_t)a;
    announce(a);
    free(a);
    memset((void *)ua, 0x41, 8); /* the use after free */
    for (int i = 0; i < 8; i++) launder(malloc(48));
  } else if (!strcmp(m, "ok")) {
    for (int i = 0; i < 4; i++) free(keep[i]);
    void *p[100];
    for (int i = 0; i < 100; i++) p[i] = malloc((size_t)(i * 37 % 3000 + 1));
    for (int i = 0; i < 100; i += 2) free(p[i]);
    for (int i = 1; i < 100; i += 2) free(p[i]);
    printf("ok\n");
    return 0;
  } else {
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
  }
  return survived();
}
