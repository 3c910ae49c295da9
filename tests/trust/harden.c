/*
 * harden.c - heap misuse, one kind per mode, for t_harden.sh: the program
 * commits the misuse and then checks what the allocator hands out.
 *
 *   harden MODE
 *
 * Output: "addr 0x..." (the block misused, when there is one) before the
 * misuse, then, if the program gets to the end, "handed out nothing wrong"
 * (exit 0) or "WRONG: ..." (exit 1).  An abort of the allocator ends it
 * with SIGABRT instead; t_harden.sh says which outcome each mode needs.
 * Under glibc the same modes run for reference.
 *
 * Modes:
 *   uaf_link        a chosen pointer written into a freed block's first
 *                   word, then malloc twice
 *   overflow_next   8 bytes written past a 32-byte block into its free
 *                   neighbour, then malloc twice
 *   aba             free(a); free(b); free(a)
 *   keyless_double  free(a), its first word (the free key) overwritten,
 *                   free(a) again, then 500 more frees of its size: only
 *                   the slab's bitmap can see it (when the blocks go back)
 *   keyless_double_run  the same, but the second free lands in a run of
 *                   neighbours freed in order (the slab takes a run's
 *                   bits at once: the one already set must stop it)
 *   never           free of a block start of a live slab never handed out
 *   realloc_freed   realloc of a freed block to a larger size
 *   slab_edge       8 bytes written past the last block of a slab, then
 *                   every block freed and allocated again
 *   junk            junk in every word of freed blocks, then malloc on
 *   huge            malloc(RAM + swap + 1 GiB), calloc(1, 32 TiB): NULL,
 *                   ENOMEM
 *   align           malloc(n) for n in 16..1024: 16-aligned
 *   libc_names      __libc_malloc/__libc_memalign/__libc_calloc blocks to
 *                   free, __libc_free of malloc's; mallinfo, mallopt answer
 *   checked_uaf8    a write at offset 8 of a freed 32-byte block, then the
 *                   block's slab empties or the block is taken again
 *                   (caught in checked mode only)
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define CHOSEN ((void *)0x4141414141414140ull)

/* Allocation in a constructor: with a static link it may run before the
 * allocator's own constructor, and must not leave checked mode off. */
static void *early;
__attribute__((constructor)) static void early_alloc(void) { early = malloc(24); }

static int wrong(const char *what) {
  printf("WRONG: %s\n", what);
  return 1;
}
static void announce(const void *p) {
  printf("addr %p\n", p);
  fflush(stdout);
}

/* Allocate two blocks after a misuse: neither may be the chosen address,
 * and both must be distinct, writable and not overlap the live block. */
static int two_mallocs(size_t n, const char *live) {
  char *x = malloc(n), *y = malloc(n);
  if (x == NULL || y == NULL) return wrong("malloc failed");
  if ((void *)x == CHOSEN || (void *)y == CHOSEN) return wrong("malloc returned the chosen address");
  if (x == y) return wrong("the same block twice");
  if (live && ((x <= live && live < x + n) || (y <= live && live < y + n)))
    return wrong("a live block handed out");
  memset(x, 1, n);
  memset(y, 2, n);
  return 0;
}

static volatile uint64_t *word(void *p, size_t off) { return (volatile uint64_t *)((char *)p + off); }

static size_t meminfo(const char *key) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  size_t kb = 0, klen = strlen(key);
  if (f == NULL) return 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, klen) == 0) kb = strtoull(line + klen, NULL, 10);
  fclose(f);
  return kb * 1024;
}

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "";
  free(early);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(m, "uaf_link") == 0) {
    char *a = malloc(32), *keep = malloc(32);
    announce(a);
    free(a);
    *word(a, 0) = (uint64_t)(uintptr_t)CHOSEN; /* use after free */
    if (two_mallocs(32, keep)) return 1;
  } else if (strcmp(m, "overflow_next") == 0) {
    char *v[64];
    for (int i = 0; i < 64; i++) v[i] = malloc(32);
    /* Two neighbours: a and the block right after it. */
    char *a = NULL, *b = NULL;
    for (int i = 0; i < 64 && a == NULL; i++)
      for (int j = 0; j < 64; j++)
        if (v[j] == v[i] + 32) { a = v[i]; b = v[j]; }
    if (a == NULL) return wrong("no neighbouring blocks");
    announce(b);
    free(b);
    *word(a, 32) = (uint64_t)(uintptr_t)CHOSEN; /* 8 bytes past a's 32 */
    if (two_mallocs(32, a)) return 1;
  } else if (strcmp(m, "aba") == 0) {
    char *a = malloc(40), *b = malloc(40);
    announce(a);
    free(a);
    free(b);
    free(a);
    if (two_mallocs(40, NULL)) return 1;
    char *x = malloc(40), *y = malloc(40);
    if (x == y) return wrong("the same block twice");
  } else if (strcmp(m, "keyless_double") == 0) {
    char *v[500], *a = malloc(32);
    for (int i = 0; i < 500; i++) v[i] = malloc(32);
    announce(a);
    free(a);
    *word(a, 0) = 0; /* use after free: the free key is gone */
    free(a);
    for (int i = 0; i < 500; i++) free(v[i]);
    if (two_mallocs(32, NULL)) return 1;
    char *x = malloc(32), *y = malloc(32);
    if (x == y) return wrong("the same block twice");
  } else if (strcmp(m, "keyless_double_run") == 0) {
    enum { N = 300, M = 500 };
    static char *v[N], *w[M];
    for (int i = 0; i < N; i++) v[i] = malloc(32);
    for (int i = 0; i < M; i++) w[i] = malloc(32);
    char *a = v[N / 3];
    announce(a);
    free(a);
    *word(a, 0) = 0; /* use after free: the free key is gone */
    for (int i = 0; i < M; i++) free(w[i]); /* a goes back to its slab */
    for (int i = 0; i < N; i++) free(v[i]); /* a again, amid its neighbours */
    if (two_mallocs(32, NULL)) return 1;
    for (int i = 0; i < N; i++) v[i] = malloc(32);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < i; j++)
        if (v[i] == v[j]) return wrong("the same block twice");
  } else if (strcmp(m, "never") == 0) {
    char *a = malloc(32);
    /* 2,000 blocks on, in the same 64 KiB slab: never handed out. */
    char *q = (char *)((uintptr_t)a & ~(uintptr_t)0xffff) + 2000 * 32;
    if (q <= a) q = a + 2000 * 32;
    announce(q);
    free(q);
    if (two_mallocs(32, a)) return 1;
  } else if (strcmp(m, "realloc_freed") == 0) {
    char *a = malloc(48);
    announce(a);
    free(a);
    char *b = realloc(a, 4000);
    (void)b;
    if (two_mallocs(48, NULL)) return 1;
  } else if (strcmp(m, "slab_edge") == 0) {
    enum { N = 3 * 8192 };
    static char *v[N];
    for (int i = 0; i < N; i++) {
      v[i] = malloc(8);
      if (v[i] == NULL) return wrong("malloc failed");
      memset(v[i], 0x11, 8);
    }
    /* A block at the very end of a 64 KiB granule whose next block (the
     * next granule's first) is live too. */
    char *last = NULL;
    for (int i = 0; i < N && last == NULL; i++)
      if (((uintptr_t)v[i] & 0xffff) == 0x10000 - 8)
        for (int j = 0; j < N; j++)
          if (v[j] == v[i] + 8) last = v[i];
    if (last == NULL) return wrong("no slab edge between live blocks found");
    announce(last);
    *word(last, 8) = ~(uint64_t)0; /* 8 bytes past the last block */
    for (int i = 0; i < N; i++) free(v[i]);
    for (int i = 0; i < N; i++) {
      v[i] = malloc(8);
      if (v[i] == NULL) return wrong("malloc failed after the overflow");
      *word(v[i], 0) = (uint64_t)i;
    }
    for (int i = 0; i < N; i++)
      if (*word(v[i], 0) != (uint64_t)i) return wrong("a block was handed out twice");
  } else if (strcmp(m, "junk") == 0) {
    char *v[256];
    for (int i = 0; i < 256; i++) v[i] = malloc(16 + (size_t)i * 8);
    for (int i = 0; i < 256; i += 2) {
      free(v[i]);
      for (size_t o = 0; o + 8 <= 16 + (size_t)i * 8; o += 8)
        *word(v[i], o) = 0xdeadbeefdeadbeefull ^ o; /* junk after free */
    }
    for (int i = 0; i < 256; i += 2)
      if (two_mallocs(16 + (size_t)i * 8, NULL)) return 1;
  } else if (strcmp(m, "huge") == 0) {
    size_t n = meminfo("MemTotal:") + meminfo("SwapTotal:") + ((size_t)1 << 30);
    errno = 0;
    void *p = malloc(n);
    if (p != NULL || errno != ENOMEM) return wrong("malloc(RAM + swap + 1 GiB) did not fail with ENOMEM");
    errno = 0;
    p = calloc(1, (size_t)32 << 40);
    if (p != NULL || errno != ENOMEM) return wrong("calloc(1, 32 TiB) did not fail with ENOMEM");
    errno = 0;
    p = realloc(NULL, n);
    if (p != NULL || errno != ENOMEM) return wrong("realloc(NULL, RAM + swap + 1 GiB) did not fail");
  } else if (strcmp(m, "align") == 0) {
    for (size_t n = 16; n <= 1024; n++)
      for (int k = 0; k < 4; k++) {
        void *p = malloc(n);
        if ((uintptr_t)p % 16 != 0) {
          printf("malloc(%zu) = %p\n", n, p);
          return wrong("a block of 16 bytes or more is not 16-aligned");
        }
      }
  } else if (strcmp(m, "libc_names") == 0) {
    void *a = __libc_malloc(100), *b = __libc_memalign(64, 100), *c = __libc_calloc(10, 10);
    if (a == NULL || b == NULL || c == NULL || (uintptr_t)b % 64) return wrong("__libc_* failed");
    free(a);
    free(b);
    free(c);
    void *d = malloc(100);
    __libc_free(d);
    if (mallopt(M_MMAP_THRESHOLD, 1 << 20) == 0) return wrong("mallopt refused");
    void *e = malloc(1000);
    struct mallinfo mi = mallinfo();
    if (mi.uordblks <= 0 && mi.hblkhd <= 0) return wrong("mallinfo reports nothing in use");
    free(e);
  } else if (strcmp(m, "checked_uaf8") == 0) {
    char *v[8];
    for (int i = 0; i < 8; i++) v[i] = malloc(32);
    announce(v[3] + 8);
    free(v[3]);
    *word(v[3], 8) = 0x5555555555555555ull; /* offset 8: past any key */
    for (int i = 0; i < 8; i++)
      if (i != 3) free(v[i]);
    malloc_trim(0); /* the slab empties, unless others use it */
    for (int i = 0; i < 200; i++) /* and if not, v[3] comes out again */
      if (malloc(32) == NULL) return wrong("malloc failed");
  } else {
    fprintf(stderr, "usage: harden MODE (see harden.c)\n");
    return 2;
  }
  printf("handed out nothing wrong\n");
  return 0;
}
