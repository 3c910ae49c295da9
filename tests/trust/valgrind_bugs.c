/*
 * valgrind_bugs: the program of t_valgrind.sh, statically linked with the
 * valgrind build of smpalloc (build/valgrind/libsmpalloc.a).  One mode per
 * run: "clean" goes through every way smpalloc hands out, resizes, moves
 * and frees a block (small and large, calloc, realloc, aligned, the sized
 * interface, a second thread, malloc_trim) and must give memcheck nothing
 * to report; every other mode plants one bug that memcheck must report.
 *
 *   valgrind_bugs MODE     (MODE: see the table at the end; no MODE: list)
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smpalloc.h"

/* C23's, served by smpalloc; glibc 2.36 does not declare them. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

/* Opaque to the compiler: a pointer it cannot follow, a value it cannot
 * know, so that no planted access is optimised away. */
static void *volatile sink;
static volatile int zero;

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "valgrind_bugs: wrong: %s\n", what);
    exit(2);
  }
}

/* Fill n bytes with a pattern from seed, and check it back (every byte is
 * read, and a branch taken on it: memcheck reports any byte it thinks was
 * never written). */
static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 7);
}
static void verify(const unsigned char *p, size_t n, unsigned seed, const char *what) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed + i * 7)) check(0, what);
}

/* ---- clean: no bug, many paths ------------------------------------------ */

static void *churn(void *arg) {
  /* Frees blocks another thread allocated (remote frees), allocates its
   * own and exits (its cache goes back). */
  void **v = arg;
  for (int i = 0; i < 200; i++) free(v[i]);
  for (int i = 0; i < 300; i++) {
    unsigned char *p = malloc(16 + (size_t)i % 200);
    fill(p, 16, (unsigned)i);
    verify(p, 16, (unsigned)i, "thread block");
    free(p);
  }
  return NULL;
}

static int clean(void) {
  /* Small blocks of many classes, enough to pass the thread caches' limits
   * (batches back to the slabs, arrays growing). */
  static unsigned char *v[2000];
  for (int i = 0; i < 2000; i++) {
    size_t n = 1 + (size_t)(i * 37) % 3000;
    v[i] = malloc(n);
    fill(v[i], n, (unsigned)i);
  }
  for (int i = 0; i < 2000; i += 2) free(v[i]);
  for (int i = 1; i < 2000; i += 2) verify(v[i], 1 + (size_t)(i * 37) % 3000, (unsigned)i, "small");
  for (int i = 1; i < 2000; i += 2) free(v[i]);

  /* calloc: zero, small and large (fresh pages: no memset). */
  unsigned char *z = calloc(100, 3), *zl = calloc(1, 3 << 20);
  for (size_t i = 0; i < 300; i++) check(z[i] == 0, "calloc small");
  for (size_t i = 0; i < (3u << 20); i += 4093) check(zl[i] == 0, "calloc large");
  free(z);
  free(zl);

  /* realloc: in place (smaller, a bit larger), moving small to small, to a
   * run, to a mapping, back down; every byte kept checked. */
  unsigned char *r = malloc(100);
  fill(r, 100, 1);
  r = realloc(r, 90);   /* in place, shorter */
  verify(r, 90, 1, "realloc shorter");
  r = realloc(r, 110);  /* in place (class 112), longer: 90..110 new */
  fill(r + 90, 20, 91);
  r = realloc(r, 3000); /* moves */
  verify(r, 90, 1, "realloc moved");
  fill(r, 3000, 2);
  r = realloc(r, 200000); /* to a run */
  verify(r, 3000, 2, "realloc to a run");
  fill(r, 200000, 3);
  r = realloc(r, 500000); /* a longer run: copied */
  verify(r, 200000, 3, "realloc run grown");
  fill(r, 500000, 4);
  r = realloc(r, 3 << 20); /* a mapping */
  verify(r, 500000, 4, "realloc to a mapping");
  fill(r, 3 << 20, 5);
  r = realloc(r, 9 << 20); /* grows in place, or moves */
  verify(r, 3 << 20, 5, "realloc mapping grown");
  fill(r + (3 << 20), 6 << 20, 6);
  r = realloc(r, 5 << 20); /* shrinks in place */
  verify(r, 3 << 20, 5, "realloc mapping shrunk");
  r = realloc(r, 300000); /* back to a run */
  verify(r, 300000, 5, "realloc mapping to a run");
  r = realloc(r, 150000); /* a run shrinks in place */
  verify(r, 150000, 5, "realloc run shrunk");
  r = realloc(r, 40); /* large to small */
  verify(r, 40, 5, "realloc large to small");
  r = reallocarray(r, 10, 8);
  verify(r, 40, 5, "reallocarray");
  check(realloc(r, 0) == NULL, "realloc(p, 0)");
  /* realloc of blocks never written, shorter than a word, or empty. */
  unsigned char *t3 = realloc(malloc(3), 5), *t4 = realloc(malloc(100), 1000);
  free(realloc(t3, 500));
  free(t4);
  free(realloc(malloc(0), 5));
  free(realloc(malloc(0), 100));
  free(calloc(0, 1));

  /* malloc_usable_size: what memcheck allows is what it says. */
  unsigned char *u = malloc(21);
  size_t un = malloc_usable_size(u);
  check(un >= 21, "malloc_usable_size");
  memset(u, 1, un);
  free(u);

  /* Aligned: small, large, beyond a granule (a mapping). */
  void *a1 = aligned_alloc(64, 100), *a2 = aligned_alloc(4096, 5000), *a3 = NULL;
  void *a4 = memalign(1 << 17, 200), *a5 = valloc(10), *a6 = pvalloc(10);
  check(posix_memalign(&a3, 256, 77) == 0, "posix_memalign");
  memset(a1, 1, 100), memset(a2, 2, 5000), memset(a3, 3, 77), memset(a4, 4, 200);
  memset(a5, 5, 10), memset(a6, 6, 4096);
  a4 = realloc(a4, 300); /* a large block with a small request, to small */
  check(((unsigned char *)a4)[199] == 4, "realloc aligned");
  free(a1), free(a2), free(a3), free(a4), free(a5), free(a6);
  free_sized(malloc(30), 30);
  free_aligned_sized(aligned_alloc(32, 64), 32, 64);

  /* The sized interface. */
  unsigned char *s = smp_alloc(40, 16); /* class 48 */
  fill(s, 40, 7);
  check(smp_resize(s, 40, 16, 44), "smp_resize small");
  fill(s + 40, 4, 7 + 40 * 7); /* the pattern of s, continued */
  check(smp_remap(s, 44, 16, 48) == s, "smp_remap small");
  verify(s, 44, 7, "smp_remap small");
  smp_dealloc(s, 48, 16);
  unsigned char *sl = smp_alloc(2 << 20, 16);
  fill(sl, 2 << 20, 8);
  if (smp_resize(sl, 2 << 20, 16, 3 << 20)) fill(sl + (2 << 20), 1 << 20, 9);
  unsigned char *sl2 = smp_remap(sl, 2 << 20, 16, 6 << 20);
  if (sl2 != NULL) sl = sl2;
  verify(sl, 2 << 20, 8, "smp_remap large");
  smp_dealloc(sl, 2 << 20, 16);

  /* A second thread frees some of this thread's blocks. */
  static void *t[200];
  for (int i = 0; i < 200; i++) t[i] = malloc(24 + (size_t)i % 64);
  pthread_t th;
  check(pthread_create(&th, NULL, churn, t) == 0, "pthread_create");
  pthread_join(th, NULL);

  malloc_trim(0); /* empty slabs back to the pool */
  unsigned char *last = malloc(64);
  fill(last, 64, 10);
  verify(last, 64, 10, "after malloc_trim");
  free(last);
  puts("clean: done");
  return 0;
}

/* ---- the planted bugs --------------------------------------------------- */

/* Four blocks nothing points to at exit, each an address smpalloc keeps
 * something about: a mapping (the first mapping: the first chunk then lies
 * just below it; freed and taken again from the cache of mappings), a
 * block from the thread cache, the first block of a fresh class (its
 * slab's base), and a run; none of the small ones a class size. */
__attribute__((noinline)) static void lose(void) {
  free(malloc(3 << 20));
  sink = malloc(3 << 20);
  void *churned[10];
  for (int i = 0; i < 10; i++) churned[i] = malloc(44);
  for (int i = 0; i < 10; i++) free(churned[i]);
  sink = malloc(44);
  sink = malloc(200);
  sink = malloc(100000);
  sink = NULL;
}
static int leak(void) {
  lose();
  puts("leak: 4 blocks, 3245972 bytes");
  return 0;
}

static int uaf_read(void) {
  char *p = malloc(32);
  strcpy(p, "hello");
  free(p);
  volatile char c = p[4]; /* Invalid read: 4 bytes inside a block of size 32 free'd */
  (void)c;
  return 0;
}

static int uaf_write(void) {
  char *p = malloc(32);
  free(p);
  p[8] = 'x'; /* Invalid write: 8 bytes inside a block of size 32 free'd */
  return 0;
}

static int uaf_large(void) {
  char *p = malloc(100000);
  memset(p, 1, 100000);
  free(p);
  volatile char c = p[50000]; /* Invalid read: inside a block of size 100,000 free'd */
  (void)c;
  return 0;
}

static int overflow(void) {
  free(malloc(20));
  char *p = malloc(20); /* from the thread cache; class 32: 12 bytes past the request */
  p[20 + zero] = 1;     /* Invalid write: 0 bytes after a block of size 20 */
  free(p);
  return 0;
}

static int overflow_large(void) {
  char *p = malloc(100000); /* a run of 2 granules */
  p[100000 + zero] = 1;     /* Invalid write: 0 bytes after a block of size 100,000 */
  free(p);
  return 0;
}

static int realloc_shrunk(void) {
  char *p = malloc(100);
  memset(p, 1, 100);
  p = realloc(p, 60); /* in place: 60 bytes now */
  p[60 + zero] = 1;   /* Invalid write: 0 bytes after a block of size 60 */
  free(p);
  return 0;
}

static int realloc_moved(void) {
  char *p = malloc(16), *q;
  memset(p, 1, 16);
  q = realloc(p, 4000); /* moves: p is freed */
  volatile char c = p[zero]; /* Invalid read: 0 bytes inside a block of size 16 free'd */
  (void)c;
  free(q);
  return 0;
}

static int uninit(void) {
  unsigned char *p = malloc(16);
  p[0] = 1;
  if (p[3 + zero] == 42) puts("42"); /* Conditional jump ... uninitialised value(s) */
  free(p);
  return 0;
}

static int uninit_large(void) {
  unsigned char *p = malloc(200000); /* fresh pages, zero, but malloc's: undefined */
  if (p[1000 + zero] == 42) puts("42"); /* Conditional jump ... uninitialised value(s) */
  free(p);
  return 0;
}

static int double_free(void) {
  char *p = malloc(32);
  sink = p;
  free(p);
  free(sink); /* Invalid free(), then smpalloc's abort */
  return 0;
}

static int invalid_free(void) {
  char *p = malloc(64);
  free(p + 16 + zero); /* Invalid free(): 16 bytes inside a block of size 64 */
  return 0;
}

static const struct {
  const char *name;
  int (*run)(void);
} modes[] = {
  {"clean", clean},
  {"leak", leak},
  {"uaf_read", uaf_read},
  {"uaf_write", uaf_write},
  {"uaf_large", uaf_large},
  {"overflow", overflow},
  {"overflow_large", overflow_large},
  {"realloc_shrunk", realloc_shrunk},
  {"realloc_moved", realloc_moved},
  {"uninit", uninit},
  {"uninit_large", uninit_large},
  {"double_free", double_free},
  {"invalid_free", invalid_free},
};

int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (argc < 2) puts(modes[i].name);
    else if (strcmp(argv[1], modes[i].name) == 0) return modes[i].run();
  }
  if (argc < 2) return 0;
  fprintf(stderr, "valgrind_bugs: unknown mode %s\n", argv[1]);
  return 2;
}
