/*
 * smpbench_common.c - the measurement registry and the benchmark helpers
 * shared by smpbench's units.
 */
#include "smpbench.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const struct meas_info meas_info[M_COUNT] = {
    [M_WALL]    = { "wall_time",        UNIT_NS },
    [M_RSS]     = { "peak_rss",         UNIT_BYTES },
    [M_CPU]     = { "cpu_time",         UNIT_NS },
    [M_USER]    = { "user_time",        UNIT_NS },
    [M_SYS]     = { "sys_time",         UNIT_NS },
    [M_FAULTS]  = { "page_faults",      UNIT_COUNT },
    [M_CTXSW]   = { "ctx_switches",     UNIT_COUNT },
    [M_CYCLES]  = { "cpu_cycles",       UNIT_COUNT },
    [M_INSNS]   = { "instructions",     UNIT_COUNT },
    [M_CREFS]   = { "cache_references", UNIT_COUNT },
    [M_CMISSES] = { "cache_misses",     UNIT_COUNT },
    [M_BMISSES] = { "branch_misses",    UNIT_COUNT },
};

const enum meas rows_hw[] = {
    M_WALL, M_RSS, M_CYCLES, M_INSNS, M_CREFS, M_CMISSES, M_BMISSES, M_COUNT
};
const enum meas rows_sw[] = {
    M_WALL, M_RSS, M_CPU, M_USER, M_SYS, M_FAULTS, M_CTXSW, M_COUNT
};

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("smpbench: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("smpbench: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static char *xvasprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

int bench_add_sample(struct bench *b, const double values[M_COUNT])
{
    if (b->nruns == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        for (int m = 0; m < M_COUNT; m++)
            b->samples[m] = xrealloc(b->samples[m], cap * sizeof(double));
        b->cap = cap;
    }
    for (int m = 0; m < M_COUNT; m++)
        b->samples[m][b->nruns] = values[m];
    b->nruns++;
    return 0;
}

void bench_summarize(struct bench *b, int have_hw)
{
    for (int m = 0; m < M_COUNT; m++) {
        memset(&b->sum[m], 0, sizeof b->sum[m]);
        if (b->nruns && (have_hw || m < M_FIRST_HW))
            stats_summarize(b->samples[m], b->nruns, &b->sum[m]);
    }
}

void bench_fail(struct bench *b, const char *fmt, ...)
{
    if (b->failure)     /* keep the first reason */
        return;
    va_list ap;
    va_start(ap, fmt);
    b->failure = xvasprintf(fmt, ap);
    va_end(ap);
}

const char *bench_name(const struct bench *b)
{
    if (b->name)
        return b->name;
    return b->alloc ? b->alloc : b->cmdline;
}

void report_pick_baseline(struct report *r)
{
    r->baseline = -1;
    for (size_t i = 0; i < r->nbench; i++)
        if (!r->benches[i].failure && r->benches[i].nruns) {
            r->baseline = (int)i;
            return;
        }
}
