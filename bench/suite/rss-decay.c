/*
 * rss-decay: allocate everything, free everything, then watch RSS (for the
 * memory issue: how far, and how soon, does RSS fall after a program frees
 * all it had?).  This one sleeps: it is a measurement, not a speed test.
 *
 * `threads` threads (default: one per CPU) each allocate their share of
 * `mib` MiB in blocks of log-uniform sizes in [min, max] bytes, with every
 * 64th block a large one of 64..512 KiB, write each block in full, then
 * check and free all of them (in a random order) and stay alive, idle,
 * while the main thread samples RSS from /proc/self/statm 0, 10, 100 and
 * `wait` ms after the last free.  -v prints the samples, as KiB and as a
 * percentage of the RSS just before the frees.
 */
#include "suite_common.c"

static long mib = 96, lo = 16, hi = 4096, wait_ms = 1000, seed = 11;
static long threads = -1;
static pthread_barrier_t phase;

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    size_t budget = ((size_t)mib << 20) / (size_t)threads, used = 0;
    size_t cap = 1024, cnt = 0;
    void **p = xmalloc(cap * sizeof *p);
    uint32_t *n = xmalloc(cap * sizeof *n);
    while (used < budget) {
        if (cnt == cap) {
            cap *= 2;
            p = xrealloc(p, cap * sizeof *p);
            n = xrealloc(n, cap * sizeof *n);
        }
        size_t sz = (cnt & 63) == 63 ? rnd_range(&rng, 64 << 10, 512 << 10)
                                     : rnd_logsize(&rng, (size_t)lo, (size_t)hi);
        p[cnt] = xmalloc(sz);
        n[cnt] = (uint32_t)sz;
        memset(p[cnt], (int)(cnt & 0xff), sz);
        tag_set(p[cnt], sz, ((uint64_t)id << 40) + cnt);
        used += sz;
        cnt++;
    }
    pthread_barrier_wait(&phase); /* everything allocated */
    pthread_barrier_wait(&phase); /* main has sampled the peak */
    uint32_t *idx = xmalloc(cnt * sizeof *idx);
    for (size_t i = 0; i < cnt; i++)
        idx[i] = (uint32_t)i;
    for (size_t i = cnt - 1; i > 0; i--) {
        size_t j = (size_t)(rnd(&rng) % (uint64_t)(i + 1));
        uint32_t x = idx[i];
        idx[i] = idx[j];
        idx[j] = x;
    }
    for (size_t k = 0; k < cnt; k++) {
        size_t i = idx[k];
        tag_check(p[i], n[i], ((uint64_t)id << 40) + i, "rss-decay");
        free(p[i]);
    }
    free(idx);
    free(p);
    free(n);
    pthread_barrier_wait(&phase); /* everything freed */
    pthread_barrier_wait(&phase); /* main has sampled: exit */
    return NULL;
}

int main(int argc, char **argv)
{
    struct param p[] = {
        { "threads", &threads, "threads (default: one per CPU)" },
        { "mib", &mib, "MiB allocated in all, then freed" },
        { "min", &lo, "smallest small block, bytes" },
        { "max", &hi, "largest small block, bytes" },
        { "wait", &wait_ms, "last sample, ms after the frees (0, 10, 100 come first)" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "rss-decay",
               "Allocate all, free all, sample RSS at 0/10/100/wait ms after.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || mib < 1 || lo < 16 || hi < lo)
        die("bad parameters");
    pthread_barrier_init(&phase, NULL, (unsigned)threads + 1);
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    long base = rss_kib();
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, (void *)(uintptr_t)i, 0, 0);
    pthread_barrier_wait(&phase);
    long peak = rss_kib();
    pthread_barrier_wait(&phase);
    pthread_barrier_wait(&phase);
    double tf = now_s();
    long at[4];
    long when[4] = { 0, 10, 100, wait_ms };
    for (int k = 0; k < 4; k++) {
        double target = tf + (double)when[k] * 1e-3, d = target - now_s();
        if (d > 0)
            sleep_ms((long)(d * 1e3 + 0.5));
        at[k] = rss_kib();
    }
    pthread_barrier_wait(&phase);
    for (long i = 0; i < threads; i++)
        join(t[i]);
    long after_exit = rss_kib();
    free(t);
    pthread_barrier_destroy(&phase);
    if (verbose) {
        printf("rss-decay: %ld MiB in %ld threads; rss KiB: before %ld, full %ld, after free: ",
               mib, threads, base, peak);
        for (int k = 0; k < 4; k++)
            printf("%ldms %ld (%.0f%%)%s", when[k], at[k],
                   100.0 * (double)at[k] / (double)peak, k < 3 ? ", " : "");
        printf("; threads exited %ld (%.0f%%)\n", after_exit,
               100.0 * (double)after_exit / (double)peak);
    }
    return 0;
}
