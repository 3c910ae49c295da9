/*
 * bench/suite/suite_common.c - helpers shared by the suite's workloads.
 *
 * Not a program: every workload #includes this file (one translation unit
 * per workload, so the helpers stay static and the build stays one gcc call
 * per program).  The workloads use plain malloc/free/realloc; the allocator
 * under test is chosen with LD_PRELOAD.
 *
 * What is here:
 *   - options: every workload takes -v (print a report), -h (its parameters)
 *     and NAME=VALUE for each of its integer parameters;
 *   - a fixed-seed PRNG (xorshift64*) and a few size distributions;
 *   - block tags: a block's first 8 bytes (fewer for smaller blocks) and its
 *     last byte hold values derived from a per-block key; they are written
 *     after malloc and checked before free, so an allocator that hands out
 *     overlapping blocks or scribbles on live ones is caught (exit 3);
 *   - RSS from /proc/self/statm, peak RSS (VmHWM), CPU time, clocks;
 *   - thread creation with a small stack;
 *   - a watchdog: every workload dies of SIGALRM after 20 s
 *     (SMP_SUITE_ALARM=seconds, 0 for none).
 *
 * Exit status of every workload: 0 success, 2 usage or resource error
 * (malloc returned NULL, thread creation failed), 3 verification failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Not every workload uses every helper. */
#define SUITE_HELPER static __attribute__((unused))

/* ---- options ------------------------------------------------------------ */

struct param {
    const char *name;
    long *value;
    const char *help;
};

static int verbose;
static const char *wl_name = "workload";

SUITE_HELPER unsigned ncpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static void usage(const char *what, const struct param *p, size_t np, FILE *f)
{
    fprintf(f, "usage: %s [-v] [NAME=VALUE ...]\n%s\n\nparameters (default):\n",
            wl_name, what);
    for (size_t i = 0; i < np; i++)
        fprintf(f, "  %-10s %-52s (%ld)\n", p[i].name, p[i].help, *p[i].value);
    fprintf(f, "\n-v prints a report; exit 0 ok, 2 usage/resource error, "
               "3 verification failed.\n");
}

/* Parses argv; a parameter whose default is given as -1 means "one per CPU"
 * and is resolved here. */
static void parse_args(int argc, char **argv, const char *name, const char *what,
                       struct param *p, size_t np)
{
    wl_name = name;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-v") == 0) {
            verbose = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(what, p, np, stdout);
            exit(0);
        }
        const char *eq = strchr(a, '=');
        size_t k = np;
        if (eq) {
            for (k = 0; k < np; k++)
                if (strlen(p[k].name) == (size_t)(eq - a) &&
                    strncmp(p[k].name, a, (size_t)(eq - a)) == 0)
                    break;
        }
        if (k == np) {
            fprintf(stderr, "%s: unknown argument '%s'\n", name, a);
            usage(what, p, np, stderr);
            exit(2);
        }
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 0);
        if (errno || end == eq + 1 || *end || v < 0) {
            fprintf(stderr, "%s: bad value in '%s'\n", name, a);
            exit(2);
        }
        *p[k].value = v;
    }
    for (size_t k = 0; k < np; k++)
        if (*p[k].value == -1)
            *p[k].value = (long)ncpu();
    /* Watchdog: a run that hangs (an allocator deadlock) dies of SIGALRM
     * after SMP_SUITE_ALARM seconds (default 20; 0: none), so that smpbench
     * records that allocator as failed and goes on with the others. */
    const char *al = getenv("SMP_SUITE_ALARM");
    long secs = al && *al ? strtol(al, NULL, 10) : 20;
    if (secs > 0)
        alarm((unsigned)secs);
}

/* ---- errors ------------------------------------------------------------- */

__attribute__((noreturn, format(printf, 1, 2)))
static void verify_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: verify failed: ", wl_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(3);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", wl_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    _exit(2);
}

SUITE_HELPER void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        die("malloc(%zu) returned NULL", n);
    return p;
}

SUITE_HELPER void *xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n);
    if (!p)
        die("realloc(%zu) returned NULL", n);
    return p;
}

/* ---- PRNG --------------------------------------------------------------- */

/* xorshift64* (Vigna); the state must not be 0. */
static inline uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A well-mixed non-zero seed for stream `i` of a run with base seed `base`. */
static inline uint64_t seed_for(uint64_t base, uint64_t i)
{
    uint64_t z = base + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return z ? z : 0x853c49e6748fea9bULL;
}

/* Uniform in [lo, hi]. */
static inline size_t rnd_range(uint64_t *s, size_t lo, size_t hi)
{
    return lo + (size_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

/* Log-uniform in [lo, hi] (every power-of-two range equally likely). */
static inline size_t rnd_logsize(uint64_t *s, size_t lo, size_t hi)
{
    unsigned blo = 63 - (unsigned)__builtin_clzll(lo);
    unsigned bhi = 63 - (unsigned)__builtin_clzll(hi);
    unsigned b = blo + (unsigned)(rnd(s) % (bhi - blo + 1));
    size_t base = (size_t)1 << b;
    size_t n = base + (size_t)(rnd(s) % base);
    if (n < lo)
        n = lo;
    if (n > hi)
        n = hi;
    return n;
}

/* ---- block tags ----------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdULL;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ULL;
    z ^= z >> 33;
    return z;
}

/* Marks block p of n >= 1 bytes with key: the first min(n, 8) bytes and,
 * for blocks over 8 bytes, the last byte. */
static inline void tag_set(void *p, size_t n, uint64_t key)
{
    uint64_t t = mix64(key);
    unsigned char *b = p;
    memcpy(b, &t, n < 8 ? n : 8);
    if (n > 8)
        b[n - 1] = (unsigned char)(t >> 56) ^ 0x5a;
}

static inline void tag_check(const void *p, size_t n, uint64_t key, const char *what)
{
    uint64_t t = mix64(key);
    const unsigned char *b = p;
    int bad = memcmp(b, &t, n < 8 ? n : 8) != 0;
    if (n > 8)
        bad |= b[n - 1] != ((unsigned char)(t >> 56) ^ 0x5a);
    if (bad)
        verify_failed("block %p (%zu bytes, key %#" PRIx64 ") was overwritten (%s)",
                      p, n, key, what);
}

/* ---- time, memory ----------------------------------------------------------- */

SUITE_HELPER double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

SUITE_HELPER double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

SUITE_HELPER void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Resident set size now, KiB, from /proc/self/statm (second field, pages).
 * Read with read(2) into a stack buffer: no stdio, no malloc. */
SUITE_HELPER long rss_kib(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", 0);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *s = strchr(buf, ' ');
    if (!s)
        return -1;
    return strtol(s + 1, NULL, 10) * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Peak RSS so far, KiB (getrusage ru_maxrss). */
SUITE_HELPER long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- threads ---------------------------------------------------------------- */

SUITE_HELPER pthread_t spawn(void *(*fn)(void *), void *arg, size_t stack, int detached)
{
    pthread_attr_t at;
    pthread_t t;
    pthread_attr_init(&at);
    if (stack)
        pthread_attr_setstacksize(&at, stack);
    if (detached)
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &at, fn, arg);
    pthread_attr_destroy(&at);
    if (e)
        die("pthread_create: %s", strerror(e));
    return t;
}

SUITE_HELPER void join(pthread_t t)
{
    int e = pthread_join(t, NULL);
    if (e)
        die("pthread_join: %s", strerror(e));
}
