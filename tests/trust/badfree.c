/* badfree.c - commit one invalid free/realloc, chosen by argv[1].
 * Before the bad call it prints "addr 0x..." (the pointer passed) on stdout.
 * The allocator must abort; if the call returns, the program prints
 * "survived" and exits 0 (which the test counts as a failure).
 *
 * modes: stack static mmap interior8 interior4096 double double_large
 *        realloc_stack realloc_interior realloc_freed free_sized_big
 * and, for t_checked.sh (which runs them with SMPALLOC_CHECKED=1):
 *   double_later  free(a); free(b); free(a)   (not an immediate double free)
 *   unhanded      free of a block start in a live slab never handed out
 *   uaf_write     write into a freed block's first 8 bytes, then allocate
 *                 blocks of its size (the free-list link is corrupted)
 *   ok            a clean run: prints "ok", exits 0 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char static_array[256];

/* Hide the pointer's origin from the compiler (no -Wfree-nonheap-object,
 * no folding of the bad call). */
static void *launder(void *p)
{
  __asm__ volatile("" : "+r"(p) : : "memory");
  return p;
}

static void *from_int(uintptr_t a)
{
  __asm__ volatile("" : "+r"(a));
  return (void *)a;
}

static void announce(const void *p)
{
  printf("addr %p\n", p);
  fflush(stdout);
}

static int survived(void)
{
  printf("survived\n");
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s mode\n", argv[0]);
    return 2;
  }
  const char *m = argv[1];
  /* Some live blocks, so the allocator is initialised and has slabs. */
  void *keep[16];
  for (int i = 0; i < 16; i++) keep[i] = malloc((size_t)(i + 1) * 24);
  launder(keep);

  if (!strcmp(m, "stack")) {
    char buf[128];
    memset(buf, 0, sizeof buf);
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
  } else if (!strcmp(m, "interior8")) {
    char *p = malloc(64);
    if (!p) return 2;
    p = launder(p + 8);
    announce(p);
    free(p);
  } else if (!strcmp(m, "interior4096")) {
    char *p = malloc(1 << 20);
    if (!p) return 2;
    p = launder(p + 4096);
    announce(p);
    free(p);
  } else if (!strcmp(m, "double")) {
    char *p = launder(malloc(64));
    if (!p) return 2;
    uintptr_t a = (uintptr_t)p;
    announce(p);
    free(p);
    free(from_int(a));
  } else if (!strcmp(m, "double_large")) {
    char *p = launder(malloc(1 << 20));
    if (!p) return 2;
    uintptr_t a = (uintptr_t)p;
    announce(p);
    free(p);
    free(from_int(a));
  } else if (!strcmp(m, "realloc_stack")) {
    char buf[128];
    memset(buf, 0, sizeof buf);
    char *p = launder(buf + 16);
    announce(p);
    p = realloc(p, 100);
    launder(p);
  } else if (!strcmp(m, "realloc_interior")) {
    char *p = malloc(64);
    if (!p) return 2;
    p = launder(p + 8);
    announce(p);
    p = realloc(p, 200);
    launder(p);
  } else if (!strcmp(m, "realloc_freed")) {
    char *p = launder(malloc(64));
    if (!p) return 2;
    uintptr_t a = (uintptr_t)p;
    announce(p);
    free(p);
    p = realloc(from_int(a), 200);
    launder(p);
  } else if (!strcmp(m, "free_sized_big")) {
    void (*fs)(void *, size_t) = NULL;
    *(void **)&fs = dlsym(RTLD_DEFAULT, "free_sized");
    if (!fs) {
      printf("no free_sized\n");
      return 3;
    }
    char *p = malloc(64);
    if (!p) return 2;
    announce(p);
    fs(launder(p), 100000);
  } else if (!strcmp(m, "double_later")) {
    char *a = launder(malloc(48)), *b = launder(malloc(48));
    if (!a || !b) return 2;
    uintptr_t ua = (uintptr_t)a;
    announce(a);
    free(a);
    free(b);
    free(from_int(ua));
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
  } else if (!strcmp(m, "uaf_write")) {
    char *a = launder(malloc(48));
    if (!a) return 2;
    uintptr_t ua = (uintptr_t)a;
    announce(a);
    free(a);
    memset(from_int(ua), 0x41, 8); /* the use after free */
    for (int i = 0; i < 8; i++) launder(malloc(48));
  } else if (!strcmp(m, "ok")) {
    for (int i = 0; i < 16; i++) free(keep[i]);
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
