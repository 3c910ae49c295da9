/*
 * stats.h - the statistics smpbench prints: per-measurement summaries and
 * the delta of one benchmark's mean against a baseline.
 *
 * Kept free of I/O and of smpbench's data structures so that the unit test
 * (tests/tools/smpbench_stats.c) can check every number against values computed
 * independently with python3's statistics module.
 */
#ifndef SMPBENCH_STATS_H
#define SMPBENCH_STATS_H

#include <stddef.h>

/* Summary of one measurement over a benchmark's runs. */
struct summary {
    size_t n;           /* number of samples */
    double mean;
    double sd;          /* sample standard deviation (n - 1); 0 when n < 2 */
    double min, max;
    double q1, median, q3;  /* quartiles, linear interpolation (see below) */
    size_t outliers;    /* samples outside Tukey's fences */
};

/* Delta of a benchmark's mean against the baseline's, in percent. */
struct delta {
    double pct;         /* (mean - base_mean) / base_mean * 100 */
    double half;        /* half-width of its 95 % interval, in percent */
    int verdict;        /* -1 significantly lower, +1 higher, 0 neither */
    int defined;        /* 0 when the baseline mean is 0 (no percentage) */
};

/*
 * Quantile p (0..1) of n sorted values, interpolating linearly between the
 * closest ranks: position (n - 1) * p.  This is R's type 7, numpy's default
 * and python's statistics.quantiles(method='inclusive'); unlike the
 * "exclusive" method it never extrapolates, which matters with the 3 runs
 * smpbench may take of a slow command.
 */
double stats_quantile(const double *sorted, size_t n, double p);

/*
 * Summarise n values (n >= 1).  The values are copied and sorted internally;
 * the caller's array is left as it was (it holds runs in execution order).
 * Outliers are counted with Tukey's fences: below Q1 - 1.5 IQR or above
 * Q3 + 1.5 IQR.  Returns 0, or -1 when n is 0 or memory runs out.
 */
int stats_summarize(const double *values, size_t n, struct summary *out);

/*
 * Two-sided 95 % critical value of Student's t with df degrees of freedom
 * (the 0.975 quantile), computed from the t distribution itself rather than
 * read from a table, so every df is exact to ~1e-9.  df must be >= 1.
 */
double stats_t975(double df);

/*
 * The delta of `s` against the baseline `base`, as poop computes it: the
 * difference of means relative to the baseline mean, with a 95 % interval
 * from the pooled-variance (Student's) two-sample t test,
 *     sp   = sqrt(((n1-1) s1^2 + (n2-1) s2^2) / (n1 + n2 - 2))
 *     half = t(0.975, n1 + n2 - 2) * sp * sqrt(1/n1 + 1/n2) / base_mean.
 * A verdict is given only when the whole interval lies beyond `threshold`
 * percent (poop and smpbench use 1 %): small but certain differences are
 * not worth a lightning bolt.  With fewer than 3 samples in total there is
 * no interval; half is then infinite and the verdict 0.
 */
struct delta stats_delta(const struct summary *base, const struct summary *s,
                         double threshold);

#endif
