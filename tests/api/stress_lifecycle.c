/* stress_lifecycle.c - allocation across thread and process life-cycle
 * events, run with the libc names (LD_PRELOAD or static link).
 *
 * usage: stress_lifecycle fork|tsd [rounds]
 *   fork: 4 threads allocate and free without pause while the main thread
 *         forks `rounds` times; each child allocates, verifies and frees
 *         small and large blocks (the allocator's locks must be usable in
 *         the child) and exits 0.  Ends when every child exited 0.
 *   tsd:  threads exit while pthread_key destructors of the program free
 *         and allocate memory (and set new values, so the destructors run
 *         again), after the allocator's own thread clean-up may have run;
 *         blocks allocated in a destructor are freed by the main thread.
 * Prints "<mode>: ok" on success; any failure exits non-zero or aborts. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

static int check(const unsigned char *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed + i * 7 + (i >> 8))) return 0;
  return 1;
}

static void *churn(void *arg)
{
  unsigned seed = (unsigned)(uintptr_t)arg;
  void *keep[64] = {0};
  size_t len[64] = {0};
  uint64_t x = seed * 2654435761u + 1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    unsigned i = (unsigned)(x % 64);
    if (keep[i]) {
      if (!check(keep[i], len[i], i)) abort();
      free(keep[i]);
    }
    len[i] = (x >> 8) % 16 == 0 ? 40000 + (x >> 20) % 400000 : 1 + (x >> 20) % 30000;
    keep[i] = malloc(len[i]);
    if (!keep[i]) abort();
    fill(keep[i], len[i], i);
  }
  for (int i = 0; i < 64; i++) free(keep[i]);
  return NULL;
}

/* In the child: every small class and some large blocks, so that any lock
 * another thread held at the fork is needed. */
static int child_work(int round)
{
  enum { N = 300 };
  static void *p[N];
  for (int i = 0; i < N; i++) {
    size_t n = i % 60 == 0 ? (size_t)(1 << 20) + (size_t)i * 4096 : (size_t)(i * 55 % 33000 + 1);
    p[i] = malloc(n);
    if (!p[i]) return 3;
    fill(p[i], n < 4096 ? n : 4096, (unsigned)(i + round));
  }
  for (int i = 0; i < N; i++) {
    size_t n = i % 60 == 0 ? (size_t)(1 << 20) + (size_t)i * 4096 : (size_t)(i * 55 % 33000 + 1);
    if (!check(p[i], n < 4096 ? n : 4096, (unsigned)(i + round))) return 4;
    p[i] = realloc(p[i], n + 5000);
    if (!p[i]) return 5;
  }
  for (int i = N - 1; i >= 0; i--) free(p[i]);
  return 0;
}

static int run_fork(int rounds)
{
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    if (pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)(i + 1)) != 0) return 2;
  int bad = 0;
  for (int r = 0; r < rounds; r++) {
    void *mine = malloc(1000 + (size_t)r);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); bad++; break; }
    if (pid == 0) {
      int rc = child_work(r);
      free(mine); /* a block allocated before the fork */
      _exit(rc);
    }
    free(mine);
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "fork: child %d failed (status 0x%x)\n", r, st);
      bad++;
    }
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  if (bad) return 1;
  printf("fork: ok (%d children)\n", rounds);
  return 0;
}

/* ---- tsd ---------------------------------------------------------------- */

static pthread_key_t key_a, key_b;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static void *outbox[100000];
static size_t nout;

struct tsd_val {
  int again; /* destructor passes left that set a new value */
  size_t n;
  unsigned char data[];
};

static struct tsd_val *new_val(int again, size_t n)
{
  struct tsd_val *v = malloc(sizeof *v + n);
  if (!v) abort();
  v->again = again;
  v->n = n;
  fill(v->data, n, (unsigned)n);
  return v;
}

static void dtor(void *arg, pthread_key_t key)
{
  struct tsd_val *v = arg;
  if (!check(v->data, v->n, (unsigned)v->n)) abort();
  /* Allocate in the destructor: a block that outlives the thread... */
  void *gift = malloc(v->n * 3 + 1);
  if (!gift) abort();
  fill(gift, v->n * 3 + 1, 9);
  pthread_mutex_lock(&out_lock);
  if (nout < sizeof outbox / sizeof outbox[0]) outbox[nout++] = gift;
  else free(gift);
  pthread_mutex_unlock(&out_lock);
  /* ...and a new value, so that destructors run once more. */
  if (v->again > 0) pthread_setspecific(key, new_val(v->again - 1, v->n + 100000));
  free(v);
}
static void dtor_a(void *arg) { dtor(arg, key_a); }
static void dtor_b(void *arg) { dtor(arg, key_b); }

static void *tsd_thread(void *arg)
{
  size_t n = (size_t)(uintptr_t)arg;
  void *tmp[32];
  for (int i = 0; i < 32; i++) tmp[i] = malloc(n + (size_t)i);
  pthread_setspecific(key_a, new_val(2, n));
  pthread_setspecific(key_b, new_val(1, n * 2 + 7));
  for (int i = 0; i < 32; i++) free(tmp[i]);
  return NULL;
}

static int run_tsd(int rounds)
{
  if (pthread_key_create(&key_a, dtor_a) || pthread_key_create(&key_b, dtor_b)) return 2;
  for (int r = 0; r < rounds; r++) {
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
      if (pthread_create(&th[i], NULL, tsd_thread, (void *)(uintptr_t)(r * 8 + i + 1)) != 0) return 2;
    for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  }
  size_t n = nout;
  for (size_t i = 0; i < n; i++) free(outbox[i]);
  /* Each thread: key_a runs 3 times, key_b twice. */
  if (n != (size_t)rounds * 8 * 5) {
    fprintf(stderr, "tsd: %zu destructor blocks, want %d\n", n, rounds * 8 * 5);
    return 1;
  }
  printf("tsd: ok (%zu blocks from destructors)\n", n);
  return 0;
}

int main(int argc, char **argv)
{
  int rounds = argc > 2 ? atoi(argv[2]) : 50;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && !strcmp(argv[1], "fork")) return run_fork(rounds);
  if (argc > 1 && !strcmp(argv[1], "tsd")) return run_tsd(rounds);
  fprintf(stderr, "usage: %s fork|tsd [rounds]\n", argv[0]);
  return 2;
}
