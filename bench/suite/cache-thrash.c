/*
 * cache-thrash: active false sharing (the pattern of Hoard's cache-thrash).
 *
 * Every thread, `iterations` times, allocates a small object (`objsize`
 * bytes), writes every byte of it `writes` times, checks it and frees it.
 * The threads start together; an allocator that hands objects in the same
 * cache line to different threads makes their writes fight over that line.
 */
#include "suite_common.c"

static long iterations = 200000, writes = 100, objsize = 8;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < iterations; i++) {
        volatile unsigned char *o = xmalloc((size_t)objsize);
        for (long k = 0; k < objsize; k++)
            o[k] = (unsigned char)(k * 3);
        for (long w = 0; w < writes; w++)
            for (long k = 0; k < objsize; k++)
                o[k] = (unsigned char)(o[k] + 1);
        for (long k = 0; k < objsize; k++)
            if (o[k] != (unsigned char)(k * 3 + writes))
                verify_failed("object %p byte %ld is %u, want %u", (void *)o, k,
                              o[k], (unsigned)(unsigned char)(k * 3 + writes));
        free((void *)o);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = -1;
    struct param p[] = {
        { "threads", &threads, "threads (default: one per CPU)" },
        { "iterations", &iterations, "allocate/write/free cycles per thread" },
        { "writes", &writes, "passes writing every byte of an object" },
        { "objsize", &objsize, "object size, bytes" },
    };
    parse_args(argc, argv, "cache-thrash",
               "Active false sharing: threads' own small objects in shared lines.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || objsize < 1)
        die("bad parameters");
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    double t0 = now_s();
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, NULL, 0, 0);
    for (long i = 0; i < threads; i++)
        join(t[i]);
    double el = now_s() - t0;
    free(t);
    pthread_barrier_destroy(&start);
    if (verbose)
        printf("cache-thrash: %ld threads x %ld iterations x %ld writes of %ld bytes in %.3f s\n",
               threads, iterations, writes, objsize, el);
    return 0;
}
