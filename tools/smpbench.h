/*
 * smpbench.h - the data model shared by smpbench's units: the measurements
 * it records and the benchmarks (command x allocator) it compares.
 *
 *   smpbench.c        options, allocator discovery, the interleaved schedule
 *   smpbench_run.c    one run: fork/exec/wait4, the perf counters, and the
 *                     launcher process that does the runs
 *   smpbench_table.c  the poop-style table
 *   smpbench_io.c     CSV / JSON / SVG output and reading CSV back
 *   stats.c           the statistics
 */
#ifndef SMPBENCH_H
#define SMPBENCH_H

#include <stddef.h>
#include <stdio.h>

#include "stats.h"

enum unit { UNIT_NS, UNIT_BYTES, UNIT_COUNT };

/* Every measurement smpbench can record, in the order of the CSV columns.
 * The rusage ones are always recorded; the hardware ones only when the
 * kernel grants perf counters. */
enum meas {
    M_WALL, M_RSS,
    M_CPU, M_USER, M_SYS, M_FAULTS, M_CTXSW,                /* rusage */
    M_CYCLES, M_INSNS, M_CREFS, M_CMISSES, M_BMISSES,       /* perf */
    M_COUNT
};
#define M_FIRST_HW M_CYCLES

struct meas_info {
    const char *name;
    enum unit unit;
};
extern const struct meas_info meas_info[M_COUNT];

/* The rows of the table: poop's set when hardware counters work, the
 * rusage-based set otherwise.  Terminated by M_COUNT. */
extern const enum meas rows_hw[], rows_sw[];

/* One benchmark: a command run under one allocator (or as it is). */
struct bench {
    int index;              /* 1-based, as printed */
    char *alloc;            /* allocator name; NULL: environment untouched */
    char *name;             /* name in summary lines; NULL: alloc or cmdline */
    char *preload;          /* LD_PRELOAD value; NULL: none */
    char **argv;            /* the command (NULL in recorded-sample mode) */
    char *cmdline;          /* the command as displayed */
    char *failure;          /* NULL, or why the benchmark failed */
    size_t nruns, cap;
    double *samples[M_COUNT];   /* samples[m][run], in execution order */
    struct summary sum[M_COUNT];
};

/* Append one run's values (all M_COUNT of them); 0 or -1 (no memory). */
int bench_add_sample(struct bench *b, const double values[M_COUNT]);
/* Compute sum[] from the samples (benchmarks with runs only). */
void bench_summarize(struct bench *b, int have_hw);
/* Record why a benchmark failed (formatted like printf). */
void bench_fail(struct bench *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The whole comparison, as printed or written. */
struct report {
    struct bench *benches;
    size_t nbench;
    int have_hw;            /* hardware counters recorded */
    int baseline;           /* index into benches of the delta baseline, -1 */
};

/* The benchmark's name in summary lines and charts. */
const char *bench_name(const struct bench *b);
/* Pick the baseline (first successful benchmark). */
void report_pick_baseline(struct report *r);

/* Small helpers shared by the units. */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
