/*
 * malloc-large: large blocks of 5-25 MiB, `alive` of them alive at once
 * (the pattern of mimalloc-bench's malloc-large).
 *
 * The main thread fills `alive` slots, then `ops` times replaces a random
 * slot: check and free its block, allocate a new one of a random size in
 * [min, max] MiB (any byte count, not page multiples) and write one byte
 * in every `stride` bytes of it (default 64 KiB: one page in 16, so part
 * of every block is really used, without the run being all page faults -
 * a first-touch fault costs about 18 us on the 2-core CI machine, where
 * touching every page of a 15 MiB block would take 70 ms) plus its tag at
 * both ends; those bytes are checked before the block is freed.
 */
#include "suite_common.c"

struct slot {
    unsigned char *p;
    size_t n;
    uint64_t key;
};

int main(int argc, char **argv)
{
    long alive = 20, ops = 40, lo_mib = 5, hi_mib = 25, stride = 65536, seed = 8;
    struct param p[] = {
        { "alive", &alive, "blocks alive at once" },
        { "ops", &ops, "free+malloc replacements" },
        { "min", &lo_mib, "smallest block, MiB" },
        { "max", &hi_mib, "largest block, MiB" },
        { "stride", &stride, "write one byte every N bytes (0: only the tags)" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "malloc-large",
               "Large blocks of 5-25 MiB, 20 alive at once.",
               p, sizeof p / sizeof p[0]);
    if (alive < 1 || lo_mib < 1 || hi_mib < lo_mib)
        die("bad parameters");

    uint64_t rng = seed_for((uint64_t)seed, 0);
    struct slot *s = xmalloc((size_t)alive * sizeof *s);
    uint64_t seq = 0;
    size_t lo = (size_t)lo_mib << 20, hi = (size_t)hi_mib << 20;
    double t0 = now_s();
    for (long i = 0; i < alive + ops; i++) {
        struct slot *x = &s[i < alive ? i : (long)(rnd(&rng) % (uint64_t)alive)];
        if (i >= alive) {
            for (size_t o = 0; stride && o + 9 < x->n - 1; o += (size_t)stride)
                if (x->p[o + 9] != (unsigned char)(o / (size_t)stride + x->key))
                    verify_failed("block %p byte %zu changed", (void *)x->p, o + 9);
            tag_check(x->p, x->n, x->key, "malloc-large");
            free(x->p);
        }
        x->n = rnd_range(&rng, lo, hi);
        x->key = seq++;
        x->p = xmalloc(x->n);
        for (size_t o = 0; stride && o + 9 < x->n - 1; o += (size_t)stride)
            x->p[o + 9] = (unsigned char)(o / (size_t)stride + x->key);
        tag_set(x->p, x->n, x->key);
    }
    double el = now_s() - t0;
    for (long i = 0; i < alive; i++) {
        tag_check(s[i].p, s[i].n, s[i].key, "malloc-large final");
        free(s[i].p);
    }
    free(s);
    if (verbose)
        printf("malloc-large: %ld replacements of 5-25 MiB blocks in %.3f s, %.2f ms each, "
               "peak rss %ld KiB\n", ops, el, el * 1e3 / (double)ops, peak_rss_kib());
    return 0;
}
