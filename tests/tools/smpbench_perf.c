/*
 * smpbench_perf.c - a helper of t_smpbench_perf.sh: 4 threads each map
 * 1 MiB and write every page of it, so the process takes at least
 * 4 * 256 page faults in threads other than the main one.  A counter that
 * is not inherited by the threads sees only the main thread's few.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define THREADS 4
#define BYTES (1 << 20)

static void *touch(void *arg)
{
    (void)arg;
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return (void *)1;
    for (long i = 0; i < BYTES; i += page)
        p[i] = 1;
    munmap(p, BYTES);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, touch, NULL) != 0)
            return 1;
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    return bad;
}
