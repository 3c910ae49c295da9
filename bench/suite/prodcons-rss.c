/*
 * prodcons-rss: producers and consumers through one shared queue, in
 * bursts; reports peak and final RSS (for the memory issue: does memory
 * that consumer threads free go back to the producers, or to the OS?).
 *
 * `producers` threads each make `rounds` bursts of `burst` messages (sizes
 * log-uniform in [min, max] bytes), push them onto a shared queue (a
 * mutex-protected list of 256-pointer chunks) and then wait until the
 * queue is empty before the next burst; `consumers` threads pop, check and
 * free.  So the messages in flight swing between 0 and producers x burst.
 * -v prints the peak RSS (ru_maxrss) and the RSS after all threads have
 * finished and every message has been freed (/proc/self/statm).  The
 * count and key sum of the messages consumed are checked at the end.
 */
#include "suite_common.c"

#define CHUNK 256

struct chunk {
    struct chunk *next;
    int head, tail;
    void *p[CHUNK];
};

struct msghdr {
    uint64_t key;
    uint32_t n;
    uint32_t pad;
};

static long producers = -1, consumers = -1, rounds = 8, burst = 20000, lo = 64,
            hi = 4096, seed = 10;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t drained = PTHREAD_COND_INITIALIZER;
static struct chunk *qhead, *qtail;
static long queued, producing;
static uint64_t consumed_count, consumed_sum;

static void push(void *m) /* with mu held */
{
    if (!qtail || qtail->tail == CHUNK) {
        struct chunk *c = xmalloc(sizeof *c);
        c->next = NULL;
        c->head = c->tail = 0;
        if (qtail)
            qtail->next = c;
        else
            qhead = c;
        qtail = c;
    }
    qtail->p[qtail->tail++] = m;
    queued++;
}

static void *pop(void) /* with mu held, queued > 0 */
{
    struct chunk *c = qhead;
    void *m = c->p[c->head++];
    if (c->head == c->tail && (c->tail == CHUNK || c != qtail)) {
        qhead = c->next;
        if (!qhead)
            qtail = NULL;
        free(c);
    }
    queued--;
    return m;
}

static void *producer(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = seed_for((uint64_t)seed, id);
    uint64_t seq = 0;
    void *batch[64];
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < burst; i += 64) {
            int nb = burst - i < 64 ? (int)(burst - i) : 64;
            for (int k = 0; k < nb; k++) {
                size_t n = rnd_logsize(&rng, (size_t)lo, (size_t)hi);
                struct msghdr *h = xmalloc(n);
                h->key = ((uint64_t)id << 40) + seq++;
                h->n = (uint32_t)n;
                ((unsigned char *)h)[n - 1] = (unsigned char)mix64(h->key);
                batch[k] = h;
            }
            pthread_mutex_lock(&mu);
            for (int k = 0; k < nb; k++)
                push(batch[k]);
            pthread_cond_broadcast(&nonempty);
            pthread_mutex_unlock(&mu);
        }
        pthread_mutex_lock(&mu);
        while (queued > 0)
            pthread_cond_wait(&drained, &mu);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    producing--;
    pthread_cond_broadcast(&nonempty);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    uint64_t count = 0, sum = 0;
    void *batch[32];
    for (;;) {
        int nb = 0;
        pthread_mutex_lock(&mu);
        while (queued == 0 && producing > 0)
            pthread_cond_wait(&nonempty, &mu);
        if (queued == 0) {
            pthread_mutex_unlock(&mu);
            break;
        }
        while (queued > 0 && nb < 32)
            batch[nb++] = pop();
        if (queued == 0)
            pthread_cond_broadcast(&drained);
        pthread_mutex_unlock(&mu);
        for (int k = 0; k < nb; k++) {
            struct msghdr *h = batch[k];
            if (h->n < (uint32_t)lo || h->n > (uint32_t)hi ||
                ((unsigned char *)h)[h->n - 1] != (unsigned char)mix64(h->key))
                verify_failed("message %p (key %#" PRIx64 ") was overwritten",
                              (void *)h, h->key);
            count++;
            sum += mix64(h->key);
            free(h);
        }
    }
    pthread_mutex_lock(&mu);
    consumed_count += count;
    consumed_sum += sum;
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char **argv)
{
    struct param p[] = {
        { "producers", &producers, "producer threads (default: one per CPU)" },
        { "consumers", &consumers, "consumer threads (default: one per CPU)" },
        { "rounds", &rounds, "bursts per producer" },
        { "burst", &burst, "messages per burst" },
        { "min", &lo, "smallest message, bytes (>= 16)" },
        { "max", &hi, "largest message, bytes" },
        { "seed", &seed, "PRNG seed" },
    };
    parse_args(argc, argv, "prodcons-rss",
               "Bursty producers/consumers; reports peak and final RSS.",
               p, sizeof p / sizeof p[0]);
    if (producers < 1 || consumers < 1 || lo < 16 || hi < lo || hi > 0x7fffffff)
        die("bad parameters");
    long rss0 = rss_kib();
    producing = producers;
    pthread_t *t = xmalloc((size_t)(producers + consumers) * sizeof *t);
    double t0 = now_s();
    for (long i = 0; i < consumers; i++)
        t[i] = spawn(consumer, NULL, 0, 0);
    for (long i = 0; i < producers; i++)
        t[consumers + i] = spawn(producer, (void *)(uintptr_t)i, 0, 0);
    for (long i = 0; i < producers + consumers; i++)
        join(t[i]);
    double el = now_s() - t0;
    free(t);
    if (qhead) { /* the last, emptied chunk */
        free(qhead);
        qhead = qtail = NULL;
    }
    long rss_final = rss_kib();

    uint64_t want_count = 0, want_sum = 0;
    for (long i = 0; i < producers; i++)
        for (uint64_t s = 0; s < (uint64_t)(rounds * burst); s++) {
            want_count++;
            want_sum += mix64(((uint64_t)i << 40) + s);
        }
    if (consumed_count != want_count || consumed_sum != want_sum)
        verify_failed("consumed %" PRIu64 " messages (key sum %#" PRIx64 "), "
                      "produced %" PRIu64 " (key sum %#" PRIx64 ")",
                      consumed_count, consumed_sum, want_count, want_sum);
    if (verbose)
        printf("prodcons-rss: %ld producers, %ld consumers, %" PRIu64 " messages in "
               "%.3f s; rss start %ld KiB, peak %ld KiB, final %ld KiB\n",
               producers, consumers, want_count, el, rss0, peak_rss_kib(), rss_final);
    return 0;
}
