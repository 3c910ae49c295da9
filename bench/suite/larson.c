/*
 * larson: a server that "bleeds" memory between threads (the pattern of
 * Larson and Krishnan's benchmark).
 *
 * There are `threads` work areas of `slots` blocks each, filled at the start
 * by the main thread.  A worker owns one area for `ops` operations: pick a
 * random slot, check and free its block - allocated by the main thread or an
 * earlier worker, mostly one that has since exited - and allocate a new
 * block of random size in [min, max] there.  Then the worker starts its own
 * successor on the same area and exits, so threads are replaced over time
 * while the blocks outlive them; each area sees `generations` workers.
 * At the end the main thread checks and frees what is left.
 */
#include "suite_common.c"

struct slot {
    void *p;
    uint32_t n;
    uint32_t gen;
};

struct area {
    struct slot *s;
    long index;
    long gen;
    uint64_t rng;
};

static long slots = 1000, ops = 20000, generations = 40, lo = 8, hi = 1000, seed = 3;
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static long running;

static uint64_t key_of(long area, long slot, uint32_t gen)
{
    return ((uint64_t)area << 40) ^ ((uint64_t)gen << 20) ^ (uint64_t)slot;
}

static void *worker(void *arg)
{
    struct area *a = arg;
    uint32_t g = (uint32_t)a->gen + 1;
    /* The PRNG state lives in a local while the thread works and goes back
     * to the area for the successor: the areas are one allocation, and two
     * threads writing their states in one cache line on every operation
     * measured that false sharing instead of the allocator (an allocator
     * that aligns a 64-byte block to 64 put both states in one line). */
    uint64_t rng = a->rng;
    for (long i = 0; i < ops; i++) {
        long k = (long)(rnd(&rng) % (uint64_t)slots);
        struct slot *x = &a->s[k];
        tag_check(x->p, x->n, key_of(a->index, k, x->gen), "larson");
        free(x->p);
        x->n = (uint32_t)rnd_range(&rng, (size_t)lo, (size_t)hi);
        x->gen = g;
        x->p = xmalloc(x->n);
        tag_set(x->p, x->n, key_of(a->index, k, g));
    }
    a->rng = rng;
    a->gen++;
    if (a->gen < generations) {
        spawn(worker, a, 256 << 10, 1); /* the successor, detached */
    } else {
        pthread_mutex_lock(&done_mu);
        if (--running == 0)
            pthread_cond_signal(&done_cv);
        pthread_mutex_unlock(&done_mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = -1;
    struct param p[] = {
        { "threads", &threads, "areas = concurrent threads (default: per CPU)" },
        { "slots", &slots, "blocks per area" },
        { "ops", &ops, "free+malloc operations per thread lifetime" },
        { "generations", &generations, "threads per area, one after another" },
        { "min", &lo, "smallest block, bytes" },
        { "max", &hi, "largest block, bytes" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "larson",
               "Server bleeding: blocks outlive the threads that allocated them.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || slots < 1 || generations < 1 || lo < 1 || hi < lo ||
        hi > 0x7fffffff)
        die("bad parameters");

    struct area *a = xmalloc((size_t)threads * sizeof *a);
    for (long i = 0; i < threads; i++) {
        a[i].s = xmalloc((size_t)slots * sizeof *a[i].s);
        a[i].index = i;
        a[i].gen = 0;
        a[i].rng = seed_for((uint64_t)seed, (uint64_t)i);
        for (long k = 0; k < slots; k++) {
            struct slot *x = &a[i].s[k];
            x->n = (uint32_t)rnd_range(&a[i].rng, (size_t)lo, (size_t)hi);
            x->gen = 0;
            x->p = xmalloc(x->n);
            tag_set(x->p, x->n, key_of(i, k, 0));
        }
    }
    double t0 = now_s();
    running = threads;
    for (long i = 0; i < threads; i++)
        spawn(worker, &a[i], 256 << 10, 1);
    pthread_mutex_lock(&done_mu);
    while (running > 0)
        pthread_cond_wait(&done_cv, &done_mu);
    pthread_mutex_unlock(&done_mu);
    double el = now_s() - t0;

    for (long i = 0; i < threads; i++) {
        for (long k = 0; k < slots; k++) {
            struct slot *x = &a[i].s[k];
            tag_check(x->p, x->n, key_of(i, k, x->gen), "larson final");
            free(x->p);
        }
        free(a[i].s);
    }
    free(a);
    if (verbose) {
        double total = (double)threads * (double)generations * (double)ops;
        printf("larson: %ld areas x %ld threads x %ld ops in %.3f s, %.2f Mops/s\n",
               threads, generations, ops, el, total / el / 1e6);
    }
    return 0;
}
