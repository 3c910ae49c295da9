/*
 * slab.c - one slab's bitmap: set up, take, give back, retire; and how the
 * program writes each class's blocks (slab.h).
 */
#include <string.h>

#include "os.h"
#include "pagemap.h"
#include "slab.h"
#include "track.h"

uint64_t slab_free_key;
unsigned slab_rows = 1;

#define CHECK_BYTE 0xa5

/* Checked mode: the pattern of a free block (beyond the key word). */
static size_t slab_fill_len(uint32_t size) {
  return size < SMP_CHECKED_FILL_MAX ? size : SMP_CHECKED_FILL_MAX;
}
static void slab_fill(void *p, uint32_t size) {
  memset((char *)p + 8, CHECK_BYTE, slab_fill_len(size) - 8);
}
SMP_COLD static void slab_written(const void *p) {
  os_fatal("malloc", "a freed block was written after its free (use after free) at", p);
}
static void slab_verify(const void *p, uint32_t size) {
  const unsigned char *b = p;
  track_quiet_begin();
  if (*(const uint64_t *)p != slab_free_key) slab_written(p);
  for (size_t i = 8; i < slab_fill_len(size); i++)
    if (b[i] != CHECK_BYTE) slab_written(b + i);
  track_quiet_end();
}

/* A slot's first slab of a class takes a clean granule: in a small heap
 * over many slots most classes are light in each slot, their slabs using
 * a page or two, and a dirty granule's other pages (left by the class it
 * served before) stayed resident inside the slab, where no purge reaches
 * them (glibc-thread, 16 threads on 16 slots: 10-16 of a 16-byte slab's
 * pages resident where its blocks used one; peak RSS 27 -> 24 MB, glibc
 * 9; the suite and the seed unchanged).  The dirty granule waits in the
 * pool, where it ages out. */
slab_t *slab_new(unsigned cls, unsigned owner, bool dense, bool first) {
  bool zero;
  slab_t *sl = first && !dense ? chunk_take_clean(&zero) : NULL;
  if (sl == NULL) sl = chunk_take(1, dense, &zero);
  if (sl == NULL) return NULL;
  const class_info_t *ci = &class_table[cls];
  uint32_t count = ci->count;
  uint64_t *bits = &sl->word;
  if (count > 64) {
    unsigned g = (unsigned)(sl - sl->chunk->desc);
    bits = sl->chunk->bitmap[g];
    atomic_fetch_or_explicit(&sl->chunk->bitmapped, (uint64_t)1 << g, memory_order_relaxed);
  }
  for (uint32_t w = 0; w < count / 64; w++) bits[w] = ~(uint64_t)0;
  if (count % 64) bits[count / 64] = ((uint64_t)1 << (count % 64)) - 1;
  sl->bits = bits;
  sl->untouched = zero;
  sl->hint = 0;
  sl->used = 0;
  __atomic_store_n(&sl->cls, (uint16_t)cls, __ATOMIC_RELAXED); /* read racily: slab.c, slab_class_measure */
  sl->bin = slab_bin(cls, owner);
  sl->recip = ci->recip;
  sl->owner = (uint16_t)owner;
  sl->high_off = 0;
  __atomic_store_n(&sl->high_mark, 0, __ATOMIC_RELAXED);
  chunk_set_state(sl, SLAB_CUR);
  pagemap_set(chunk_base(sl), pagemap_slab(sl));
  return sl;
}

unsigned slab_take(slab_t *sl, unsigned want, void **oend, bool checked) {
  const uint32_t size = class_table[sl->cls].size, count = class_table[sl->cls].count;
  const uint32_t high = sl->high_off;
  const uintptr_t base = chunk_base(sl);
  unsigned w = sl->hint, nw = (count + 63) / 64;
  uint64_t *bits = sl->bits;
  void **o = oend, **const ostop = oend - want; /* written downwards */
  for (; w < nw; w++) {
    uint64_t x = bits[w];
    if (x == 0) continue;
    uintptr_t p = base + (uintptr_t)w * 64 * size;
    if (x + (x & -x) == 0) {
      /* The free bits run from the lowest to the top of the word: a fresh
       * slab's case (blocks go out lowest first), so every refill of a
       * growing heap.  An address and a store each, four a round. */
      unsigned first = (unsigned)__builtin_ctzll(x), run = 64 - first;
      if (run > (size_t)(o - ostop)) run = (unsigned)(o - ostop);
      x = first + run == 64 ? 0 : x & ~((((uint64_t)1 << run) - 1) << first);
      p += (uintptr_t)first * size;
      void **rend = o - run;
      for (; o - rend >= 4; o -= 4, p += 4 * (uintptr_t)size) {
        o[-1] = (void *)p;
        o[-2] = (void *)(p + size);
        o[-3] = (void *)(p + 2 * (uintptr_t)size);
        o[-4] = (void *)(p + 3 * (uintptr_t)size);
      }
      for (; o > rend; p += size) *--o = (void *)p;
    } else {
      /* Scattered free blocks (a slab blocks came back to): bit by bit,
       * with no branch on the pattern. */
      do {
        *--o = (void *)(p + (uintptr_t)__builtin_ctzll(x) * size);
        x &= x - 1;
      } while (x != 0 && o > ostop);
    }
    bits[w] = x;
    if (o == ostop) {
      if (x == 0) w++;
      break;
    }
  }
  unsigned got = (unsigned)(oend - o);
  if (checked) /* blocks below the high-water mark were freed: verify their fill */
    for (void **v = oend - 1; v >= o && (uintptr_t)*v - base < high; v--) slab_verify(*v, size);
  sl->hint = (uint16_t)w;
  sl->used += got;
  /* Blocks come out lowest address first: the last, at o[0], is the
   * highest. */
  uint32_t end = got ? (uint32_t)((uintptr_t)o[0] - base) + size : 0;
  if (end > high) {
    sl->high_off = end;
    __atomic_store_n(&sl->high_mark, class_mark(end, sl->recip), __ATOMIC_RELAXED);
  }
  return got;
}

void **slab_give_run(slab_t *sl, uintptr_t base, void **q, void **end, uint32_t idx, int dir) {
  const uint32_t count = class_table[sl->cls].count, b = idx % 64;
  const uintptr_t size = class_table[sl->cls].size, a = base + (uintptr_t)idx * size;
  /* Up to the word's end (or start), and the slab's last block: past it
   * may lie the next granule's first (a class that divides the granule). */
  uint32_t room = dir > 0 ? (64 - b < count - idx ? 64 - b : count - idx) : b + 1;
  void **r = q + 1, **stop = (size_t)(end - q) > room ? q + room : end;
  uintptr_t d = dir > 0 ? size : -size;
  for (uintptr_t next = a + d; r < stop && (uintptr_t)*r == next; r++) next += d;
  unsigned k = (unsigned)(r - q); /* 1 .. 64 */
  uint64_t ones = k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
  uint64_t mask = ones << (dir > 0 ? b : b + 1 - k), *w = &sl->bits[idx / 64];
  if (*w & mask) return q; /* a block freed twice among them */
  *w |= mask;
  return r;
}

void slab_fill_free(const slab_t *sl, void *p) {
  track_quiet_begin(); /* valgrind: p is freed */
  slab_fill(p, class_table[sl->cls].size);
  track_quiet_end();
}

void slab_retire(slab_t *sl, bool checked) {
  if (checked) { /* every block that was handed out is free: verify them all */
    uint32_t size = class_table[sl->cls].size;
    uint32_t high = sl->high_off;
    for (uint32_t off = 0; off < high; off += size) slab_verify((void *)(chunk_base(sl) + off), size);
  }
  pagemap_set(chunk_base(sl), 0); /* from now on a free() into it is an invalid pointer */
  chunk_put(sl, 1, os_now_ms());
}

/* ---- how a class is written ------------------------------------------------ */

/* How the program writes the blocks of a class of SMP_PROBE_FROM bytes
 * and more: not known yet, whole (more than SMP_WHOLE_EIGHTHS of the
 * pages of a full slab of them resident), or in part.  Until it is known
 * to be whole, the class's slabs are sparse: never faulted in ahead, never
 * in huge pages, so a page becomes resident only when the program (or
 * free's key) writes it.  Known from the first full sparse slab of the class, measured (its
 * resident pages) when the next one fills up: by then the program has had
 * the blocks of the first.  (A block written at its start and end only,
 * glibc-thread's, leaves 4-6 of a slab's 16 pages resident in its classes
 * of 10-32 KiB; realloc-grow's arrays 8-15.)  Set once; a hint, read and
 * written relaxed. */
enum { USE_UNKNOWN, USE_WHOLE, USE_PART };
static _Atomic uint8_t class_use[SMP_NCLASS];
/* The full sparse slab of each such class waiting to be measured. */
static _Atomic(slab_t *) class_probe[SMP_NCLASS];

bool slab_class_whole(unsigned cls) {
  return class_table[cls].size < SMP_PROBE_FROM ||
         atomic_load_explicit(&class_use[cls], memory_order_relaxed) == USE_WHOLE;
}

slab_t *slab_class_full(slab_t *sl, unsigned cls) {
  if (atomic_load_explicit(&class_use[cls], memory_order_relaxed) != USE_UNKNOWN) return NULL;
  return atomic_exchange_explicit(&class_probe[cls], sl, memory_order_relaxed);
}

void slab_class_measure(slab_t *sl, unsigned cls) {
  unsigned state = chunk_state(sl);
  if (__atomic_load_n(&sl->cls, __ATOMIC_RELAXED) != cls || (state != SLAB_FULL && state != SLAB_PARTIAL))
    return;
  size_t page = os_page_size(), span = (size_t)class_table[cls].count * class_table[cls].size;
  size_t pages = (span + page - 1) / page, got = os_resident((void *)chunk_base(sl), span);
  if (got == SIZE_MAX) return;
  uint8_t unknown = USE_UNKNOWN;
  atomic_compare_exchange_strong_explicit(&class_use[cls], &unknown, 8 * got > SMP_WHOLE_EIGHTHS * pages ? USE_WHOLE : USE_PART,
                                          memory_order_relaxed, memory_order_relaxed);
}
