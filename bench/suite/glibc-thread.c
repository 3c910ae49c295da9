/*
 * glibc-thread: every core churns random sizes between 16 B and 32 KiB (the
 * pattern of glibc's bench-malloc-thread).
 *
 * `threads` threads (default: one per CPU) each own `slots` slots.  An
 * operation picks a random slot, checks and frees the block in it (if any)
 * and puts a new block of a log-uniform random size in [16, 32768] there
 * (so each power-of-two band is as likely as any other: mostly small
 * blocks by count, mostly large ones by bytes).  Every block is tagged when
 * allocated and checked before it is freed.
 */
#include "suite_common.c"

struct slot {
    void *p;
    size_t n;
    uint64_t key;
};

static long slots = 2048, ops = 400000, lo = 16, hi = 32768, seed = 2;

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    struct slot *s = xmalloc((size_t)slots * sizeof *s);
    memset(s, 0, (size_t)slots * sizeof *s);
    for (long i = 0; i < ops; i++) {
        struct slot *x = &s[rnd(&rng) % (uint64_t)slots];
        if (x->p) {
            tag_check(x->p, x->n, x->key, "glibc-thread");
            free(x->p);
        }
        x->n = rnd_logsize(&rng, (size_t)lo, (size_t)hi);
        x->key = ((uint64_t)id << 48) ^ (uint64_t)i;
        x->p = xmalloc(x->n);
        tag_set(x->p, x->n, x->key);
    }
    for (long i = 0; i < slots; i++)
        if (s[i].p) {
            tag_check(s[i].p, s[i].n, s[i].key, "glibc-thread");
            free(s[i].p);
        }
    free(s);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = -1;
    struct param p[] = {
        { "threads", &threads, "threads (default: one per CPU)" },
        { "ops", &ops, "malloc/free operations per thread" },
        { "slots", &slots, "live-block slots per thread" },
        { "min", &lo, "smallest block, bytes" },
        { "max", &hi, "largest block, bytes" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "glibc-thread",
               "Multi-threaded random sizes 16 B - 32 KiB on every core.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || slots < 1 || lo < 1 || hi < lo)
        die("bad parameters");

    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    double t0 = now_s();
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, (void *)(uintptr_t)i, 0, 0);
    for (long i = 0; i < threads; i++)
        join(t[i]);
    double el = now_s() - t0;
    free(t);
    if (verbose)
        printf("glibc-thread: %ld threads x %ld ops in %.3f s, %.1f ns/op per thread\n",
               threads, ops, el, el * 1e9 / (double)ops);
    return 0;
}
