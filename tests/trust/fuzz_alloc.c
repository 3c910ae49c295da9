/* fuzz_alloc.c - libFuzzer harness for the smp_* API, compiled with the
 * allocator sources (never through malloc interposition).
 *
 * An input is a program: each operation reads an opcode byte and a few
 * argument bytes and calls one entry point (smp_malloc, smp_calloc,
 * smp_realloc, smp_reallocarray, smp_aligned_alloc, smp_memalign,
 * smp_posix_memalign, smp_valloc, smp_pvalloc, smp_free, smp_free_sized,
 * smp_free_aligned_sized, smp_alloc, smp_resize, smp_remap, smp_dealloc,
 * smp_usable_size, smp_collect) on one of NSLOT slots.  A shadow model knows
 * every live block: its requested length, alignment, usable size and the
 * seed of the pattern its whole usable area is filled with.  Checked:
 *   - contents survive everything but their own block's release, and realloc,
 *     resize and remap keep the first min(old, new) bytes;
 *   - alignment (the requested one; 8 always; 16 for sizes multiple of 16);
 *   - usable size >= the length, and stable until the block is resized;
 *   - calloc zeroes, malloc(0) is unique and 8 usable bytes;
 *   - a failed resize/remap/realloc leaves the block as it was;
 *   - errno: unchanged by every successful call, ENOMEM for impossible sizes,
 *     EINVAL for bad alignments (posix_memalign returns them instead).
 * Misuse is part of the model too: one operation frees a small block and
 * then writes into it (a use after free: junk, a pointer to another live
 * block, a chosen address): the allocator must go on handing out correct,
 * distinct blocks (every live block keeps its pattern) or abort, never
 * hand out a wrong block.
 * Live bytes are bounded (LIVE_CAP) and every input frees what it allocated,
 * so the process can run millions of inputs.
 *
 * Built two ways (tests/trust/trust.mk):
 *   fuzz_alloc         clang -fsanitize=fuzzer[,undefined]: libFuzzer's main.
 *   fuzz_alloc_replay  -DFUZZ_STANDALONE, any compiler: runs the files (or
 *                      directories of files) named on the command line, or
 *                      with "--random N SEED" N pseudo-random inputs. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smpalloc.h"

#define NSLOT 48
#define LIVE_CAP ((size_t)24 << 20)
#define ERRNO_MARK 0x5eed

enum kind { K_NONE, K_MALLOC, K_ALIGNED, K_SIZED };

typedef struct {
  unsigned char *p;
  size_t len;     /* bytes the caller asked for (content guaranteed) */
  size_t align;   /* alignment asked for (1 when none) */
  size_t usable;  /* smp_usable_size when last checked */
  uint8_t seed;   /* pattern: byte i is pat(seed, i) */
  enum kind kind;
} block_t;

static block_t slot[NSLOT];
static size_t live_bytes;
static unsigned long n_ops, n_fail_expected, n_misuse;

static void die(const char *what, size_t a, size_t b, int line) {
  fprintf(stderr, "fuzz_alloc:%d: %s (%zu, %#zx)\n", line, what, a, b);
  abort();
}
#define CHECK(c, a, b) \
  do { if (!(c)) die(#c, (size_t)(a), (size_t)(b), __LINE__); } while (0)

/* ---- reading the input --------------------------------------------------- */

typedef struct {
  const uint8_t *d;
  size_t n, i;
} input_t;

static unsigned u8(input_t *in) { return in->i < in->n ? in->d[in->i++] : 0; }
static unsigned u16(input_t *in) { return u8(in) | u8(in) << 8; }
static uint32_t u32(input_t *in) { return (uint32_t)u16(in) | (uint32_t)u16(in) << 16; }

/* Sizes: mostly small, some medium, a few large (up to 4 MiB), edges. */
static size_t pick_size(input_t *in) {
  unsigned k = u8(in);
  static const size_t edge[] = {0,     1,     7,     8,     9,      15,     16,     17,
                                127,   128,   129,   255,   256,    257,    1023,   1024,
                                1025,  4095,  4096,  4097,  16383,  16384,  16385,  32767,
                                32768, 32769, 65535, 65536, 65537,  131072, 131073, 1 << 20};
  if (k < 112) return u8(in);                                   /* 0..255 */
  if (k < 176) return u16(in) % 4096;                           /* < 4 KiB */
  if (k < 208) return u16(in) % 40000;                          /* slab classes, their edge */
  if (k < 248) return edge[u8(in) % (sizeof edge / sizeof edge[0])];
  if (k < 254) return 40000 + u32(in) % (1u << 20);             /* large */
  return ((size_t)1 << 20) + u32(in) % (3u << 20);              /* up to 4 MiB */
}

/* Alignments: powers of two 1 .. 4 MiB, sometimes 0 or not a power. */
static size_t pick_align(input_t *in, bool allow_bad) {
  unsigned k = u8(in);
  if (allow_bad && k >= 250) {
    static const size_t bad[] = {3, 24, 48, 100, 4097, ((size_t)1 << 20) + 8};
    return bad[k % 6];
  }
  unsigned sh = k % 23; /* 1 << 0 .. 1 << 22 */
  if (sh > 16 && (k & 0x40)) sh = k % 8;
  return (size_t)1 << sh;
}

/* A size no allocator can serve. */
static size_t huge_size(input_t *in) {
  static const size_t h[] = {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2 + 1, (size_t)1 << 47,
                             ((size_t)1 << 46) + 1, SIZE_MAX - 65535};
  return h[u8(in) % 6];
}

/* ---- patterns ------------------------------------------------------------- */

/* Byte i of a block is byte i % 8 of word_at(seed, i / 8): one multiply per
 * 8 bytes, distinct at every offset (so a shifted copy shows). */
static inline uint64_t word_at(uint8_t seed, size_t w) {
  return ((uint64_t)w + 1) * 0x9e3779b97f4a7c15u ^ (uint64_t)seed * 0x0101010101010101u;
}
static inline uint8_t pat(uint8_t seed, size_t i) {
  return (uint8_t)(word_at(seed, i >> 3) >> ((i & 7) * 8));
}

/* Blocks are 8-aligned, so p + i is word-aligned where i is. */
static void fill(unsigned char *p, uint8_t seed, size_t from, size_t to) {
  size_t i = from;
  for (; i < to && (i & 7); i++) p[i] = pat(seed, i);
  for (; i + 8 <= to; i += 8) {
    uint64_t v = word_at(seed, i >> 3);
    memcpy(p + i, &v, 8);
  }
  for (; i < to; i++) p[i] = pat(seed, i);
}

static void pattern_fail(const unsigned char *p, uint8_t seed, size_t from, size_t to, int line) {
  for (size_t i = from; i < to; i++)
    if (p[i] != pat(seed, i)) die("block contents changed", i, (uintptr_t)p, line);
}

static void expect_pattern(const unsigned char *p, uint8_t seed, size_t from, size_t to, int line) {
  size_t i = from;
  for (; i < to && (i & 7); i++)
    if (p[i] != pat(seed, i)) pattern_fail(p, seed, from, to, line);
  uint64_t acc = 0;
  for (; i + 8 <= to; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    acc |= v ^ word_at(seed, i >> 3);
  }
  if (acc) pattern_fail(p, seed, from, to, line);
  for (; i < to; i++)
    if (p[i] != pat(seed, i)) pattern_fail(p, seed, from, to, line);
}

/* Cheaper check of a big block: its first and last 4 KiB and 64 bytes in
 * every page (at an offset that moves from page to page). */
static void expect_pattern_sampled(const unsigned char *p, uint8_t seed, size_t to, int line) {
  if (to <= 65536) {
    expect_pattern(p, seed, 0, to, line);
    return;
  }
  expect_pattern(p, seed, 0, 4096, line);
  expect_pattern(p, seed, to - 4096, to, line);
  for (size_t pg = 4096; pg + 4096 <= to; pg += 4096) {
    size_t off = pg + ((pg >> 12) * 192u) % 4032u;
    expect_pattern(p, seed, off, off + 64, line);
  }
}

/* fresh: a new block (not one resized or remapped in place), which must be
 * 16-aligned when its size is a multiple of 16. */
static void check_align(const void *p, size_t len, size_t align, bool fresh, int line) {
  uintptr_t a = (uintptr_t)p;
  if (a & 7) die("not 8-aligned", len, a, line);
  if (fresh && len % 16 == 0 && len != 0 && (a & 15))
    die("size multiple of 16, not 16-aligned", len, a, line);
  if (align > 1 && (a & (align - 1))) die("not aligned as asked", align, a, line);
}

/* The whole block as the model knows it (sampled: big blocks in part). */
static void verify_mode(const block_t *b, bool sampled, int line) {
  size_t u = smp_usable_size(b->p);
  if (u != b->usable) die("usable size changed", u, b->usable, line);
  if (sampled) expect_pattern_sampled(b->p, b->seed, b->usable, line);
  else expect_pattern(b->p, b->seed, 0, b->usable, line);
}
static void verify(const block_t *b, int line) { verify_mode(b, false, line); }

static void verify_all(int line) {
  for (unsigned i = 0; i < NSLOT; i++)
    if (slot[i].p) verify_mode(&slot[i], true, line);
}

/* A new block: check it and take it into the model. */
static void adopt(block_t *b, void *p, size_t len, size_t align, enum kind kind, uint8_t seed,
                  size_t keep, bool fresh, int line) {
  b->p = p;
  b->len = len;
  b->align = align ? align : 1;
  b->kind = kind;
  b->seed = seed;
  b->usable = smp_usable_size(p);
  if (b->usable < len) die("usable size below the length", b->usable, len, line);
  if (len == 0 && b->usable < 8) die("malloc(0): usable < 8", b->usable, 0, line);
  /* Blocks alone are checked against everything live (uniqueness). */
  for (unsigned i = 0; i < NSLOT; i++) {
    block_t *o = &slot[i];
    if (o == b || o->p == NULL) continue;
    if ((uintptr_t)p < (uintptr_t)o->p + o->usable && (uintptr_t)o->p < (uintptr_t)p + b->usable)
      die("block overlaps a live block", (uintptr_t)o->p, (uintptr_t)p, line);
  }
  check_align(p, len, b->align, fresh, line);
  fill(b->p, seed, keep, b->usable);
  live_bytes += b->usable;
}

static void drop(block_t *b) {
  live_bytes -= b->usable;
  memset(b, 0, sizeof *b);
}

/* errno must be what the test set it to, after a successful call. */
#define ERRNO_SET() (errno = ERRNO_MARK)
#define ERRNO_KEPT(line) \
  do { if (errno != ERRNO_MARK) die("errno changed by a successful call", (size_t)errno, 0, line); } while (0)
#define ERRNO_IS(e, line) \
  do { if (errno != (e)) die("errno after a failure", (size_t)errno, (size_t)(e), line); } while (0)

/* -DFUZZ_AVOID_ZERO_BIG_ALIGN: never ask for 0 bytes aligned beyond 32 KiB
 * (known bug: large_alloc rounds 0 to 0 and fails with ENOMEM), so that a
 * fuzzing campaign can look past it.  The tests build without it. */
static size_t avoid_known(size_t n, size_t align) {
#ifdef FUZZ_AVOID_ZERO_BIG_ALIGN
  if (n == 0 && align > 32768) return 1;
#else
  (void)align;
#endif
  return n;
}

static void *(*volatile smp_alloc_unattributed)(size_t, size_t) = smp_alloc;

static bool room(size_t n) { return n <= LIVE_CAP && live_bytes + n <= LIVE_CAP; }

/* ---- operations ---------------------------------------------------------- */

static void release(block_t *b, unsigned how) {
  verify(b, __LINE__);
  void *p = b->p;
  ERRNO_SET();
  switch (how % 4) {
    case 0: smp_free(p); break;
    case 1: /* the sized release that matches how the block was made */
      if (b->kind == K_SIZED) smp_dealloc(p, b->len, b->align);
      else if (b->kind == K_ALIGNED) smp_free_aligned_sized(p, b->align, b->len);
      else smp_free_sized(p, b->len);
      break;
    case 2:
      if (b->kind == K_ALIGNED) smp_free_aligned_sized(p, b->align, b->len);
      else if (b->kind == K_SIZED) smp_dealloc(p, b->len, b->align);
      else smp_free(p);
      break;
    default: smp_dealloc(p, b->len, b->align); break;
  }
  ERRNO_KEPT(__LINE__);
  drop(b);
}

static void op_alloc(input_t *in, block_t *b, unsigned op) {
  if (b->p) release(b, u8(in));
  uint8_t seed = (uint8_t)u8(in);
  size_t n = pick_size(in), align = 1;
  bool huge = (u8(in) & 31) == 31;
  if (huge) n = huge_size(in);
  if (!huge && !room(n + 65536)) return;
  void *p = NULL;
  enum kind kind = K_MALLOC;
  bool bad_align = false;
  ERRNO_SET();
  switch (op) {
    case 0: p = smp_malloc(n); break;
    case 1: { /* calloc: count * size == n, or an overflowing product */
      size_t count = 1 + u8(in) % 16, size = n / count;
      if (huge && (u8(in) & 1)) { count = SIZE_MAX / 3; size = 7; }
      else if (!huge) n = count * size;
      else count = 1, size = n;
      p = smp_calloc(count, size);
      if (p) for (size_t i = 0; i < n; i++)
        if (((unsigned char *)p)[i] != 0) die("calloc block not zeroed", i, n, __LINE__);
      break;
    }
    case 2: { /* aligned_alloc / memalign */
      align = pick_align(in, true);
      bad_align = (align & (align - 1)) != 0;
      if (!huge && !room(n + align + 65536)) return;
      n = avoid_known(n, align);
      p = (u8(in) & 1) ? smp_aligned_alloc(align, n) : smp_memalign(align, n);
      kind = K_ALIGNED;
      break;
    }
    case 3: { /* posix_memalign: error number returned, *out untouched */
      align = pick_align(in, true);
      if (u8(in) % 4 == 0 && align < 8) align = 4; /* not a multiple of sizeof(void *) */
      bad_align = (align & (align - 1)) != 0 || align % sizeof(void *) != 0;
      if (!huge && !room(n + align + 65536)) return;
      n = avoid_known(n, align);
      void *out = &slot[0];
      int rc = smp_posix_memalign(&out, align, n);
      ERRNO_KEPT(__LINE__); /* posix_memalign reports through its result */
      if (rc != 0) {
        CHECK(out == &slot[0], rc, (uintptr_t)out);
        CHECK(rc == (bad_align ? EINVAL : ENOMEM), rc, align);
        CHECK(bad_align || huge, n, align);
        n_fail_expected++;
        return;
      }
      CHECK(!bad_align && !huge, n, align);
      p = out;
      kind = K_ALIGNED;
      break;
    }
    case 4: { /* Zig-style: alignment 0 reads as 1 */
      align = pick_align(in, true);
      if (u8(in) % 8 == 0) align = 0;
      bad_align = align != 0 && (align & (align - 1)) != 0;
      if (!huge && !room(n + align + 65536)) return;
      n = avoid_known(n, align);
      /* alignment 0 through a plain pointer: the header declares smp_alloc
       * alloc_align(2), and an "assumed 0-byte alignment" is undefined
       * (clang -fsanitize=alignment stops on it at the call site). */
      p = align == 0 ? smp_alloc_unattributed(n, align) : smp_alloc(n, align);
      kind = K_SIZED;
      break;
    }
    case 5: /* valloc / pvalloc: page aligned; pvalloc rounds up to pages */
      align = 4096;
      if (u8(in) & 1) {
        p = smp_valloc(n);
      } else {
        p = smp_pvalloc(n);
        if (p && !huge) CHECK(smp_usable_size(p) >= ((n + 4095) & ~(size_t)4095), n, smp_usable_size(p));
      }
      break;
    default: { /* reallocarray from NULL */
      size_t count = 1 + u8(in) % 8, size = n / count;
      if (huge) { count = SIZE_MAX / 2; size = 3; }
      else n = count * size;
      p = smp_reallocarray(NULL, count, size);
      break;
    }
  }
  if (p == NULL) {
    CHECK(huge || bad_align, n, align);
    ERRNO_IS(bad_align ? EINVAL : ENOMEM, __LINE__);
    n_fail_expected++;
    return;
  }
  CHECK(!huge && !bad_align, n, align);
  ERRNO_KEPT(__LINE__);
  adopt(b, p, n, align, kind, seed, 0, true, __LINE__);
}

static void op_realloc(input_t *in, block_t *b) {
  uint8_t seed = b->p ? b->seed : (uint8_t)u8(in);
  size_t n = pick_size(in);
  bool huge = (u8(in) & 15) == 15;
  if (huge) n = huge_size(in);
  if (!huge && !room(n + 65536)) return;
  if (b->p) verify(b, __LINE__);
  ERRNO_SET();
  unsigned char *q;
  bool arr = u8(in) & 1;
  if (arr) q = smp_reallocarray(b->p, huge ? SIZE_MAX / 4 : 1, huge ? 5 : n);
  else q = smp_realloc(b->p, n);
  if (b->p != NULL && n == 0 && !huge) { /* realloc(p, 0): freed, NULL */
    CHECK(q == NULL, (uintptr_t)q, 0);
    ERRNO_KEPT(__LINE__);
    drop(b);
    return;
  }
  if (q == NULL) {
    CHECK(huge, n, 0);
    ERRNO_IS(ENOMEM, __LINE__);
    n_fail_expected++;
    if (b->p) verify_mode(b, true, __LINE__); /* untouched */
    return;
  }
  CHECK(!huge, n, 0);
  ERRNO_KEPT(__LINE__);
  size_t keep = 0;
  if (b->p) {
    keep = b->len < n ? b->len : n;
    expect_pattern(q, seed, 0, keep, __LINE__);
    live_bytes -= b->usable;
    b->p = NULL;
  }
  adopt(b, q, n, 1, K_MALLOC, seed, keep, true, __LINE__);
}

/* smp_resize and smp_remap: Zig-style, with the length and alignment the
 * block was allocated (or last resized) with. */
static void op_resize(input_t *in, block_t *b, bool remap) {
  if (!b->p) return;
  verify(b, __LINE__);
  size_t n = pick_size(in);
  if (u8(in) < 64) n = b->len + (u8(in) << 4); /* small steps */
  if (remap && n == 0) n = 1;                  /* new_len must not be 0 */
  if (!room(n + 65536)) return;
  size_t align = b->align, old_usable = b->usable;
  ERRNO_SET();
  if (!remap) {
    bool ok = smp_resize(b->p, b->len, align, n);
    ERRNO_KEPT(__LINE__);
    if (!ok) {
      verify_mode(b, true, __LINE__); /* unchanged */
      return;
    }
    size_t keep = b->len < n ? b->len : n;
    live_bytes -= old_usable;
    size_t u = smp_usable_size(b->p);
    CHECK(u >= n, u, n);
    expect_pattern(b->p, b->seed, 0, keep < u ? keep : u, __LINE__);
    b->usable = u;
    b->len = n;
    fill(b->p, b->seed, keep, u);
    live_bytes += u;
    return;
  }
  unsigned char *q = smp_remap(b->p, b->len, align, n);
  if (q == NULL) {
    verify_mode(b, true, __LINE__);
    return;
  }
  ERRNO_KEPT(__LINE__);
  size_t keep = b->len < n ? b->len : n;
  expect_pattern(q, b->seed, 0, keep, __LINE__);
  live_bytes -= old_usable;
  uint8_t seed = b->seed;
  enum kind kind = b->kind;
  b->p = NULL;
  adopt(b, q, n, align, kind, seed, keep, false, __LINE__);
}

static void run_input(const uint8_t *data, size_t size) {
  input_t in = {data, size, 0};
  while (in.i < in.n) {
    unsigned op = u8(&in);
    block_t *b = &slot[u8(&in) % NSLOT];
    n_ops++;
    switch (op % 20) {
      case 0: case 1: case 2: op_alloc(&in, b, 0); break;
      case 3: op_alloc(&in, b, 1); break;
      case 4: op_alloc(&in, b, 2); break;
      case 5: op_alloc(&in, b, 3); break;
      case 6: op_alloc(&in, b, 4); break;
      case 7: op_alloc(&in, b, (op & 0x20) ? 5 : 6); break;
      case 8: case 9: op_realloc(&in, b); break;
      case 10: op_resize(&in, b, false); break;
      case 11: op_resize(&in, b, true); break;
      case 12: case 13: case 14:
        if (b->p) release(b, u8(&in));
        break;
      case 15:
        if (b->p) verify_mode(b, true, __LINE__);
        ERRNO_SET();
        CHECK(smp_usable_size(NULL) == 0, 0, 0);
        smp_free(NULL);
        smp_free_sized(NULL, 5);
        smp_free_aligned_sized(NULL, 64, 5);
        smp_dealloc(NULL, 0, 1);
        ERRNO_KEPT(__LINE__);
        break;
      case 16:
        if ((op & 0xe0) == 0) {
          ERRNO_SET();
          smp_collect();
          ERRNO_KEPT(__LINE__);
          verify_all(__LINE__);
        }
        break;
      case 18: { /* use after free: corrupt a freed small block, go on */
        if (!b->p || b->usable > 32768) break;
        uint64_t *w = (uint64_t *)b->p;
        size_t words = b->usable / 8 < 8 ? b->usable / 8 : 8;
        block_t *other = &slot[u8(&in) % NSLOT];
        uint64_t v[4] = {u32(&in) | (uint64_t)u32(&in) << 32,
                         other->p ? (uint64_t)(uintptr_t)other->p : 0x4141414141414140u,
                         (uint64_t)(uintptr_t)b->p + 64, 0};
        release(b, u8(&in));
        for (size_t i = 0; i < words; i++) w[i] = v[(i + u8(&in)) % 4];
        n_misuse++;
        break;
      }
      case 17: { /* write into the slack between length and usable size */
        if (!b->p) break;
        size_t u = smp_usable_size(b->p);
        CHECK(u == b->usable, u, b->usable);
        if (u > b->len) fill(b->p, b->seed, b->len, u);
        break;
      }
      default: verify_all(__LINE__); break;
    }
  }
  verify_all(__LINE__);
  for (unsigned i = 0; i < NSLOT; i++)
    if (slot[i].p) release(&slot[i], i);
  CHECK(live_bytes == 0, live_bytes, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run_input(data, size);
  return 0;
}

#ifdef FUZZ_STANDALONE
#include <dirent.h>
#include <sys/stat.h>

static unsigned long n_inputs;

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); return 1; }
  static uint8_t buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  run_input(buf, n);
  n_inputs++;
  return 0;
}

static int run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) { perror(path); return 1; }
  if (!S_ISDIR(st.st_mode)) return run_file(path);
  DIR *d = opendir(path);
  if (!d) { perror(path); return 1; }
  int rc = 0;
  struct dirent *e;
  char name[4096];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(name, sizeof name, "%s/%s", path, e->d_name);
    rc |= run_file(name);
  }
  closedir(d);
  return rc;
}

static uint64_t rng_state;
static uint64_t rng(void) {
  uint64_t x = (rng_state += 0x9e3779b97f4a7c15u);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

int main(int argc, char **argv) {
  int rc = 0;
  if (argc == 4 && strcmp(argv[1], "--random") == 0) {
    unsigned long n = strtoul(argv[2], NULL, 0);
    rng_state = strtoull(argv[3], NULL, 0);
    static uint8_t buf[4096];
    for (unsigned long k = 0; k < n; k++) {
      size_t len = 1 + rng() % sizeof buf;
      for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)rng();
      run_input(buf, len);
      n_inputs++;
    }
  } else {
    for (int i = 1; i < argc; i++) rc |= run_path(argv[i]);
  }
  printf("fuzz_alloc: %lu inputs, %lu operations, %lu expected failures checked, "
         "%lu uses after free survived\n", n_inputs, n_ops, n_fail_expected, n_misuse);
  return rc;
}
#endif
