/*
 * mleak: many short-lived threads, each of which exits leaving a few blocks
 * alive that a later thread frees (the pattern of mimalloc-bench's mleak:
 * does memory held by exited threads get reused, or does RSS creep?).
 *
 * `rounds` times, `threads` threads run at once.  Each allocates `blocks`
 * blocks (sizes 16..1024 bytes), frees all but every `keep`-th of them in
 * a random order, and exits with the survivors parked in a global ring of
 * `window` rounds; the thread that takes a ring entry `window` rounds later
 * checks and frees what the dead thread left there.  Live data stays
 * bounded (window x threads x blocks/keep blocks), so a peak RSS that grows
 * with `rounds` means the memory of exited threads is not reused.
 */
#include "suite_common.c"

struct left {
    void **p;
    uint32_t *n;
    uint64_t *key;
    long count;
};

static long rounds = 150, blocks = 4000, keep = 16, window = 4, seed = 7;
static long threads;
static struct left *ring; /* window * threads entries */

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg; /* round * threads + i */
    uint64_t rng = seed_for((uint64_t)seed, id);
    struct left *mine = &ring[id % (uintptr_t)(window * threads)];

    /* what the thread `window` rounds ago left in this entry */
    for (long i = 0; i < mine->count; i++) {
        tag_check(mine->p[i], mine->n[i], mine->key[i], "mleak");
        free(mine->p[i]);
    }
    free(mine->p);
    free(mine->n);
    free(mine->key);
    mine->count = 0;

    void **p = xmalloc((size_t)blocks * sizeof *p);
    uint32_t *n = xmalloc((size_t)blocks * sizeof *n);
    for (long i = 0; i < blocks; i++) {
        n[i] = (uint32_t)rnd_logsize(&rng, 16, 1024);
        p[i] = xmalloc(n[i]);
        tag_set(p[i], n[i], ((uint64_t)id << 24) + (uint64_t)i);
    }
    long nk = (blocks + keep - 1) / keep;
    mine->p = xmalloc((size_t)nk * sizeof *mine->p);
    mine->n = xmalloc((size_t)nk * sizeof *mine->n);
    mine->key = xmalloc((size_t)nk * sizeof *mine->key);
    for (long i = 0; i < blocks; i += keep) {
        mine->p[mine->count] = p[i];
        mine->n[mine->count] = n[i];
        mine->key[mine->count] = ((uint64_t)id << 24) + (uint64_t)i;
        mine->count++;
        p[i] = NULL;
    }
    /* free the rest in a random order (a shuffled index list) */
    uint32_t *idx = xmalloc((size_t)blocks * sizeof *idx);
    for (long i = 0; i < blocks; i++)
        idx[i] = (uint32_t)i;
    for (long i = blocks - 1; i > 0; i--) {
        long j = (long)(rnd(&rng) % (uint64_t)(i + 1));
        uint32_t x = idx[i];
        idx[i] = idx[j];
        idx[j] = x;
    }
    for (long k = 0; k < blocks; k++) {
        long i = idx[k];
        if (p[i]) {
            tag_check(p[i], n[i], ((uint64_t)id << 24) + (uint64_t)i, "mleak");
            free(p[i]);
        }
    }
    free(idx);
    free(p);
    free(n);
    return NULL;
}

int main(int argc, char **argv)
{
    threads = -1;
    struct param p[] = {
        { "threads", &threads, "threads per round (default: one per CPU)" },
        { "rounds", &rounds, "rounds of threads, one after another" },
        { "blocks", &blocks, "blocks each thread allocates" },
        { "keep", &keep, "every Nth block outlives its thread" },
        { "window", &window, "rounds a left block stays alive" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "mleak",
               "Short-lived threads leave blocks alive for later threads to free.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || blocks < 1 || keep < 1 || window < 1)
        die("bad parameters");
    ring = xmalloc((size_t)(window * threads) * sizeof *ring);
    memset(ring, 0, (size_t)(window * threads) * sizeof *ring);
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    double t0 = now_s();
    long rss_early = 0;
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < threads; i++)
            t[i] = spawn(worker, (void *)(uintptr_t)(r * threads + i), 256 << 10, 0);
        for (long i = 0; i < threads; i++)
            join(t[i]);
        if (r == window * 2)
            rss_early = rss_kib();
    }
    double el = now_s() - t0;
    long rss_end = rss_kib();
    for (long e = 0; e < window * threads; e++) {
        struct left *l = &ring[e];
        for (long i = 0; i < l->count; i++) {
            tag_check(l->p[i], l->n[i], l->key[i], "mleak final");
            free(l->p[i]);
        }
        free(l->p);
        free(l->n);
        free(l->key);
    }
    free(ring);
    free(t);
    if (verbose)
        printf("mleak: %ld rounds x %ld threads in %.3f s, rss %ld KiB after %ld rounds, "
               "%ld KiB at the end, peak %ld KiB\n",
               rounds, threads, el, rss_early, window * 2 + 1, rss_end, peak_rss_kib());
    return 0;
}
