/*
 * bench/suite/badmalloc.c - a deliberately broken allocator, for testing
 * that the suite's workloads catch one (tests/tools/t_bench_suite.sh).  Not a
 * workload: it is built as BUILD/suite/badmalloc.so and preloaded.
 *
 * It wraps glibc's malloc (__libc_malloc and friends) and, once per thread,
 * after that thread's BADMALLOC_AFTER-th malloc or realloc (default 100):
 *   - malloc(n) returns the block this thread's previous malloc returned,
 *     when that block is still live and at least n bytes: two live blocks
 *     overlap, as with an allocator that hands out a block twice.  The
 *     first free of such a pointer is swallowed, so that the workload's own
 *     check, not glibc's double-free abort, is what reports it;
 *   - realloc(p, n) of a live block p flips a bit in the first byte of the
 *     block it returns (old data), as with an allocator that scribbles on a
 *     block when it moves it.
 * Everything else is glibc's.  Deterministic for a deterministic program.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

#define TLS static __thread __attribute__((tls_model("initial-exec")))
TLS unsigned long count;
TLS int fired_malloc, fired_realloc;
TLS void *last_p;
TLS size_t last_n;

#define NALIAS 4096
static void *_Atomic aliased[NALIAS];
static atomic_int nalias; /* entries in use: free skips the scan at 0 */

static unsigned long after(void)
{
    static _Atomic long cached = -1;
    long v = atomic_load(&cached);
    if (v < 0) {
        const char *s = getenv("BADMALLOC_AFTER");
        char *end;
        v = s && *s ? strtol(s, &end, 10) : 100;
        if (v < 0 || (s && *s && *end))
            v = 100;
        atomic_store(&cached, v);
    }
    return (unsigned long)v;
}

void *malloc(size_t n)
{
    count++;
    if (!fired_malloc && count > after() && last_p && last_n >= n) {
        for (int i = 0; i < NALIAS; i++) {
            void *expect = NULL;
            if (atomic_compare_exchange_strong(&aliased[i], &expect, last_p)) {
                atomic_fetch_add(&nalias, 1);
                fired_malloc = 1;
                return last_p; /* still live: now handed out twice */
            }
        }
    }
    void *p = __libc_malloc(n);
    last_p = p;
    last_n = n;
    return p;
}

void free(void *p)
{
    if (!p)
        return;
    if (p == last_p)
        last_p = NULL;
    for (int i = 0; atomic_load(&nalias) > 0 && i < NALIAS; i++) {
        void *expect = p;
        if (atomic_load_explicit(&aliased[i], memory_order_relaxed) == p &&
            atomic_compare_exchange_strong(&aliased[i], &expect, NULL)) {
            atomic_fetch_sub(&nalias, 1);
            return; /* the first of the two frees */
        }
    }
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    count++;
    if (p && p == last_p)
        last_p = NULL;
    void *r = __libc_realloc(p, n);
    if (r && p && n > 0 && !fired_realloc && count > after()) {
        fired_realloc = 1;
        *(unsigned char *)r ^= 0x40;
    }
    return r;
}
