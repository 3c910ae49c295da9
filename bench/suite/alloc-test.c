/*
 * alloc-test: Pareto-distributed sizes with a long-lived working set (the
 * pattern of ITHare's alloc-test).
 *
 * Each of `threads` threads keeps a working set of `slots` blocks.  Sizes
 * follow a Pareto distribution with scale `min` bytes and shape
 * `alpha`/100 (default 1.3: most blocks are a few dozen bytes, a few are
 * tens of KiB), cut off at `max`.  An operation replaces one block of the
 * set: with probability 7/8 one of the `hot` most recently placed slots
 * (short-lived blocks), otherwise any slot (so the rest of the set lives
 * long, and is replaced in a random order).  The block freed is checked;
 * every `touch`-th new block is written in full, the rest only tagged.
 */
#include <math.h>

#include "suite_common.c"

struct slot {
    void *p;
    uint32_t n;
    uint32_t gen;
};

static long slots = 16384, hot = 512, ops = 1500000, lo = 16, hi = 65536,
            alpha = 130, touch = 16, seed = 5;

static size_t pareto(uint64_t *rng)
{
    /* inverse transform: x = min / u^(1/alpha), u in (0, 1] */
    double u = ((double)(rnd(rng) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double x = (double)lo / pow(u, 100.0 / (double)alpha);
    return x >= (double)hi ? (size_t)hi : (size_t)x;
}

static uint64_t key_of(uintptr_t id, long k, uint32_t gen)
{
    return ((uint64_t)id << 52) ^ ((uint64_t)k << 28) ^ gen;
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    struct slot *s = xmalloc((size_t)slots * sizeof *s);
    long *recent = xmalloc((size_t)hot * sizeof *recent); /* ring of slots */
    for (long k = 0; k < slots; k++) {
        s[k].n = (uint32_t)pareto(&rng);
        s[k].gen = 0;
        s[k].p = xmalloc(s[k].n);
        tag_set(s[k].p, s[k].n, key_of(id, k, 0));
    }
    for (long h = 0; h < hot; h++)
        recent[h] = (long)(rnd(&rng) % (uint64_t)slots);
    for (long i = 0; i < ops; i++) {
        uint64_t r = rnd(&rng);
        long k;
        if ((r & 7) != 0)
            k = recent[(r >> 3) % (uint64_t)hot];
        else
            k = (long)((r >> 3) % (uint64_t)slots);
        recent[i % hot] = k;
        struct slot *x = &s[k];
        tag_check(x->p, x->n, key_of(id, k, x->gen), "alloc-test");
        free(x->p);
        x->n = (uint32_t)pareto(&rng);
        x->gen++;
        x->p = xmalloc(x->n);
        if (touch && i % touch == 0)
            memset(x->p, (int)(i & 0xff), x->n);
        tag_set(x->p, x->n, key_of(id, k, x->gen));
    }
    for (long k = 0; k < slots; k++) {
        tag_check(s[k].p, s[k].n, key_of(id, k, s[k].gen), "alloc-test final");
        free(s[k].p);
    }
    free(recent);
    free(s);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = -1;
    struct param p[] = {
        { "threads", &threads, "threads (default: one per CPU)" },
        { "ops", &ops, "replacements per thread" },
        { "slots", &slots, "working-set blocks per thread" },
        { "hot", &hot, "recently placed slots that take 7/8 of replacements" },
        { "min", &lo, "Pareto scale (smallest block), bytes" },
        { "max", &hi, "largest block (cut-off), bytes" },
        { "alpha", &alpha, "Pareto shape x 100" },
        { "touch", &touch, "write every Nth new block in full (0: never)" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "alloc-test",
               "Pareto-distributed sizes, long-lived working set, per thread.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || slots < 1 || hot < 1 || lo < 1 || hi < lo || alpha < 1 ||
        hi > 0x7fffffff)
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
        printf("alloc-test: %ld threads x %ld ops in %.3f s, peak rss %ld KiB\n",
               threads, ops, el, peak_rss_kib());
    return 0;
}
