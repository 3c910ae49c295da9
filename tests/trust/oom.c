/* oom.c - run under a virtual memory limit (ulimit -v): allocate a
 * deterministic mix of small, medium and large blocks until malloc returns
 * NULL, check the failures (errno ENOMEM, calloc/realloc/posix_memalign/
 * aligned_alloc fail cleanly, a failed realloc leaves its block intact),
 * free everything, then allocate again: the process must allocate normally
 * once the memory is back (one block of 3/4 of the bytes the first round
 * got, a 32 MiB block, and at least 3/4 of the bytes of the first round
 * when filling up again).
 * usage: oom [rounds]   Exit 0 when everything held. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
  struct node *next;
  size_t n;
};

static int fails;
#define EXPECT(c)                                                        \
  do {                                                                   \
    if (!(c)) {                                                          \
      fprintf(stderr, "oom:%d: failed: %s (errno %d)\n", __LINE__, #c, errno); \
      fails++;                                                           \
    }                                                                    \
  } while (0)

static uint64_t rng;
static uint64_t next_rand(void)
{
  rng += 0x9e3779b97f4a7c15ULL;
  uint64_t x = rng;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Mostly small, some medium, a few large (1..24 MiB). */
static size_t size_at(void)
{
  uint64_t r = next_rand();
  unsigned c = (unsigned)(r % 16);
  r >>= 4;
  if (c < 11) return 24 + r % 4072;
  if (c < 15) return 4096 + r % (1 << 20);
  return ((size_t)1 << 20) + r % ((size_t)23 << 20);
}

static size_t size_at_small(void)
{
  return 24 + next_rand() % 2000;
}

/* Allocate until failure, then fill the rest with small blocks until those
 * fail too.  Returns the count allocated. */
static size_t fill(struct node **head, size_t *bytes, size_t *large_fail)
{
  size_t count = 0, consecutive = 0;
  bool small_phase = false;
  *bytes = 0;
  for (;;) {
    size_t n = small_phase ? size_at_small() : size_at();
    errno = 0;
    struct node *b = malloc(n);
    if (!b) {
      EXPECT(errno == ENOMEM);
      if (!small_phase && n > 4096) (*large_fail)++;
      if (small_phase && ++consecutive >= 8) break;
      if (!small_phase && ++consecutive >= 8) {
        small_phase = true;
        consecutive = 0;
      }
      continue;
    }
    consecutive = 0;
    b->n = n;
    b->next = *head;
    *head = b;
    ((char *)b)[n - 1] = 1;
    *bytes += n;
    count++;
  }
  return count;
}

static size_t release(struct node **head)
{
  size_t count = 0;
  while (*head) {
    struct node *b = *head;
    *head = b->next;
    EXPECT(((char *)b)[b->n - 1] == 1);
    free(b);
    count++;
  }
  return count;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 2;
  struct node *head = NULL;
  size_t bytes1 = 0, large_fail = 0;
  printf("oom: start\n");
  fflush(stdout);

  rng = 12345;
  size_t n1 = fill(&head, &bytes1, &large_fail);
  EXPECT(n1 > 100);
  EXPECT(large_fail > 0);
  /* At the limit: every entry point fails cleanly. */
  errno = 0;
  EXPECT(malloc(64 << 20) == NULL && errno == ENOMEM);
  errno = 0;
  EXPECT(calloc(1, 64 << 20) == NULL && errno == ENOMEM);
  errno = 0;
  EXPECT(aligned_alloc(4096, 64 << 20) == NULL && errno == ENOMEM);
  void *out = (void *)&head;
  EXPECT(posix_memalign(&out, 64, 64 << 20) == ENOMEM && out == (void *)&head);
  if (head) {
    size_t keep = head->n;
    errno = 0;
    void *r = realloc(head, 64 << 20);
    EXPECT(r == NULL && errno == ENOMEM);
    if (r) head = r;
    EXPECT(head->n == keep && ((char *)head)[keep - 1] == 1);
  }
  size_t freed = release(&head);
  EXPECT(freed == n1);
  /* Everything is free again: one block of 3/4 of what the first round got
   * must fit (an allocator that keeps freed memory cached has to give it
   * back to the kernel and retry when the kernel says no). */
  {
    size_t want = bytes1 / 4 * 3;
    errno = 0;
    char *big = malloc(want);
    if (!big)
      fprintf(stderr, "oom: malloc(%zu MiB) after freeing all %zu MiB failed, errno %d\n", want >> 20,
              bytes1 >> 20, errno);
    EXPECT(big != NULL);
    if (big) {
      memset(big, 3, 4096);
      memset(big + want - 4096, 3, 4096);
    }
    free(big);
  }

  for (int round = 2; round <= rounds; round++) {
    /* Everything was freed: a big block works again... */
    void *big = malloc(32 << 20);
    EXPECT(big != NULL);
    if (big) memset(big, 2, 32 << 20);
    free(big);
    /* ...and filling up again gets about as far as the first time. */
    size_t bytes2 = 0, lf = 0;
    rng = 12345 + (uint64_t)round;
    size_t n2 = fill(&head, &bytes2, &lf);
    EXPECT(bytes2 >= bytes1 / 4 * 3);
    EXPECT(release(&head) == n2);
    printf("oom: round %d: %zu blocks, %zu MiB again\n", round, n2, bytes2 >> 20);
  }
  printf("oom: round 1: %zu blocks, %zu MiB until ENOMEM (%zu large failures)\n", n1, bytes1 >> 20,
         large_fail);
  if (fails) {
    printf("oom: %d failures\n", fails);
    return 1;
  }
  printf("oom: ok\n");
  return 0;
}
