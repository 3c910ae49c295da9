/* api.c - API conformance suite for the malloc family.
 *
 * Built two ways from this one source:
 *   - plain: calls the libc names (malloc, free, ...).  Run plainly it tests
 *     glibc (the reference); under LD_PRELOAD=build/libsmpalloc.so or linked
 *     with build/libsmpalloc.a it tests smpalloc.  Which allocator serves is
 *     detected by dlsym(RTLD_DEFAULT, "smp_malloc") (or a weak reference for
 *     static links) and the checks follow that allocator's documented
 *     behaviour where smpalloc and glibc 2.36 differ.
 *   - -DAPI_PREFIX: calls the smp_* names and is linked with the library
 *     sources (used for the sanitizer builds); adds the Zig-style interface.
 *
 * Usage: api [--expect=smpalloc|--expect=glibc] [--quick] [--verbose]
 *   --expect  fail unless that allocator serves malloc.
 *   --quick   smaller sizes/repetitions (sanitizer builds).
 *   --verbose CPU time of each section.
 * Exit status 0 if every check passed; a summary line is printed. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "smpalloc.h"

#ifdef API_PREFIX
#define A_malloc smp_malloc
#define A_calloc smp_calloc
#define A_realloc smp_realloc
#define A_reallocarray smp_reallocarray
#define A_free smp_free
#define A_posix_memalign smp_posix_memalign
#define A_aligned_alloc smp_aligned_alloc
#define A_memalign smp_memalign
#define A_valloc smp_valloc
#define A_pvalloc smp_pvalloc
#define A_usable smp_usable_size
#define API_NAME "api(prefixed)"
#else
#define A_malloc malloc
#define A_calloc calloc
#define A_realloc realloc
#define A_reallocarray reallocarray
#define A_free free
#define A_posix_memalign posix_memalign
#define A_aligned_alloc aligned_alloc
#define A_memalign memalign
#define A_valloc valloc
#define A_pvalloc pvalloc
#define A_usable malloc_usable_size
#define API_NAME "api(plain)"
/* Not declared by glibc 2.36; weak so the program links and runs there. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t alignment, size_t size);
#pragma weak free_sized
#pragma weak free_aligned_sized
#pragma weak smp_malloc
#pragma weak smp_usable_size
#endif

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define SENTINEL_ERRNO 4242

static bool is_smp;   /* smpalloc serves the calls under test */
static bool quick;    /* smaller workload (sanitizers) */
static bool verbose;  /* CPU time per section */
static size_t page;
static void (*p_free_sized)(void *, size_t);
static void (*p_free_aligned_sized)(void *, size_t, size_t);

/* Hide values from the optimiser so it can neither fold a call nor drop
 * stores into memory that is freed afterwards. */
static inline size_t opz(size_t n)
{
  __asm__ volatile("" : "+r"(n));
  return n;
}
static inline void *opq(void *p)
{
  __asm__ volatile("" : "+r"(p) : : "memory");
  return p;
}

/* The content pattern: byte i of a block filled with seed is byte i % 8 of
 * the 64-bit word patw(seed, i / 8), so that every offset gets its own
 * value and whole words can be written and compared. */
static inline uint64_t patw(unsigned seed, size_t w)
{
  uint64_t x = ((uint64_t)seed * 0x9e3779b97f4a7c15ULL + w) * 0xbf58476d1ce4e5b9ULL;
  return x ^ (x >> 29) ^ w;
}

static inline unsigned char pat(unsigned seed, size_t i)
{
  return (unsigned char)(patw(seed, i / 8) >> (i % 8 * 8));
}

static void fill(void *p, size_t n, unsigned seed)
{
  unsigned char *c = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = patw(seed, i / 8);
    memcpy(c + i, &w, 8);
  }
  for (; i < n; i++) c[i] = pat(seed, i);
  opq(p);
}

/* Index of the first byte that differs from the pattern, or n. */
static size_t verify(const void *p, size_t n, unsigned seed)
{
  const unsigned char *c = p;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, c + i, 8);
    if (w != patw(seed, i / 8)) break;
  }
  for (; i < n; i++)
    if (c[i] != pat(seed, i)) return i;
  return n;
}

static bool all_zero(const void *p, size_t n)
{
  const unsigned char *c = p;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    uint64_t w[8], acc = 0;
    memcpy(w, c + i, 64);
    for (int k = 0; k < 8; k++) acc |= w[k];
    if (acc) return false;
  }
  for (; i < n; i++)
    if (c[i]) return false;
  return true;
}

static bool aligned_to(const void *p, size_t a)
{
  return ((uintptr_t)p & (a - 1)) == 0;
}

/* The minimum alignment the header promises for a block of n bytes. */
static size_t min_align(size_t n)
{
  return (n % 16 == 0 && n) ? 16 : 8;
}

static size_t next_pow2(size_t n)
{
  size_t a = 1;
  while (a < n) a <<= 1;
  return a;
}

/* ---------------------------------------------------------------------- */

static void test_detect(const char *expect)
{
#ifdef API_PREFIX
  is_smp = true;
  p_free_sized = smp_free_sized;
  p_free_aligned_sized = smp_free_aligned_sized;
#else
  void *sym = dlsym(RTLD_DEFAULT, "smp_malloc");
  is_smp = sym != NULL || smp_malloc != NULL;
  p_free_sized = free_sized;
  if (!p_free_sized) *(void **)&p_free_sized = dlsym(RTLD_DEFAULT, "free_sized");
  p_free_aligned_sized = free_aligned_sized;
  if (!p_free_aligned_sized)
    *(void **)&p_free_aligned_sized = dlsym(RTLD_DEFAULT, "free_aligned_sized");
  if (is_smp) {
    /* Prove malloc itself is served by smpalloc, not only that the library
     * is loaded: the smp_* query must know the block and agree. */
    void *p = malloc(opz(100));
    CHECK(p != NULL);
    size_t (*us)(const void *) = smp_usable_size;
    if (!us) *(void **)&us = dlsym(RTLD_DEFAULT, "smp_usable_size");
    CHECK(us != NULL);
    if (us && p) {
      CHECKF(us(p) == malloc_usable_size(p) && us(p) >= 100,
             "smp_usable_size %zu malloc_usable_size %zu", us(p), malloc_usable_size(p));
    }
    free(p);
    /* Memory allocated inside libc is freed by our free (interposition). */
    char *s = strdup("interposed");
    CHECK(s && us && us(s) >= 11);
    free(s);
    CHECK(p_free_sized != NULL);
    CHECK(p_free_aligned_sized != NULL);
  }
#endif
  printf("%s: allocator under test: %s\n", API_NAME, is_smp ? "smpalloc" : "glibc");
  if (expect) {
    CHECKF(strcmp(expect, is_smp ? "smpalloc" : "glibc") == 0,
           "expected allocator %s", expect);
  }
}

static void test_free_null(void)
{
  A_free(NULL);
  if (p_free_sized) p_free_sized(NULL, 0);
  if (p_free_aligned_sized) p_free_aligned_sized(NULL, 64, 0);
  void *p = A_realloc(NULL, opz(40));
  CHECK(p != NULL);
  if (p) {
    CHECK(A_usable(p) >= 40);
    fill(p, 40, 1);
    CHECK(verify(p, 40, 1) == 40);
  }
  A_free(p);
  CHECK(A_usable(NULL) == 0);
}

static void test_malloc0(void)
{
  enum { N = 64 };
  void *ps[N];
  for (int i = 0; i < N; i++) {
    ps[i] = A_malloc(opz(0));
    CHECK(ps[i] != NULL);
    if (!ps[i]) continue;
    CHECK(aligned_to(ps[i], 8));
    if (is_smp) CHECKF(A_usable(ps[i]) == 8, "usable %zu", A_usable(ps[i]));
    memset(ps[i], 0x5a, A_usable(ps[i]));
    for (int j = 0; j < i; j++) CHECKF(ps[i] != ps[j], "malloc(0) #%d == #%d", i, j);
  }
  for (int i = 0; i < N; i++) A_free(ps[i]);
  /* calloc with a zero count or size. */
  void *a = A_calloc(opz(0), opz(16)), *b = A_calloc(opz(16), opz(0));
  CHECK(a != NULL && b != NULL && a != b);
  A_free(a);
  A_free(b);
}

/* Every size class boundary from 0 to 64 MiB. */
static size_t build_sizes(size_t *out, size_t max)
{
  size_t n = 0;
  const size_t base[] = {0, 1, 7, 8, 9};
  for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) out[n++] = base[i];
  for (int k = 1; ((size_t)1 << k) <= max; k++) {
    size_t s = (size_t)1 << k;
    if (s - 1 > 9) out[n++] = s - 1;
    if (s > 9) out[n++] = s;
    if (s + 1 > 9) out[n++] = s + 1;
  }
  return n;
}

struct blk {
  void *p;
  size_t n, usable;
  unsigned seed;
};

static void check_block(const struct blk *b, const char *what)
{
  size_t u = A_usable(b->p);
  CHECKF(u == b->usable, "%s size %zu: usable changed %zu -> %zu", what, b->n, b->usable, u);
  size_t v = verify(b->p, b->usable, b->seed);
  CHECKF(v == b->usable, "%s size %zu: content lost at byte %zu of %zu", what, b->n, v, b->usable);
}

static bool new_block(struct blk *b, void *p, size_t n, unsigned seed, const char *what)
{
  b->p = p;
  b->n = n;
  b->seed = seed;
  CHECKF(p != NULL, "%s(%zu) failed errno %d", what, n, errno);
  if (!p) return false;
  CHECKF(aligned_to(p, min_align(n)), "%s(%zu) = %p misaligned", what, n, p);
  b->usable = A_usable(p);
  CHECKF(b->usable >= n, "%s(%zu): usable %zu", what, n, b->usable);
  CHECKF(A_usable(p) == b->usable, "%s(%zu): usable unstable", what, n);
  fill(p, b->usable, seed);
  return true;
}

static void test_sizes(void)
{
  size_t sizes[128];
  size_t max = quick ? 16 * MiB : 64 * MiB;
  size_t ns = build_sizes(sizes, max);
  struct blk small[128];
  size_t nsmall = 0;

  /* Sizes up to 1 MiB + 1: all live together, filled to their usable size,
   * verified once everything is allocated. */
  for (size_t i = 0; i < ns; i++) {
    if (sizes[i] > MiB + 1) continue;
    if (new_block(&small[nsmall], A_malloc(opz(sizes[i])), sizes[i], (unsigned)i, "malloc"))
      nsmall++;
  }
  for (size_t i = 0; i < nsmall; i++) check_block(&small[i], "malloc");
  /* calloc of each size, zero over the request. */
  for (size_t i = 0; i < ns; i++) {
    if (sizes[i] > MiB + 1) continue;
    void *p = A_calloc(1, opz(sizes[i]));
    CHECKF(p != NULL, "calloc(1, %zu)", sizes[i]);
    if (!p) continue;
    CHECKF(all_zero(p, sizes[i]), "calloc(1, %zu) not zeroed", sizes[i]);
    CHECK(A_usable(p) >= sizes[i]);
    A_free(p);
  }
  for (size_t i = 0; i < nsmall; i++) check_block(&small[i], "malloc");
  /* Free in an interleaved order. */
  for (size_t i = 0; i < nsmall; i += 2) A_free(small[i].p);
  for (size_t i = 1; i < nsmall; i += 2) A_free(small[i].p);

  /* Big sizes one at a time, with company allocated while it lives. */
  for (size_t i = 0; i < ns; i++) {
    if (sizes[i] <= MiB + 1) continue;
    struct blk big, other[4];
    if (!new_block(&big, A_malloc(opz(sizes[i])), sizes[i], (unsigned)i, "malloc")) continue;
    const size_t osz[4] = {24, 3000, 200 * KiB, 2 * MiB};
    bool ok[4];
    for (int j = 0; j < 4; j++)
      ok[j] = new_block(&other[j], A_malloc(opz(osz[j])), osz[j], 100u + (unsigned)j, "malloc");
    check_block(&big, "malloc");
    for (int j = 0; j < 4; j++)
      if (ok[j]) {
        check_block(&other[j], "malloc");
        A_free(other[j].p);
      }
    check_block(&big, "malloc");
    A_free(big.p);

    if (sizes[i] & (sizes[i] - 1)) continue; /* calloc: the powers of two */
    void *p = A_calloc(opz(sizes[i]), 1);
    CHECKF(p != NULL, "calloc(%zu, 1)", sizes[i]);
    if (p) CHECKF(all_zero(p, sizes[i]), "calloc(%zu, 1) not zeroed", sizes[i]);
    A_free(p);
  }
}

static void test_realloc(void)
{
  const size_t grow_to = quick ? 2 * KiB : 4 * KiB;
  /* Grow one byte at a time, contents kept at every step. */
  unsigned char *p = A_malloc(opz(1));
  CHECK(p != NULL);
  if (!p) return;
  p[0] = pat(7, 0);
  size_t bad = 0;
  for (size_t n = 2; n <= grow_to; n++) {
    unsigned char *q = A_realloc(p, opz(n));
    CHECKF(q != NULL, "realloc to %zu", n);
    if (!q) { A_free(p); return; }
    p = q;
    if (verify(p, n - 1, 7) != n - 1 && bad++ < 5)
      CHECKF(0, "realloc grow to %zu lost contents at %zu", n, verify(p, n - 1, 7));
    CHECK(A_usable(p) >= n);
    p[n - 1] = pat(7, n - 1);
  }
  /* Big jumps up to 8 MiB and back down to 1. */
  const size_t steps[] = {4 * KiB + 1, 16 * KiB, 100 * KiB, 256 * KiB + 3, MiB, 3 * MiB + 5, 8 * MiB,
                          5 * MiB, 2 * MiB, MiB - 1, 300 * KiB, 64 * KiB, 9000, 1000, 100, 17, 8, 1};
  size_t cur = grow_to;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    size_t n = steps[i];
    unsigned char *q = A_realloc(p, opz(n));
    CHECKF(q != NULL, "realloc %zu -> %zu", cur, n);
    if (!q) break;
    p = q;
    size_t keep = cur < n ? cur : n;
    size_t v = verify(p, keep, 7);
    CHECKF(v == keep, "realloc %zu -> %zu lost contents at byte %zu", cur, n, v);
    CHECKF(A_usable(p) >= n, "realloc %zu -> %zu usable %zu", cur, n, A_usable(p));
    CHECK(aligned_to(p, min_align(n)));
    if (n > cur) fill(p, n, 7); /* same pattern, so prefix unchanged */
    cur = n;
  }
  A_free(p);

  /* realloc to a multiple of 16 gives a 16-aligned block, also when it
   * shrinks (or grows) within the old block. */
  int misaligned = 0;
  for (size_t from = 9; from <= 300; from++) {
    for (size_t to = 16; to <= 320; to += 16) {
      void *q[3];
      for (int i = 0; i < 3; i++) q[i] = A_malloc(opz(from));
      for (int i = 0; i < 3; i++) {
        if (!q[i]) continue;
        fill(q[i], from, 5);
        void *r = A_realloc(q[i], opz(to));
        CHECK(r != NULL);
        if (!r) continue;
        q[i] = r;
        size_t keep = from < to ? from : to;
        CHECK(verify(r, keep, 5) == keep);
        if (!aligned_to(r, 16) && misaligned++ < 5)
          CHECKF(0, "realloc(malloc(%zu), %zu) = %p is not 16-aligned", from, to, r);
      }
      for (int i = 0; i < 3; i++) A_free(q[i]);
    }
  }
  CHECKF(misaligned == 0, "%d blocks from realloc to a multiple of 16 not 16-aligned", misaligned);

  /* realloc(p, 0) frees p and returns NULL (glibc behaviour). */
  for (int i = 0; i < 3; i++) {
    size_t sz = i == 0 ? 24 : i == 1 ? 5000 : 2 * MiB;
    void *r = A_malloc(opz(sz));
    CHECK(r != NULL);
    errno = SENTINEL_ERRNO;
    void *z = A_realloc(r, opz(0));
    CHECKF(z == NULL, "realloc(p of %zu, 0) = %p", sz, z);
    A_free(z);
  }

  /* realloc keeps contents of an over-aligned block. */
  void *a = A_memalign(opz(4096), opz(3000));
  CHECK(a != NULL);
  if (a) {
    fill(a, 3000, 9);
    void *b = A_realloc(a, opz(70000));
    CHECK(b != NULL);
    if (b) {
      CHECK(verify(b, 3000, 9) == 3000);
      A_free(b);
    } else {
      A_free(a);
    }
  }

  /* reallocarray, the success path. */
  void *r = A_reallocarray(NULL, opz(10), opz(10));
  CHECK(r != NULL);
  if (r) {
    fill(r, 100, 3);
    void *s = A_reallocarray(r, opz(1000), opz(10));
    CHECK(s != NULL);
    if (s) {
      CHECK(verify(s, 100, 3) == 100);
      CHECK(A_usable(s) >= 10000);
      r = s;
    }
    A_free(r);
  }
}

static void test_calloc_reuse(void)
{
  const size_t sizes[] = {8, 24, 100, 1000, 4096, 20000, 100000, MiB, 8 * MiB};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    int reps = n >= MiB ? 4 : quick ? 20 : 100;
    int dirty = 0;
    for (int r = 0; r < reps; r++) {
      unsigned char *p = A_malloc(opz(n));
      CHECK(p != NULL);
      if (!p) break;
      memset(p, 0xAA, A_usable(p));
      A_free(opq(p));
      size_t d = n % 8 == 0 ? 8 : n % 4 == 0 ? 4 : 1; /* count * d == n */
      unsigned char *q = (r & 1) ? A_calloc(opz(n / d), d) : A_calloc(1, opz(n));
      CHECK(q != NULL);
      if (!q) break;
      if (!all_zero(q, n)) dirty++;
      A_free(q);
    }
    CHECKF(dirty == 0, "calloc(%zu) returned dirty memory %d of %d times", n, dirty, reps);
  }
  /* Many small blocks dirtied and freed, then calloc'ed back. */
  enum { N = 500 };
  static void *ps[N];
  for (int sz = 16; sz <= 512; sz *= 4) {
    for (int i = 0; i < N; i++) {
      ps[i] = A_malloc(opz((size_t)sz));
      if (ps[i]) memset(ps[i], 0xAA, A_usable(ps[i]));
    }
    for (int i = 0; i < N; i++) A_free(opq(ps[i]));
    int dirty = 0;
    for (int i = 0; i < N; i++) {
      ps[i] = A_calloc(1, opz((size_t)sz));
      CHECK(ps[i] != NULL);
      if (ps[i] && !all_zero(ps[i], (size_t)sz)) dirty++;
    }
    CHECKF(dirty == 0, "calloc(%d): %d dirty blocks", sz, dirty);
    for (int i = 0; i < N; i++) A_free(ps[i]);
  }
  /* calloc large, element size not 1. */
  size_t big = quick ? 8 * MiB : 32 * MiB;
  void *p = A_calloc(opz(big / 16), 16);
  CHECK(p != NULL);
  if (p) {
    CHECK(all_zero(p, big));
    CHECK(A_usable(p) >= big);
  }
  A_free(p);
}

enum afn { AF_POSIX, AF_ALIGNED, AF_MEMALIGN, AF_ZIG, AF_N };
static const char *const afn_name[AF_N] = {"posix_memalign", "aligned_alloc", "memalign", "smp_alloc"};

static void *alloc_aligned(enum afn f, size_t a, size_t n)
{
  void *p = NULL;
  switch (f) {
  case AF_POSIX: {
    int rc = A_posix_memalign(&p, opz(a), opz(n));
    CHECKF(rc == 0, "posix_memalign(%zu, %zu) = %d", a, n, rc);
    if (rc) p = NULL;
    break;
  }
  case AF_ALIGNED: p = A_aligned_alloc(opz(a), opz(n)); break;
  case AF_MEMALIGN: p = A_memalign(opz(a), opz(n)); break;
  case AF_ZIG:
#ifdef API_PREFIX
    p = smp_alloc(opz(n), opz(a));
#endif
    break;
  default: break;
  }
  return p;
}

static void free_aligned(enum afn f, void *p, size_t a, size_t n)
{
  if (f == AF_ZIG) {
#ifdef API_PREFIX
    smp_dealloc(p, n, a);
#endif
  } else if (f == AF_ALIGNED && p_free_aligned_sized) {
    p_free_aligned_sized(p, a, n);
  } else {
    A_free(p);
  }
}

static void test_alignment(void)
{
  for (int f = 0; f < AF_N; f++) {
#ifndef API_PREFIX
    if (f == AF_ZIG) continue;
#endif
    for (size_t a = 1; a <= MiB; a <<= 1) {
      if (f == AF_POSIX && a < sizeof(void *)) {
        void *sentinel = (void *)0x1234, *out = sentinel;
        int rc = A_posix_memalign(&out, opz(a), 16);
        CHECKF(rc == EINVAL, "posix_memalign(align %zu) = %d", a, rc);
        CHECK(out == sentinel);
        continue;
      }
      size_t sz[6] = {1, a, a + 1, 3 * a, 100, 5000};
      struct blk b[6];
      bool ok[6];
      for (int i = 0; i < 6; i++) {
        errno = SENTINEL_ERRNO;
        void *p = alloc_aligned((enum afn)f, a, sz[i]);
        CHECKF(errno == SENTINEL_ERRNO, "%s(%zu, %zu) changed errno to %d", afn_name[f], a, sz[i], errno);
        ok[i] = new_block(&b[i], p, sz[i], (unsigned)(a + (size_t)i), afn_name[f]);
        if (ok[i]) CHECKF(aligned_to(p, a), "%s(%zu, %zu) = %p", afn_name[f], a, sz[i], p);
      }
      for (int i = 0; i < 6; i++)
        if (ok[i]) {
          check_block(&b[i], afn_name[f]);
          free_aligned((enum afn)f, b[i].p, a, sz[i]);
        }
    }
  }
}

static void test_valloc(void)
{
  const size_t sz[] = {1, 100, page - 1, page, page + 1, 3 * page + 5, MiB + 1};
  for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
    struct blk b, c;
    void *p = A_valloc(opz(sz[i]));
    if (new_block(&b, p, sz[i], (unsigned)i, "valloc")) {
      CHECKF(aligned_to(p, page), "valloc(%zu) = %p", sz[i], p);
    }
    size_t rounded = (sz[i] + page - 1) / page * page;
    void *q = A_pvalloc(opz(sz[i]));
    if (new_block(&c, q, sz[i], (unsigned)i + 50, "pvalloc")) {
      CHECKF(aligned_to(q, page), "pvalloc(%zu) = %p", sz[i], q);
      CHECKF(c.usable >= rounded, "pvalloc(%zu) usable %zu < %zu", sz[i], c.usable, rounded);
    }
    if (p) check_block(&b, "valloc");
    if (q) check_block(&c, "pvalloc");
    A_free(p);
    A_free(q);
  }
  void *z = A_pvalloc(opz(0));
  CHECK(z != NULL && aligned_to(z, page));
  A_free(z);
  z = A_valloc(opz(0));
  CHECK(z != NULL && aligned_to(z, page));
  A_free(z);
}

#define EXPECT_FAIL(expr, err)                                                       \
  do {                                                                               \
    errno = 0;                                                                       \
    void *r_ = (expr);                                                               \
    int e_ = errno;                                                                  \
    CHECKF(r_ == NULL && e_ == (err), "= %p errno %d (want NULL errno %d)", r_, e_, err); \
    if (r_) A_free(r_);                                                              \
  } while (0)

static void test_bad_inputs(void)
{
  const size_t H = SIZE_MAX / 2;
  /* Sizes that cannot be served. */
  EXPECT_FAIL(A_malloc(opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_malloc(opz(H)), ENOMEM);
  EXPECT_FAIL(A_malloc(opz(H + 1)), ENOMEM);
  EXPECT_FAIL(A_malloc(opz(SIZE_MAX - 7)), ENOMEM);
  EXPECT_FAIL(A_malloc(opz(SIZE_MAX - 4095)), ENOMEM);
  /* calloc overflow of count * size, and too big without overflow. */
  EXPECT_FAIL(A_calloc(opz(H + 1), opz(2)), ENOMEM);
  EXPECT_FAIL(A_calloc(opz(2), opz(H + 1)), ENOMEM);
  EXPECT_FAIL(A_calloc(opz((size_t)1 << 32), opz((size_t)1 << 32)), ENOMEM);
  EXPECT_FAIL(A_calloc(opz(SIZE_MAX), opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_calloc(opz(1), opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_calloc(opz(H / 8), opz(8)), ENOMEM);
  /* reallocarray overflow: NULL/ENOMEM, the old block intact. */
  EXPECT_FAIL(A_reallocarray(NULL, opz(H), opz(3)), ENOMEM);
  const size_t psz[] = {40, 3000, 2 * MiB};
  for (int i = 0; i < 3; i++) {
    struct blk b;
    if (!new_block(&b, A_malloc(opz(psz[i])), psz[i], 60u + (unsigned)i, "malloc")) continue;
    EXPECT_FAIL(A_reallocarray(opq(b.p), opz(H), opz(3)), ENOMEM);
    EXPECT_FAIL(A_reallocarray(opq(b.p), opz((size_t)1 << 33), opz((size_t)1 << 31)), ENOMEM);
    check_block(&b, "reallocarray-failed");
    EXPECT_FAIL(A_realloc(opq(b.p), opz(SIZE_MAX)), ENOMEM);
    check_block(&b, "realloc(SIZE_MAX)-failed");
    EXPECT_FAIL(A_realloc(opq(b.p), opz(H)), ENOMEM);
    EXPECT_FAIL(A_realloc(opq(b.p), opz(SIZE_MAX - 4095)), ENOMEM);
    check_block(&b, "realloc-failed");
    A_free(b.p);
  }
  /* posix_memalign: bad alignments give EINVAL, *out untouched. */
  const size_t bad_pm[] = {0, 1, 2, 3, 4, 12, 24, 48, 4097, 3 * MiB};
  for (size_t i = 0; i < sizeof bad_pm / sizeof bad_pm[0]; i++) {
    void *sentinel = (void *)0x5151, *out = sentinel;
    int rc = A_posix_memalign(&out, opz(bad_pm[i]), opz(64));
    CHECKF(rc == EINVAL, "posix_memalign(align %zu) = %d", bad_pm[i], rc);
    CHECKF(out == sentinel, "posix_memalign(align %zu) wrote *out", bad_pm[i]);
    if (rc == 0 && out != sentinel) A_free(out);
  }
  {
    void *sentinel = (void *)0x5151, *out = sentinel;
    int rc = A_posix_memalign(&out, opz(64), opz(SIZE_MAX));
    CHECKF(rc == ENOMEM, "posix_memalign(64, SIZE_MAX) = %d", rc);
    CHECK(out == sentinel);
    rc = A_posix_memalign(&out, opz(4096), opz(SIZE_MAX - 8192));
    CHECKF(rc == ENOMEM, "posix_memalign(4096, SIZE_MAX-8192) = %d", rc);
    CHECK(out == sentinel);
  }
  /* aligned_alloc/memalign with an alignment that is not a power of two:
   * smpalloc rejects it (0 included) with EINVAL; glibc 2.36 rounds it up. */
  const size_t npow2[] = {0, 3, 12, 24, 48, 100, 4097};
  for (size_t i = 0; i < sizeof npow2 / sizeof npow2[0]; i++) {
    size_t a = npow2[i];
    for (int f = AF_ALIGNED; f <= AF_MEMALIGN; f++) {
      errno = 0;
      void *p = f == AF_ALIGNED ? A_aligned_alloc(opz(a), opz(a * 2)) : A_memalign(opz(a), opz(a * 2));
      int e = errno;
      if (is_smp) {
        CHECKF(p == NULL && e == EINVAL, "%s(%zu) = %p errno %d (want NULL EINVAL)", afn_name[f], a, p, e);
      } else {
        CHECKF(p != NULL && aligned_to(p, next_pow2(a)), "glibc %s(%zu) = %p", afn_name[f], a, p);
      }
      if (p) A_free(p);
    }
  }
  EXPECT_FAIL(A_aligned_alloc(opz(64), opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_aligned_alloc(opz(4096), opz(H)), ENOMEM);
  EXPECT_FAIL(A_memalign(opz(64), opz(SIZE_MAX - 100)), ENOMEM);
  EXPECT_FAIL(A_memalign(opz(MiB), opz(SIZE_MAX - MiB)), ENOMEM);
  EXPECT_FAIL(A_valloc(opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_valloc(opz(SIZE_MAX - page)), ENOMEM);
  EXPECT_FAIL(A_pvalloc(opz(SIZE_MAX)), ENOMEM);
  EXPECT_FAIL(A_pvalloc(opz(SIZE_MAX - 100)), ENOMEM);
#ifdef API_PREFIX
  EXPECT_FAIL(smp_alloc(opz(SIZE_MAX), 8), ENOMEM);
  EXPECT_FAIL(smp_alloc(opz(H), 4096), ENOMEM);
  EXPECT_FAIL(smp_alloc(opz(8), opz(3)), EINVAL);
  EXPECT_FAIL(smp_alloc(opz(100), opz(24)), EINVAL);
#endif
}

#define ERRNO_KEPT(stmt)                                                          \
  do {                                                                            \
    errno = SENTINEL_ERRNO;                                                       \
    stmt;                                                                         \
    int e_ = errno;                                                               \
    CHECKF(e_ == SENTINEL_ERRNO, "errno changed to %d by %s", e_, #stmt);         \
  } while (0)

static void test_errno(void)
{
  const size_t sz[] = {0, 8, 100, 3000, 70000, 300 * KiB, 2 * MiB, 20 * MiB};
  for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
    size_t n = sz[i];
    void *p = NULL, *q = NULL;
    size_t u = 0;
    ERRNO_KEPT(p = A_malloc(opz(n)));
    CHECK(p != NULL);
    ERRNO_KEPT(u = A_usable(p));
    CHECK(u >= n);
    ERRNO_KEPT(q = A_realloc(p, opz(n * 2 + 1)));
    CHECK(q != NULL);
    if (q) p = q;
    ERRNO_KEPT(q = A_realloc(p, opz(n / 2 + 1)));
    CHECK(q != NULL);
    if (q) p = q;
    ERRNO_KEPT(A_free(p));
    ERRNO_KEPT(p = A_calloc(opz(n), 1));
    CHECK(p != NULL);
    ERRNO_KEPT(q = A_reallocarray(p, opz(n + 1), 2));
    CHECK(q != NULL);
    if (q) p = q;
    ERRNO_KEPT(A_free(p));
    int rc = -1;
    ERRNO_KEPT(rc = A_posix_memalign(&p, opz(64), opz(n)));
    CHECK(rc == 0);
    if (rc == 0) ERRNO_KEPT(A_free(p));
    ERRNO_KEPT(p = A_aligned_alloc(opz(4096), opz(n)));
    CHECK(p != NULL);
    if (p_free_aligned_sized) ERRNO_KEPT(p_free_aligned_sized(p, 4096, n));
    else A_free(p);
    ERRNO_KEPT(p = A_memalign(opz(256), opz(n)));
    CHECK(p != NULL);
    ERRNO_KEPT(A_free(p));
    ERRNO_KEPT(p = A_valloc(opz(n)));
    CHECK(p != NULL);
    ERRNO_KEPT(A_free(p));
    ERRNO_KEPT(p = A_pvalloc(opz(n)));
    CHECK(p != NULL);
    ERRNO_KEPT(A_free(p));
    if (p_free_sized) {
      ERRNO_KEPT(p = A_malloc(opz(n)));
      ERRNO_KEPT(p_free_sized(p, n));
    }
    ERRNO_KEPT(p = A_malloc(opz(n + 10)));
    ERRNO_KEPT(p = A_realloc(p, opz(0)));
    CHECK(p == NULL);
#ifdef API_PREFIX
    ERRNO_KEPT(p = smp_alloc(opz(n), 64));
    CHECK(p != NULL);
    bool ok = false;
    size_t len = n;
    ERRNO_KEPT(ok = smp_resize(p, n, 64, n / 2 + 1));
    CHECK(ok);
    if (ok) len = n / 2 + 1;
    ERRNO_KEPT(q = smp_remap(p, len, 64, n + 1));
    if (q) { p = q; len = n + 1; }
    ERRNO_KEPT(smp_dealloc(p, len, 64));
#endif
  }
  ERRNO_KEPT(A_free(NULL));
  if (p_free_sized) ERRNO_KEPT(p_free_sized(NULL, 0));
}

static void test_free_sized(void)
{
  if (!p_free_sized || !p_free_aligned_sized) {
    CHECK(!is_smp);
    printf("%s: free_sized/free_aligned_sized not provided (glibc): skipped\n", API_NAME);
    return;
  }
  const size_t sz[] = {0, 1, 8, 24, 100, 1000, 4096, 70000, MiB, 5 * MiB};
  for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
    size_t n = sz[i];
    void *p = A_malloc(opz(n));
    CHECK(p != NULL);
    p_free_sized(p, n);
    p = A_calloc(opz(n), 3);
    CHECK(p != NULL);
    p_free_sized(p, n * 3);
    p = A_malloc(opz(n));
    void *q = A_realloc(p, opz(n + 100));
    CHECK(q != NULL);
    if (q) p_free_sized(q, n + 100);
    else A_free(p);
    for (size_t a = 8; a <= 64 * KiB; a <<= 3) {
      p = A_aligned_alloc(opz(a), opz(n));
      CHECK(p != NULL && aligned_to(p, a));
      p_free_aligned_sized(p, a, n);
    }
  }
}

#ifdef API_PREFIX
static void test_zig(void)
{
  /* Alignment 0 is read as 1; len 0 gives unique pointers. */
  void *a = smp_alloc(opz(10), opz(0));
  CHECK(a != NULL);
  smp_dealloc(a, 10, 0);
  void *z1 = smp_alloc(opz(0), 8), *z2 = smp_alloc(opz(0), 8);
  CHECK(z1 && z2 && z1 != z2);
  smp_dealloc(z1, 0, 8);
  smp_dealloc(z2, 0, 8);

  /* resize of a small block: growing within the usable size succeeds,
   * far beyond the class fails and leaves the block intact; shrinking
   * always succeeds. */
  const size_t small[] = {1, 10, 24, 100, 1000, 3000};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    size_t n = small[i];
    for (size_t al = 1; al <= 256; al <<= 2) {
      struct blk b;
      if (!new_block(&b, smp_alloc(opz(n), al), n, (unsigned)(n + al), "smp_alloc")) continue;
      CHECK(aligned_to(b.p, al));
      CHECKF(smp_resize(b.p, n, al, b.usable), "resize within usable %zu -> %zu", n, b.usable);
      check_block(&b, "smp_resize-within");
      CHECKF(!smp_resize(b.p, n, al, 4 * MiB), "resize small %zu -> 4 MiB in place", n);
      check_block(&b, "smp_resize-refused");
      size_t h = n / 2 ? n / 2 : 1;
      CHECKF(smp_resize(b.p, n, al, h), "resize shrink %zu -> %zu", n, h);
      /* After the shrink the block still holds the bytes it keeps. */
      CHECK(verify(b.p, h, b.seed) == h);
      void *r = smp_remap(b.p, h, al, 100000);
      CHECKF(r == NULL || r == b.p, "remap small = %p (p %p)", r, b.p);
      if (r) {
        CHECK(smp_usable_size(r) >= 100000);
        CHECK(verify(r, h, b.seed) == h);
        smp_dealloc(r, 100000, al);
      } else {
        CHECK(verify(b.p, h, b.seed) == h);
        void *w = smp_remap(b.p, h, al, n);
        CHECKF(w == NULL || w == b.p, "remap within = %p (p %p)", w, b.p);
        smp_dealloc(b.p, w ? n : h, al);
      }
    }
  }

  /* Large blocks: resize may grow in place; remap keeps contents across a
   * grow from 1 MiB to 64 MiB (16 MiB with --quick). */
  size_t top = quick ? 16 * MiB : 64 * MiB;
  for (size_t al = 8; al <= 64 * KiB; al <<= 13) {
    size_t len = MiB;
    unsigned char *p = smp_alloc(opz(len), al);
    CHECK(p != NULL);
    if (!p) continue;
    fill(p, len, 77);
    if (smp_resize(p, len, al, 2 * MiB)) {
      CHECK(smp_usable_size(p) >= 2 * MiB);
      CHECK(verify(p, len, 77) == len);
      len = 2 * MiB;
      fill(p, len, 77);
    } else {
      CHECK(verify(p, len, 77) == len);
    }
    for (size_t n = 2 * len; n <= top; n *= 2) {
      unsigned char *q = smp_remap(p, len, al, n);
      CHECKF(q != NULL, "smp_remap large %zu -> %zu refused", len, n);
      if (!q) break;
      p = q;
      CHECK(aligned_to(p, al));
      size_t v = verify(p, len, 77);
      CHECKF(v == len, "smp_remap %zu -> %zu lost contents at %zu", len, n, v);
      CHECK(smp_usable_size(p) >= n);
      fill(p, n, 77);
      len = n;
    }
    /* And down again. */
    unsigned char *q = smp_remap(p, len, al, MiB + 5);
    if (q) {
      CHECK(verify(q, MiB + 5, 77) == MiB + 5);
      p = q;
      len = MiB + 5;
    }
    CHECK(smp_resize(p, len, al, MiB));
    CHECK(verify(p, MiB, 77) == MiB);
    smp_dealloc(p, MiB, al);
  }

  /* smp_free and smp_usable_size accept blocks of the sized interface. */
  void *p = smp_alloc(opz(5000), 64);
  CHECK(p && smp_usable_size(p) >= 5000);
  smp_free(p);
}
#endif

int main(int argc, char **argv)
{
  const char *expect = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--expect=", 9) == 0) expect = argv[i] + 9;
    else if (strcmp(argv[i], "--quick") == 0) quick = true;
    else if (strcmp(argv[i], "--verbose") == 0) verbose = true;
    else {
      fprintf(stderr, "usage: %s [--expect=smpalloc|glibc] [--quick] [--verbose]\n", argv[0]);
      return 2;
    }
  }
  page = (size_t)sysconf(_SC_PAGESIZE);
  setvbuf(stdout, NULL, _IOLBF, 0);

#define SECTION(call)                                                            \
  do {                                                                           \
    clock_t c0_ = clock();                                                       \
    call;                                                                        \
    if (verbose)                                                                 \
      printf("  %-22s %7.3f s cpu\n", #call, (double)(clock() - c0_) / CLOCKS_PER_SEC); \
  } while (0)
  SECTION(test_detect(expect));
  SECTION(test_free_null());
  SECTION(test_malloc0());
  SECTION(test_sizes());
  SECTION(test_realloc());
  SECTION(test_calloc_reuse());
  SECTION(test_alignment());
  SECTION(test_valloc());
  SECTION(test_bad_inputs());
  SECTION(test_errno());
  SECTION(test_free_sized());
#ifdef API_PREFIX
  SECTION(test_zig());
#endif
  return check_summary(API_NAME);
}
