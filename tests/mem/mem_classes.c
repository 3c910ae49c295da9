/* mem_classes: the block chosen for every request size is big enough,
 * aligned, and wastes no more than the class table promises.
 *
 * For every n in 1..1 MiB, through malloc and malloc_usable_size (run under
 * LD_PRELOAD=libsmpalloc.so; only public names are used):
 *   - usable size u >= n;
 *   - alignment: 16 when n >= 16 (alignof(max_align_t): the x86-64 psABI
 *     and C require it for any object that fits; programs built against
 *     glibc rely on it), else 8 (for n <= 32 KiB on BLOCKS blocks at once,
 *     so blocks at different slab offsets are seen);
 *   - n <= 8: u == 8 (a tiny request costs 8 bytes);
 *     n <= 128: u - n <= 15 (classes in 16-byte steps);
 *     128 < n, u <= 4 KiB: u - n <= 12.5 % of u (--waste-permille changes it);
 *     4 KiB < u <= 32 KiB (classes fitted to the 64 KiB slab): the block's
 *     share of a slab, 64 KiB / (64 KiB / u), is the least a block of a
 *     64-byte multiple >= n could have (the waste of that share may reach
 *     a third, n = 21825: two to a slab, as any 22 KiB block would be),
 *     and over 21824 bytes (two to a slab) u - n < 4 KiB (the classes of
 *     24, 28 and 32 KiB);
 *     n > 32 KiB (a mapping alone, 64 KiB granules): u - n < 64 KiB;
 *   - n <= 32 KiB: every one of the BLOCKS blocks is written to its last
 *     usable byte (a distinct byte each) and read back, so usable sizes that
 *     overlap a neighbour are caught; above 32 KiB the first and last usable
 *     bytes are written for one size in 61.
 * Then aligned_alloc for alignments 8..32 KiB (and 64 KiB, 1 MiB) with sizes
 * around 1, a/2, a, 2a, 3a, 32 KiB, 64 KiB: aligned to a, u >= n, and
 * u - n <= max(a - 1, 15 bytes up to 128, 12.5 % of u, the least share above
 * 4 KiB) for slab blocks, or, for alignments of 128 or more above 4 KiB, u at
 * most the power of two that holds n and a (u - n < 64 KiB for blocks
 * mapped alone).
 *
 *   mem_classes [--expect smpalloc|glibc] [--waste-permille N]
 *
 * Prints the worst waste seen per range and the number of distinct small
 * block sizes; exits 1 on the first few failures.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_PROG "mem_classes"
#include "mem_common.h"

#define SMALL_MAX 32768u
#define LARGE_GRANULE 65536u
#define MAX_N (1u << 20)
#define BLOCKS 4

static unsigned permille = 125;
static unsigned long nfail;

static void failf(size_t n, size_t align, const void *p, size_t u, const char *what) {
  if (++nfail <= 20)
    printf("FAIL: n=%zu align=%zu: %s (block %p, usable %zu)\n", n, align, what, p, u);
}

/* Worst waste (u - n) / u seen, per range. */
struct worst {
  const char *name;
  double ratio;
  size_t n, u;
};
static struct worst w_mid = {"129..32768", 0, 0, 0}, w_large = {"32769..1MiB", 0, 0, 0},
                    w_aligned = {"aligned_alloc (slab)", 0, 0, 0};
static size_t max_tiny_waste, max_large_waste;

static void note(struct worst *w, size_t n, size_t u) {
  double r = (double)(u - n) / (double)u;
  if (r > w->ratio) {
    w->ratio = r;
    w->n = n;
    w->u = u;
  }
}

/* Is the waste of a slab block within the bound?  n > 128.  Up to 4 KiB a
 * share of the block; above, the block's share of its slab the least one
 * for n (its class fitted to the slab). */
static int waste_ok(size_t n, size_t u) {
  if (u > 4096)
    return LARGE_GRANULE / u == LARGE_GRANULE / ((n + 63) & ~(size_t)63) &&
           (n <= LARGE_GRANULE / 3 || u - n < 4096);
  return (u - n) * 1000 <= (size_t)permille * u;
}

static void check_small(size_t n, size_t *distinct, size_t *last_u) {
  unsigned char *p[BLOCKS];
  size_t u[BLOCKS];
  for (unsigned k = 0; k < BLOCKS; k++) {
    p[k] = malloc(n);
    if (p[k] == NULL) {
      failf(n, 0, NULL, 0, "malloc returned NULL");
      return;
    }
    u[k] = malloc_usable_size(p[k]);
    size_t align = n >= 16 ? 16 : 8;
    if (u[k] < n) failf(n, 0, p[k], u[k], "usable size below the request");
    if ((uintptr_t)p[k] % align != 0) failf(n, align, p[k], u[k], "misaligned");
    if (k > 0 && u[k] != u[0]) failf(n, 0, p[k], u[k], "two blocks for the same size differ in size");
  }
  size_t uu = u[0];
  if (uu != *last_u) {
    ++*distinct;
    *last_u = uu;
  }
  if (n <= 8 && uu != 8) failf(n, 0, p[0], uu, "a request of at most 8 bytes does not cost 8");
  if (n <= 128 && uu - n > 15) failf(n, 0, p[0], uu, "more than 15 bytes wasted at or below 128");
  if (n <= 128 && uu - n > max_tiny_waste) max_tiny_waste = uu - n;
  if (n > 128) {
    note(&w_mid, n, uu);
    if (!waste_ok(n, uu)) failf(n, 0, p[0], uu, "wastes more than the bound");
  }
  for (unsigned k = 0; k < BLOCKS; k++) memset(p[k], 0xA0 + (int)k, u[k] >= n ? u[k] : n);
  for (unsigned k = 0; k < BLOCKS; k++) {
    size_t len = u[k] >= n ? u[k] : n;
    for (size_t i = 0; i < len; i++)
      if (p[k][i] != (unsigned char)(0xA0 + k)) {
        failf(n, 0, p[k], u[k], "a byte within the usable size was overwritten (blocks overlap)");
        break;
      }
  }
  for (unsigned k = 0; k < BLOCKS; k++) free(p[k]);
}

static void check_large(size_t n) {
  unsigned char *p = malloc(n);
  if (p == NULL) {
    failf(n, 0, NULL, 0, "malloc returned NULL");
    return;
  }
  size_t u = malloc_usable_size(p);
  size_t align = n >= 16 ? 16 : 8;
  if (u < n) failf(n, 0, p, u, "usable size below the request");
  else if (u - n >= LARGE_GRANULE) failf(n, 0, p, u, "wastes 64 KiB or more (mapped alone)");
  if ((uintptr_t)p % align != 0) failf(n, align, p, u, "misaligned");
  if (u >= n) {
    note(&w_large, n, u);
    if (u - n > max_large_waste) max_large_waste = u - n;
  }
  if (n % 61 == 0 && u >= n) {
    p[0] = 1;
    p[u - 1] = 2;
    if (p[0] != 1 || p[u - 1] != 2) failf(n, 0, p, u, "cannot write the whole usable size");
  }
  free(p);
}

static void check_aligned(size_t a, size_t n) {
  unsigned char *p[BLOCKS];
  for (unsigned k = 0; k < BLOCKS; k++) {
    p[k] = aligned_alloc(a, n);
    if (p[k] == NULL) {
      failf(n, a, NULL, 0, "aligned_alloc returned NULL");
      continue;
    }
    size_t u = malloc_usable_size(p[k]);
    if ((uintptr_t)p[k] % a != 0) failf(n, a, p[k], u, "aligned_alloc: misaligned");
    if (u < n) failf(n, a, p[k], u, "aligned_alloc: usable size below the request");
    else if (u <= SMALL_MAX) {
      note(&w_aligned, n, u);
      size_t pow2 = 1;
      while (pow2 < n || pow2 < a) pow2 *= 2;
      if (u - n > a - 1 && !(n <= 128 && u - n <= 15) && !waste_ok(n, u) && !(a >= 128 && u > 4096 && u <= pow2))
        failf(n, a, p[k], u, "aligned_alloc: wastes more than the bound");
    } else if (u - n >= LARGE_GRANULE) {
      failf(n, a, p[k], u, "aligned_alloc: wastes 64 KiB or more (mapped alone)");
    }
    if (u >= n && n <= 4 * SMALL_MAX) memset(p[k], 0x50 + (int)k, u);
  }
  for (unsigned k = 0; k < BLOCKS; k++) {
    if (p[k] == NULL) continue;
    size_t u = malloc_usable_size(p[k]);
    if (u >= n && n <= 4 * SMALL_MAX)
      for (size_t i = 0; i < u; i++)
        if (p[k][i] != (unsigned char)(0x50 + k)) {
          failf(n, a, p[k], u, "aligned_alloc: blocks overlap");
          break;
        }
    free(p[k]);
  }
}

int main(int argc, char **argv) {
  const char *expect = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) expect = argv[++i];
    else if (strcmp(argv[i], "--waste-permille") == 0 && i + 1 < argc) permille = (unsigned)atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--expect smpalloc|glibc] [--waste-permille N]\n", argv[0]);
      return 2;
    }
  }
  if (expect_allocator(expect) != 0) return 1;
  size_t distinct = 0, last_u = 0;
  for (size_t n = 1; n <= SMALL_MAX; n++) check_small(n, &distinct, &last_u);
  for (size_t n = SMALL_MAX + 1; n <= MAX_N; n++) check_large(n);
  size_t naligned = 0;
  for (size_t a = 8; a <= (1u << 20); a *= 2) {
    if (a > SMALL_MAX && a != 65536 && a != (1u << 20)) continue;
    size_t bases[] = {1, a / 2, a, 2 * a, 3 * a, SMALL_MAX, 2 * SMALL_MAX};
    for (unsigned b = 0; b < sizeof bases / sizeof bases[0]; b++)
      for (long d = -9; d <= 9; d++) {
        long n = (long)bases[b] + d;
        if (n < 1) continue;
        check_aligned(a, (size_t)n);
        naligned++;
      }
  }
  printf("sizes 1..%u checked: %zu distinct block sizes up to %u; waste at most %zu bytes up to 128\n", MAX_N,
         distinct, SMALL_MAX, max_tiny_waste);
  printf("worst waste %s: %.1f%% (n=%zu, block %zu); bound %.1f%%\n", w_mid.name, w_mid.ratio * 100, w_mid.n,
         w_mid.u, permille / 10.0);
  printf("worst waste %s: %.1f%% (n=%zu, block %zu), at most %zu bytes; bound < 64 KiB\n", w_large.name,
         w_large.ratio * 100, w_large.n, w_large.u, max_large_waste);
  printf("aligned_alloc: %zu (alignment, size) pairs; worst waste %.1f%% (n=%zu, block %zu); "
         "bound max(align - 1, %.1f%%)\n",
         naligned, w_aligned.ratio * 100, w_aligned.n, w_aligned.u, permille / 10.0);
  if (nfail) {
    printf("FAIL: %lu checks failed\n", nfail);
    return 1;
  }
  printf("ok: every size and alignment checked\n");
  return 0;
}
