/*
 * cache-scratch: passive false sharing (the pattern of Hoard's
 * cache-scratch).
 *
 * The main thread allocates one small object (`objsize` bytes) per thread,
 * back to back, so several of them share a cache line, and hands object i
 * to thread i.  Each thread frees the object it was given, then
 * `iterations` times allocates an object of the same size, writes every
 * byte of it `writes` times, checks it and frees it.  An allocator that
 * hands a thread the memory another thread freed - here, a slot in a
 * cache line shared with the other threads' objects - makes the threads'
 * writes fight over that line.
 */
#include "suite_common.c"

static long iterations = 200000, writes = 100, objsize = 8;

static void *worker(void *arg)
{
    unsigned char *given = arg;
    free(given);
    for (long i = 0; i < iterations; i++) {
        volatile unsigned char *o = xmalloc((size_t)objsize);
        for (long k = 0; k < objsize; k++)
            o[k] = (unsigned char)k;
        for (long w = 0; w < writes; w++)
            for (long k = 0; k < objsize; k++)
                o[k] = (unsigned char)(o[k] + 1);
        for (long k = 0; k < objsize; k++)
            if (o[k] != (unsigned char)(k + writes))
                verify_failed("object %p byte %ld is %u, want %u", (void *)o, k,
                              o[k], (unsigned)(unsigned char)(k + writes));
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
    parse_args(argc, argv, "cache-scratch",
               "Passive false sharing: threads reuse objects freed from a shared line.",
               p, sizeof p / sizeof p[0]);
    if (threads < 1 || objsize < 1)
        die("bad parameters");
    pthread_t *t = xmalloc((size_t)threads * sizeof *t);
    unsigned char **objs = xmalloc((size_t)threads * sizeof *objs);
    for (long i = 0; i < threads; i++) {
        objs[i] = xmalloc((size_t)objsize);
        memset(objs[i], 0, (size_t)objsize);
    }
    double t0 = now_s();
    for (long i = 0; i < threads; i++)
        t[i] = spawn(worker, objs[i], 0, 0);
    for (long i = 0; i < threads; i++)
        join(t[i]);
    double el = now_s() - t0;
    free(objs);
    free(t);
    if (verbose)
        printf("cache-scratch: %ld threads x %ld iterations x %ld writes of %ld bytes in %.3f s\n",
               threads, iterations, writes, objsize, el);
    return 0;
}
