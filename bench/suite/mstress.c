/*
 * mstress: threads exit leaving blocks alive for other threads to free (the
 * pattern of mimalloc-bench's mstress).
 *
 * `rounds` times, `threads` threads run at once.  Each keeps a local set of
 * `local` blocks that it replaces at random (`ops` operations; sizes mostly
 * 24..256 bytes, 1 in 64 up to 8 KiB, 1 in 2048 up to 256 KiB), and trades
 * with a global array of `transfer` slots: now and then it swaps one of its
 * blocks into a random slot (an atomic exchange) and takes back whatever
 * was there - allocated by another thread, often one that has exited - to
 * check and free.  On exit a thread frees half of its local set and puts
 * the rest into transfer slots, freeing what it displaces, so every round
 * leaves live blocks of dead threads behind.  The main thread checks and
 * frees the transfer array at the end.
 */
#include "suite_common.c"

struct blk {           /* header of every block: what the check needs */
    uint32_t n;
    uint32_t pad;
    uint64_t key;
};

static long rounds = 30, local = 500, transfer = 4096, ops = 40000, seed = 6;
static _Atomic(struct blk *) *xfer;
static _Atomic uint64_t *live; /* one bit per block key: set while alive */
static long per_thread;        /* keys per thread: ops + local */
static uint64_t live_words;

static uint64_t key_bit(uint64_t key)
{
    return (key >> 32) * (uint64_t)per_thread + (key & 0xffffffffu);
}

static struct blk *make(uint64_t *rng, uint64_t key)
{
    uint64_t r = rnd(rng);
    size_t n;
    if ((r & 2047) == 0)
        n = rnd_range(rng, 24, 256 << 10);
    else if ((r & 63) == 0)
        n = rnd_range(rng, 24, 8192);
    else
        n = rnd_range(rng, 24, 256);
    struct blk *b = xmalloc(n);
    b->n = (uint32_t)n;
    b->key = key;
    ((unsigned char *)b)[n - 1] = (unsigned char)(mix64(key) & 0xff);
    uint64_t bit = key_bit(key);
    atomic_fetch_or_explicit(&live[bit / 64], 1ULL << (bit % 64), memory_order_relaxed);
    return b;
}

static void drop(struct blk *b)
{
    if (!b)
        return;
    if (b->n < 24 || ((unsigned char *)b)[b->n - 1] != (unsigned char)(mix64(b->key) & 0xff))
        verify_failed("block %p (n %u, key %#" PRIx64 ") was overwritten",
                      (void *)b, b->n, b->key);
    uint64_t bit = key_bit(b->key), m = 1ULL << (bit % 64);
    if (bit / 64 >= live_words ||
        !(atomic_fetch_and_explicit(&live[bit / 64], ~m, memory_order_relaxed) & m))
        verify_failed("block %p (key %#" PRIx64 ") is not live: freed twice or "
                      "handed out twice", (void *)b, b->key);
    free(b);
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    uint64_t kbase = (uint64_t)id << 32;
    uint64_t seq = 0;
    struct blk **set = xmalloc((size_t)local * sizeof *set);
    for (long i = 0; i < local; i++)
        set[i] = make(&rng, kbase + seq++);
    for (long i = 0; i < ops; i++) {
        uint64_t r = rnd(&rng);
        long k = (long)((r >> 8) % (uint64_t)local);
        if ((r & 15) == 0) {
            long x = (long)((r >> 32) % (uint64_t)transfer);
            drop(atomic_exchange(&xfer[x], set[k]));
        } else {
            drop(set[k]);
        }
        set[k] = make(&rng, kbase + seq++);
    }
    for (long i = 0; i < local; i++) {
        if (i % 2 == 0) {
            drop(set[i]);
        } else {
            long x = (long)(rnd(&rng) % (uint64_t)transfer);
            drop(atomic_exchange(&xfer[x], set[i]));
        }
    }
    free(set);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 0;
    struct param p[] = {
        { "threads", &threads, "threads per round (0: 2 per CPU)" },
        { "rounds", &rounds, "rounds of threads, one after another" },
        { "ops", &ops, "replacements per thread" },
        { "local", &local, "blocks a thread keeps locally" },
        { "transfer", &transfer, "global slots blocks are traded through" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "mstress",
               "Threads exit leaving blocks alive for other threads to free.",
               p, sizeof p / sizeof p[0]);
    if (threads == 0)
        threads = 2 * (long)ncpu();
    if (local < 1 || transfer < 1)
        die("bad parameters");
    per_thread = ops + local;
    live_words = ((uint64_t)rounds * (uint64_t)threads * (uint64_t)per_thread + 63) / 64;
    live = xmalloc(live_words * sizeof *live);
    for (uint64_t i = 0; i < live_words; i++)
        atomic_init(&live[i], 0);
    xfer = xmalloc((size_t)transfer * sizeof *xfer);
    for (long i = 0; i < transfer; i++)
        atomic_init(&xfer[i], NULL);
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    double t0 = now_s();
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < threads; i++)
            t[i] = spawn(worker, (void *)(uintptr_t)(r * threads + i), 0, 0);
        for (long i = 0; i < threads; i++)
            join(t[i]);
    }
    double el = now_s() - t0;
    long left = 0;
    for (long i = 0; i < transfer; i++) {
        struct blk *b = atomic_load(&xfer[i]);
        left += b != NULL;
        drop(b);
    }
    for (uint64_t i = 0; i < live_words; i++)
        if (atomic_load(&live[i]))
            verify_failed("a block was lost (live bit %" PRIu64 ")", i * 64);
    free((void *)live);
    free((void *)xfer);
    free(t);
    if (verbose)
        printf("mstress: %ld rounds x %ld threads x %ld ops in %.3f s, %ld blocks left "
               "by dead threads, peak rss %ld KiB\n",
               rounds, threads, ops, el, left, peak_rss_kib());
    return 0;
}
