/*
 * glibc-simple: single-threaded churn of small blocks, freed in LIFO and in
 * FIFO order (the pattern of glibc's bench-malloc-simple).
 *
 * Each round walks the size list 16, 24, 32, 48, 64, 96, 128, 256, 512
 * bytes; for each size it allocates `blocks` blocks, tags them, and frees
 * them all, newest first (LIFO) on even rounds and oldest first (FIFO) on
 * odd rounds; every `mixed`-th round frees them in a random order instead.
 */
#include "suite_common.c"

static const size_t sizes[] = { 16, 24, 32, 48, 64, 96, 128, 256, 512 };

int main(int argc, char **argv)
{
    long rounds = 300, blocks = 2000, mixed = 8, seed = 1;
    struct param p[] = {
        { "rounds", &rounds, "rounds over the size list" },
        { "blocks", &blocks, "blocks allocated per size per round" },
        { "mixed", &mixed, "every Nth round frees in random order (0: never)" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "glibc-simple",
               "Single-threaded small-block churn, LIFO and FIFO frees.",
               p, sizeof p / sizeof p[0]);
    if (blocks < 1)
        die("blocks must be >= 1");

    uint64_t rng = seed_for((uint64_t)seed, 0);
    void **v = xmalloc((size_t)blocks * sizeof *v);
    size_t *order = xmalloc((size_t)blocks * sizeof *order);
    uint64_t ops = 0;
    double t0 = now_s();

    for (long r = 0; r < rounds; r++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            uint64_t base = ((uint64_t)r << 40) ^ ((uint64_t)s << 32);
            for (long i = 0; i < blocks; i++) {
                v[i] = xmalloc(n);
                tag_set(v[i], n, base + (uint64_t)i);
            }
            int random = mixed > 0 && r % mixed == mixed - 1;
            for (long i = 0; i < blocks; i++)
                order[i] = (size_t)i;
            if (random) {
                for (long i = blocks - 1; i > 0; i--) {
                    size_t j = (size_t)(rnd(&rng) % (uint64_t)(i + 1));
                    size_t t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
            } else if (r % 2 == 0) {
                for (long i = 0; i < blocks; i++)
                    order[i] = (size_t)(blocks - 1 - i);
            }
            for (long i = 0; i < blocks; i++) {
                size_t k = order[i];
                tag_check(v[k], n, base + (uint64_t)k, "glibc-simple");
                free(v[k]);
            }
            ops += (uint64_t)blocks;
        }
    }
    double t = now_s() - t0;
    free(order);
    free(v);
    if (verbose)
        printf("glibc-simple: %" PRIu64 " malloc/free pairs in %.3f s, %.1f ns/pair\n",
               ops, t, t * 1e9 / (double)ops);
    return 0;
}
