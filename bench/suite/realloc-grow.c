/*
 * realloc-grow: many arrays grown with realloc, interleaved (the seed's
 * ArrayList pattern at scale).
 *
 * Each of `threads` threads, `rounds` times, grows `arrays` arrays of
 * 8-byte items side by side: it appends a random run of 1..`burst` items
 * to a random array that is not yet full, growing its capacity the way
 * Zig's ArrayList does (cap += cap / 2 + 16) with realloc, until every
 * array holds its target length (random in [1, `maxlen`]).  Then it checks
 * every item of every array and frees them.  Interleaving keeps a block's
 * neighbour busy, so realloc cannot always grow in place.
 */
#include "suite_common.c"

struct arr {
    uint64_t *v;
    size_t len, cap, target;
};

static long rounds = 2, arrays = 256, maxlen = 12000, burst = 64, seed = 9;

static inline uint64_t item(uintptr_t id, long a, size_t i)
{
    return ((uint64_t)id << 48) ^ ((uint64_t)a << 32) ^ (uint64_t)i;
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    struct arr *A = xmalloc((size_t)arrays * sizeof *A);
    long *open = xmalloc((size_t)arrays * sizeof *open); /* not yet full */
    uint64_t reallocs = 0;
    for (long r = 0; r < rounds; r++) {
        for (long a = 0; a < arrays; a++) {
            A[a].v = NULL;
            A[a].len = A[a].cap = 0;
            A[a].target = rnd_range(&rng, 1, (size_t)maxlen);
            open[a] = a;
        }
        long nopen = arrays;
        while (nopen > 0) {
            long oi = (long)(rnd(&rng) % (uint64_t)nopen);
            long a = open[oi];
            struct arr *x = &A[a];
            size_t add = rnd_range(&rng, 1, (size_t)burst);
            if (add > x->target - x->len)
                add = x->target - x->len;
            for (size_t k = 0; k < add; k++) {
                if (x->len == x->cap) {
                    size_t c = x->cap;
                    do
                        c += c / 2 + 16;
                    while (c < x->len + 1);
                    x->v = xrealloc(x->v, c * sizeof *x->v);
                    x->cap = c;
                    reallocs++;
                }
                x->v[x->len] = item(id, a, x->len);
                x->len++;
            }
            if (x->len == x->target)
                open[oi] = open[--nopen];
        }
        for (long a = 0; a < arrays; a++) {
            for (size_t i = 0; i < A[a].len; i++)
                if (A[a].v[i] != item(id, a, i))
                    verify_failed("array %ld item %zu of %zu is %#" PRIx64, a, i,
                                  A[a].len, A[a].v[i]);
            free(A[a].v);
        }
    }
    free(open);
    free(A);
    return (void *)(uintptr_t)reallocs;
}

int main(int argc, char **argv)
{
    long threads = -1;
    struct param p[] = {
        { "threads", &threads, "threads (default: one per CPU)" },
        { "rounds", &rounds, "rounds per thread" },
        { "arrays", &arrays, "arrays grown side by side" },
        { "maxlen", &maxlen, "largest target length, items of 8 bytes" },
        { "burst", &burst, "most items appended to one array at a time" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "realloc-grow",
               "Many arrays grown with realloc, interleaved (ArrayList pattern).",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || arrays < 1 || maxlen < 1 || burst < 1)
        die("bad parameters");
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    double t0 = now_s();
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, (void *)(uintptr_t)i, 0, 0);
    uint64_t reallocs = 0;
    for (long i = 0; i < threads; i++) {
        void *rv;
        if (pthread_join(t[i], &rv))
            die("pthread_join failed");
        reallocs += (uint64_t)(uintptr_t)rv;
    }
    double el = now_s() - t0;
    free(t);
    if (verbose)
        printf("realloc-grow: %ld threads, %" PRIu64 " reallocs in %.3f s, peak rss %ld KiB\n",
               threads, reallocs, el, peak_rss_kib());
    return 0;
}
