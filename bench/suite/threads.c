/*
 * threads: the same total number of small malloc/free operations done by
 * many threads or by few (run as threads=1000 and threads=8), to show
 * whether an allocator spins or slows down when threads outnumber cores.
 *
 * `threads` threads (64 KiB stacks) are all created, then released at once
 * by a barrier; each performs ops/threads operations on its own window of
 * `window` blocks: free the oldest block (checked) and allocate a new one
 * of a random size in [min, max] bytes.  -v prints the wall time and the
 * process CPU time (user + sys, getrusage) per operation; with more threads
 * than cores, CPU time per operation well above the few-threads figure
 * means someone is spinning.
 */
#include "suite_common.c"

static long ops = 10000000, window = 32, lo = 16, hi = 512, seed = 12, threads = 8;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    long mine = ops / threads + (id < (uintptr_t)(ops % threads));
    void *p[256];
    uint32_t n[256];
    uint64_t key[256];
    for (long i = 0; i < window; i++) {
        n[i] = (uint32_t)rnd_range(&rng, (size_t)lo, (size_t)hi);
        key[i] = ((uint64_t)id << 40) + (uint64_t)i;
        p[i] = xmalloc(n[i]);
        tag_set(p[i], n[i], key[i]);
    }
    pthread_barrier_wait(&start);
    for (long i = 0; i < mine; i++) {
        long k = i % window;
        tag_check(p[k], n[k], key[k], "threads");
        free(p[k]);
        n[k] = (uint32_t)rnd_range(&rng, (size_t)lo, (size_t)hi);
        key[k] = ((uint64_t)id << 40) + (uint64_t)(i + window);
        p[k] = xmalloc(n[k]);
        tag_set(p[k], n[k], key[k]);
    }
    for (long i = 0; i < window; i++) {
        tag_check(p[i], n[i], key[i], "threads final");
        free(p[i]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct param p[] = {
        { "threads", &threads, "threads, all running at once" },
        { "ops", &ops, "free+malloc operations in all, split over the threads" },
        { "window", &window, "live blocks per thread (1..256)" },
        { "min", &lo, "smallest block, bytes" },
        { "max", &hi, "largest block, bytes" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "threads",
               "Same total small malloc/free work split over N threads.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || window < 1 || window > 256 || lo < 1 || hi < lo ||
        hi > 0x7fffffff)
        die("bad parameters");
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, (void *)(uintptr_t)i, 64 << 10, 0);
    double c0 = cpu_s();
    double t0 = now_s();
    pthread_barrier_wait(&start);
    for (long i = 0; i < threads; i++)
        join(t[i]);
    double el = now_s() - t0, cpu = cpu_s() - c0;
    free(t);
    pthread_barrier_destroy(&start);
    if (verbose)
        printf("threads: %ld threads, %ld ops: wall %.3f s, cpu %.3f s, %.1f ns cpu/op, "
               "%.1f ns wall/op\n",
               threads, ops, el, cpu, cpu * 1e9 / (double)ops, el * 1e9 / (double)ops);
    return 0;
}
