/*
 * xmalloc-test: pure producer/consumer pairs (the pattern of xmalloc-test):
 * one thread of each pair only allocates, the other only frees.
 *
 * Each of `pairs` producers allocates `blocks` blocks of random size in
 * [min, max], tags them and passes them in batches of `batch` through a
 * bounded single-producer single-consumer ring (`ring` batches) to its
 * consumer, which checks and frees them.  A thread that finds the ring full
 * (or empty) waits on a futex-free condition variable, so the workload itself
 * does not spin.
 */
#include "suite_common.c"

struct msg {
    void *p;
    uint32_t n;
    uint32_t seq;
};

struct pair {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct msg **ring; /* ring of batches */
    long head, tail;   /* produced, consumed (batches) */
    long index;
    char pad[64];
};

static long blocks = 2000000, batch = 64, ring = 64, lo = 8, hi = 512, seed = 4;

static uint64_t key_of(long pair, uint64_t seq)
{
    return ((uint64_t)pair << 44) ^ seq;
}

static void *producer(void *arg)
{
    struct pair *q = arg;
    uint64_t rng = seed_for((uint64_t)seed, (uint64_t)q->index);
    long nb = (blocks + batch - 1) / batch;
    uint32_t seq = 0;
    for (long b = 0; b < nb; b++) {
        struct msg *m = xmalloc((size_t)batch * sizeof *m);
        for (long i = 0; i < batch; i++, seq++) {
            m[i].n = (uint32_t)rnd_range(&rng, (size_t)lo, (size_t)hi);
            m[i].seq = seq;
            m[i].p = xmalloc(m[i].n);
            tag_set(m[i].p, m[i].n, key_of(q->index, seq));
        }
        pthread_mutex_lock(&q->mu);
        while (q->head - q->tail == ring)
            pthread_cond_wait(&q->cv, &q->mu);
        q->ring[q->head % ring] = m;
        q->head++;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct pair *q = arg;
    long nb = (blocks + batch - 1) / batch;
    uint32_t want = 0;
    for (long b = 0; b < nb; b++) {
        pthread_mutex_lock(&q->mu);
        while (q->head == q->tail)
            pthread_cond_wait(&q->cv, &q->mu);
        struct msg *m = q->ring[q->tail % ring];
        q->tail++;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
        for (long i = 0; i < batch; i++, want++) {
            if (m[i].seq != want)
                verify_failed("pair %ld: message %u arrived as %u", q->index,
                              want, m[i].seq);
            tag_check(m[i].p, m[i].n, key_of(q->index, m[i].seq), "xmalloc-test");
            free(m[i].p);
        }
        free(m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long pairs = 0;
    struct param p[] = {
        { "pairs", &pairs, "producer/consumer pairs (0: one per 2 CPUs, min 1)" },
        { "blocks", &blocks, "blocks per producer" },
        { "batch", &batch, "blocks per batch handed over" },
        { "ring", &ring, "batches in flight per pair, at most" },
        { "min", &lo, "smallest block, bytes" },
        { "max", &hi, "largest block, bytes" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "xmalloc-test",
               "Pure producer/consumer pairs: one thread allocates, one frees.",
               p, sizeof p / sizeof p[0]);
    if (pairs == 0)
        pairs = ncpu() / 2 ? (long)ncpu() / 2 : 1;
    if (batch < 1 || ring < 1 || lo < 1 || hi < lo)
        die("bad parameters");
    blocks = (blocks + batch - 1) / batch * batch;

    struct pair *q = xmalloc((size_t)pairs * sizeof *q);
    pthread_t *t = xmalloc((size_t)pairs * 2 * sizeof *t);
    double t0 = now_s();
    for (long i = 0; i < pairs; i++) {
        pthread_mutex_init(&q[i].mu, NULL);
        pthread_cond_init(&q[i].cv, NULL);
        q[i].ring = xmalloc((size_t)ring * sizeof *q[i].ring);
        q[i].head = q[i].tail = 0;
        q[i].index = i;
        t[2 * i] = spawn(producer, &q[i], 0, 0);
        t[2 * i + 1] = spawn(consumer, &q[i], 0, 0);
    }
    for (long i = 0; i < 2 * pairs; i++)
        join(t[i]);
    double el = now_s() - t0;
    for (long i = 0; i < pairs; i++)
        free(q[i].ring);
    free(t);
    free(q);
    if (verbose)
        printf("xmalloc-test: %ld pairs x %ld blocks in %.3f s, %.2f M blocks/s\n",
               pairs, blocks, el, (double)pairs * (double)blocks / el / 1e6);
    return 0;
}
