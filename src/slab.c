/*
 * slab.c - one slab's bitmap: set up, take, give back, retire (slab.h).
 */
#include <string.h>

#include "os.h"
#include "pagemap.h"
#include "slab.h"
#include "track.h"

uint64_t slab_free_key;

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

slab_t *slab_new(unsigned cls, unsigned owner, bool dense) {
  bool zero;
  slab_t *sl = chunk_take(1, dense, &zero);
  if (sl == NULL) return NULL;
  const class_info_t *ci = &class_table[cls];
  uint32_t count = ci->count;
  uint64_t *bits = count <= 64 ? &sl->word
                               : sl->chunk->bitmap[sl - sl->chunk->desc];
  for (uint32_t w = 0; w < count / 64; w++) bits[w] = ~(uint64_t)0;
  if (count % 64) bits[count / 64] = ((uint64_t)1 << (count % 64)) - 1;
  sl->bits = bits;
  sl->zero = zero;
  sl->hint = 0;
  sl->used = 0;
  sl->cls = (uint16_t)cls;
  sl->recip = ci->recip;
  sl->owner = (uint16_t)owner;
  atomic_store_explicit(&sl->high_off, 0, memory_order_relaxed);
  chunk_set_state(sl, SLAB_CUR);
  pagemap_set(chunk_base(sl), pagemap_slab(sl));
  return sl;
}

unsigned slab_take(slab_t *sl, unsigned want, void **out, bool checked) {
  uint32_t size = class_table[sl->cls].size, count = class_table[sl->cls].count;
  uint32_t high = atomic_load_explicit(&sl->high_off, memory_order_relaxed);
  unsigned got = 0, w = sl->hint, nw = (count + 63) / 64;
  uint32_t last = 0;
  uint64_t *bits = sl->bits;
  for (; w < nw && got < want; w++) {
    uint64_t x = bits[w];
    if (x == 0) continue;
    do {
      last = w * 64 + (unsigned)__builtin_ctzll(x);
      x &= x - 1;
      void *p = (void *)(chunk_base(sl) + (uintptr_t)last * size);
      if (checked && last * size < high) slab_verify(p, size);
      out[got] = p;
    } while (++got < want && x != 0);
    bits[w] = x;
    if (x != 0) break;
  }
  sl->hint = (uint16_t)w;
  sl->used += got;
  if (got > 0 && (last + 1) * size > high)
    atomic_store_explicit(&sl->high_off, (last + 1) * size, memory_order_relaxed);
  return got;
}

bool slab_give(slab_t *sl, void *p, uint32_t *low, bool checked) {
  uint32_t idx = (uint32_t)(((uint64_t)((uintptr_t)p - chunk_base(sl)) * sl->recip) >> 32);
  uint64_t bit = (uint64_t)1 << (idx % 64), *w = &sl->bits[idx / 64];
  if (unlikely(*w & bit)) return false;
  *w |= bit;
  if (idx / 64 < *low) *low = idx / 64;
  /* The block holds the free key already (free wrote it): no write into
   * it here, under the lock, but checked mode's fill. */
  if (checked) {
    track_quiet_begin(); /* valgrind: p is freed */
    slab_fill(p, class_table[sl->cls].size);
    track_quiet_end();
  }
  sl->used--;
  return true;
}

void slab_retire(slab_t *sl, bool checked) {
  if (checked) { /* every block that was handed out is free: verify them all */
    uint32_t size = class_table[sl->cls].size;
    uint32_t high = atomic_load_explicit(&sl->high_off, memory_order_relaxed);
    for (uint32_t off = 0; off < high; off += size) slab_verify((void *)(chunk_base(sl) + off), size);
  }
  pagemap_set(chunk_base(sl), 0); /* from now on a free() into it is an invalid pointer */
  chunk_put(sl, 1);
}
