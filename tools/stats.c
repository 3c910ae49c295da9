/*
 * stats.c - summaries, Tukey outliers and the pooled-variance t interval
 * smpbench prints.  See stats.h for the definitions.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_quantile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double pos = (double)(n - 1) * p;
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

int stats_summarize(const double *values, size_t n, struct summary *out)
{
    if (n == 0)
        return -1;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    memcpy(v, values, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);

    /* Two passes for the variance: the textbook one-pass formula loses
     * every digit when the spread is tiny next to the mean, which is
     * exactly the case of instruction counts (274M +- 5K). */
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);

    memset(out, 0, sizeof *out);
    out->n = n;
    out->mean = mean;
    out->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    out->min = v[0];
    out->max = v[n - 1];
    out->q1 = stats_quantile(v, n, 0.25);
    out->median = stats_quantile(v, n, 0.5);
    out->q3 = stats_quantile(v, n, 0.75);

    double iqr = out->q3 - out->q1;
    double low = out->q1 - 1.5 * iqr, high = out->q3 + 1.5 * iqr;
    for (size_t i = 0; i < n; i++)
        if (v[i] < low || v[i] > high)
            out->outliers++;
    free(v);
    return 0;
}

/*
 * Continued fraction of the regularized incomplete beta function I_x(a, b),
 * evaluated with the modified Lentz method; converges quickly for
 * x < (a + 1) / (a + b + 2), the caller uses the symmetry otherwise.
 */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double f = 1, c = 1, d = 0;
    for (int m = 0; m < 1000; m++) {
        for (int odd = 1; odd >= 0; odd--) {
            double coef;
            if (odd) /* d_{2m+1} */
                coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
            else     /* d_{2m+2} */
                coef = (m + 1) * (b - m - 1) * x / ((a + 2 * m + 1) * (a + 2 * m + 2));
            d = 1 + coef * d;
            c = 1 + coef / c;
            if (fabs(d) < tiny) d = tiny;
            if (fabs(c) < tiny) c = tiny;
            d = 1 / d;
            double step = c * d;
            f *= step;
            if (fabs(step - 1) < 1e-15)
                return f;
        }
    }
    return f;
}

static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(a * log(x) + b * log1p(-x) -
                       (lgamma(a) + lgamma(b) - lgamma(a + b)));
    if (x < (a + 1) / (a + b + 2))
        return front / (a * beta_cf(a, b, x));
    return 1 - front / (b * beta_cf(b, a, 1 - x));
}

/* P(|T| > t) for Student's t with df degrees of freedom, t >= 0. */
static double t_two_tailed(double t, double df)
{
    return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double stats_t975(double df)
{
    /* Bisection on the two-tailed probability, which falls monotonically
     * from 1 at t = 0; 12.71 (df = 1) is the largest answer. */
    double lo = 0, hi = 16;
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
        double mid = (lo + hi) / 2;
        if (t_two_tailed(mid, df) > 0.05)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

struct delta stats_delta(const struct summary *base, const struct summary *s,
                         double threshold)
{
    struct delta d = { 0, INFINITY, 0, 0 };
    if (base->mean == 0)
        return d;
    d.defined = 1;
    d.pct = (s->mean - base->mean) / base->mean * 100;

    double n1 = (double)base->n, n2 = (double)s->n, df = n1 + n2 - 2;
    if (df >= 1) {
        double pooled = ((n1 - 1) * base->sd * base->sd +
                         (n2 - 1) * s->sd * s->sd) / df;
        d.half = stats_t975(df) * sqrt(pooled) * sqrt(1 / n1 + 1 / n2) /
                 fabs(base->mean) * 100;
    }
    if (d.pct - d.half >= threshold)
        d.verdict = 1;
    else if (d.pct + d.half <= -threshold)
        d.verdict = -1;
    return d;
}
