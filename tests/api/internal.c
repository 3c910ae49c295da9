/*
 * internal.c - exhaustive checks of the allocator's internal
 * arithmetic, compiled together with the core sources (-Isrc):
 *   - class_of(n) and the table class_by8 agree with the class
 *     definition for every n in 0..SMP_SMALL_MAX: the class is the smallest
 *     whose size is >= n;
 *   - the one-multiply block-start test (class_block_index, sizeclass.h) says
 *     "start" exactly for offsets that are whole multiples of the class
 *     size, with the right index, for every class and every offset of a
 *     slab; every class from 16 bytes on is a multiple of 16 (16-aligned
 *     blocks) and its bitmap fits the chunk's room for it.
 *   - class_aligned(n, a) gives a class whose size is a multiple of a.
 *   - with 4 slots, threads run one after another each take over the
 *     exited one's thread cache and its slot (tcache.c: a successor mostly
 *     frees its predecessor's blocks), while two threads alive at once are
 *     spread over different slots.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "chunk.h"
#include "sizeclass.h"
#include "slot.h"
#include "smpalloc.h"
#include "tcache.h"

/* A thread's slot, once it has a cache; waits on *gate (if any) before it
 * returns, so that two threads can be alive at once. */
typedef struct {
  unsigned slot;
  pthread_barrier_t *gate;
} slot_probe_t;

static void *probe_slot(void *arg) {
  slot_probe_t *sp = arg;
  smp_free(smp_malloc(32)); /* the thread gets its cache */
  sp->slot = tcache_self->slot;
  if (sp->gate) pthread_barrier_wait(sp->gate);
  return NULL;
}

static void probe(slot_probe_t *sp, unsigned n) {
  pthread_t t[2];
  for (unsigned i = 0; i < n; i++) pthread_create(&t[i], NULL, probe_slot, &sp[i]);
  for (unsigned i = 0; i < n; i++) pthread_join(t[i], NULL);
}

static unsigned long failures;
#define CHECK(c, ...) \
  do { if (!(c) && failures++ < 20) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

int main(void) {
  unsigned long checks = 0;
  for (size_t n = 0; n <= SMP_SMALL_MAX; n++) {
    unsigned c = class_of(n);
    checks++;
    CHECK(c < SMP_NCLASS, "class_of(%zu) = %u out of range", n, c);
    if (c >= SMP_NCLASS) continue;
    CHECK(class_table[c].size >= n, "class_of(%zu): size %u too small", n, class_table[c].size);
    CHECK(c == 0 || class_table[c - 1].size < (n ? n : 1), "class_of(%zu) = %u not the smallest", n, c);
    if (n <= 1024) CHECK(class_by8[(n + 7) >> 3] == c, "by8 table disagrees at %zu", n);
  }
  for (unsigned c = 0; c < SMP_NCLASS; c++) {
    const class_info_t *ci = &class_table[c];
    uint32_t all = SMP_SLAB_SIZE / ci->size;
    CHECK(ci->count == all && ci->last == (all - 1) * ci->size, "blocks of class %u", c);
    CHECK(ci->size == 8 || ci->size % 16 == 0, "class %u (size %u) is not 16-aligned", c, ci->size);
    CHECK((all + 63) / 64 <= SMP_BITMAP_WORDS, "bitmap room of class %u", c);
    for (uint32_t off = 0; off < SMP_SLAB_SIZE; off++) {
      uint32_t idx;
      bool want = off % ci->size == 0;
      bool got = class_block_index(off, ci, &idx);
      checks++;
      CHECK(want == got, "class %u (size %u): offset %u start=%d, test says %d", c, ci->size, off,
            want, got);
      CHECK(!want || idx == off / ci->size, "class %u: index of offset %u", c, off);
    }
  }
  for (size_t a = 16; a <= SMP_SMALL_MAX; a *= 2)
    for (size_t n = 0; n <= SMP_SMALL_MAX; n += 7) {
      unsigned c = class_aligned(n, a);
      checks++;
      CHECK(c < SMP_NCLASS && class_table[c].size % a == 0 && class_table[c].size >= n,
            "class_aligned(%zu, %zu) = %u", n, a, c);
    }
  slot_set_count(4);
  slot_probe_t seq[5] = {{0, NULL}};
  for (unsigned i = 0; i < 5; i++) probe(&seq[i], 1);
  for (unsigned i = 1; i < 5; i++, checks++)
    CHECK(seq[i].slot == seq[0].slot, "thread %u after an exited one: slot %u, the exited one's %u", i,
          seq[i].slot, seq[0].slot);
  pthread_barrier_t gate;
  pthread_barrier_init(&gate, NULL, 2);
  slot_probe_t both[2] = {{0, &gate}, {0, &gate}};
  probe(both, 2);
  checks++;
  CHECK(both[0].slot != both[1].slot, "two threads alive at once share slot %u", both[0].slot);
  printf("internal: %lu checks, %lu failed\n", checks, failures);
  return failures != 0;
}
