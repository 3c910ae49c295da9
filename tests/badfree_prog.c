/* badfree_prog.c - commit one invalid free/realloc, chosen by argv[1].
 * Before the bad call it prints "addr 0x..." (the pointer passed) on stdout.
 * The allocator must abort; if the call returns, the program prints
 * "survived" and exits 0 (which the test counts as a failure).
 *
 * modes: stack static mmap interior8 interior4096 double double_large
 *        realloc_stack realloc_interior realloc_freed free_sized_big */
#include <dlfcn.h>
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
  } else {
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
  }
  return survived();
}
